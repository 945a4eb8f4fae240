//! JSON text exactly as Go's `encoding/json` `Marshal` writes it (what Fleet hashes): no spaces, `<`, `>`, `&`,
//! U+2028 and U+2029 escaped as `\u003c`…, control characters as `\n`/`\t`/… or `\u00XX`, floats in Go's
//! shortest form. [`to_json_go`] writes object members in the order given (a Go struct's field order);
//! [`to_json_go_sorted`] sorts them, as Go does for maps. [`to_json_go_styled`] adds the variants Sprig's `toRawJson`
//! and `toPrettyJson` use: no HTML escaping (`Encoder.SetEscapeHTML(false)`), and `json.MarshalIndent`'s layout.

use serde_json::Value;

use crate::gofmt;

/// Encodes `value` as Go's `json.Marshal` would.
pub fn to_json_go(value: &Value) -> String {
    to_json_go_styled(value, Style::default())
}

/// Encodes `value` as Go's `json.Marshal` encodes a decoded `interface{}`: every object is a Go map, so its
/// members come sorted by key.
pub fn to_json_go_sorted(value: &Value) -> String {
    to_json_go_styled(
        value,
        Style {
            sorted: true,
            ..Style::default()
        },
    )
}

/// How Go writes the JSON: the default is `json.Marshal` with members in the order given.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// Escape `<`, `>` and `&` (`json.Marshal`; an `Encoder` with `SetEscapeHTML(false)` does not).
    pub escape_html: bool,
    /// `json.MarshalIndent(v, "", "  ")`: one member or item per line, two spaces per level, `": "` after keys.
    pub indent: bool,
    /// Object members sorted by key (Go maps) rather than in the order given (Go structs).
    pub sorted: bool,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            escape_html: true,
            indent: false,
            sorted: false,
        }
    }
}

/// Encodes `value` as Go's `encoding/json` would in the given style.
pub fn to_json_go_styled(value: &Value, style: Style) -> String {
    let mut out = String::new();
    write_value(&mut out, value, style, 0);
    out
}

/// A line break and indentation for `level` in the indented style.
fn newline(out: &mut String, style: Style, level: usize) {
    if style.indent {
        out.push('\n');
        for _ in 0..level {
            out.push_str("  ");
        }
    }
}

fn write_value(out: &mut String, value: &Value, style: Style, level: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match n.as_f64().filter(|_| n.is_f64()) {
            Some(f) => out.push_str(&gofmt::json_float(f)),
            None => out.push_str(&n.to_string()),
        },
        Value::String(s) => write_string_escaping(out, s, style.escape_html),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, style, level + 1);
                write_value(out, item, style, level + 1);
            }
            if !items.is_empty() {
                newline(out, style, level);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            if style.sorted {
                members.sort_by(|a, b| a.0.cmp(b.0));
            }
            out.push('{');
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, style, level + 1);
                write_string_escaping(out, k, style.escape_html);
                out.push_str(if style.indent { ": " } else { ":" });
                write_value(out, v, style, level + 1);
            }
            if !members.is_empty() {
                newline(out, style, level);
            }
            out.push('}');
        }
    }
}

/// A JSON string with Go's HTML-safe escaping.
pub fn write_string(out: &mut String, s: &str) {
    write_string_escaping(out, s, true);
}

/// A JSON string as Go writes it, escaping `<`, `>` and `&` only when `escape_html` is set. Runs of bytes that need
/// no escape are copied whole.
pub fn write_string_escaping(out: &mut String, s: &str, escape_html: bool) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let bytes = s.as_bytes();
    let mut run = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        // The bytes that may start an escape: ASCII quotes, backslash, controls, HTML characters, and the lead byte
        // of U+2028 and U+2029 (E2 80 A8/A9).
        let candidate = match b {
            b'"' | b'\\' | 0x00..=0x1f | 0xe2 => true,
            b'<' | b'>' | b'&' => escape_html,
            _ => false,
        };
        if !candidate {
            i += 1;
            continue;
        }
        let (escape, width): (&str, usize) = match b {
            b'"' => ("\\\"", 1),
            b'\\' => ("\\\\", 1),
            b'\n' => ("\\n", 1),
            b'\r' => ("\\r", 1),
            b'\t' => ("\\t", 1),
            0x08 => ("\\b", 1),
            0x0c => ("\\f", 1),
            0xe2 if bytes[i..].starts_with("\u{2028}".as_bytes()) => ("\\u2028", 3),
            0xe2 if bytes[i..].starts_with("\u{2029}".as_bytes()) => ("\\u2029", 3),
            0xe2 => {
                i += 1;
                continue;
            }
            _ => ("", 1),
        };
        out.push_str(&s[run..i]);
        if escape.is_empty() {
            // `<`, `>`, `&` and the other control characters: `\u00XX`.
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        } else {
            out.push_str(escape);
        }
        i += width;
        run = i;
    }
    out.push_str(&s[run..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The run-copying writer escapes exactly what a character-at-a-time writer of Go's rules escapes: every string
    /// of up to three characters from the ones that matter (and their UTF-8 neighbours), both HTML settings.
    #[test]
    fn run_copying_escapes_character_by_character() {
        fn reference(s: &str, html: bool) -> String {
            let mut out = String::from('"');
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    '\u{8}' => out.push_str("\\b"),
                    '\u{c}' => out.push_str("\\f"),
                    '<' | '>' | '&' if !html => out.push(c),
                    '<' | '>' | '&' | '\u{0}'..='\u{1f}' => {
                        out.push_str(&format!("\\u{:04x}", c as u32))
                    }
                    '\u{2028}' => out.push_str("\\u2028"),
                    '\u{2029}' => out.push_str("\\u2029"),
                    c => out.push(c),
                }
            }
            out.push('"');
            out
        }
        let alphabet = [
            'a', '"', '\\', '\n', '\u{1}', '\u{1f}', '<', '&', '\u{2028}', '\u{2029}', '\u{2027}',
            '\u{20ac}', 'é', '𝄞', ' ',
        ];
        let mut texts = vec![String::new()];
        for _ in 0..3 {
            let longer: Vec<String> = texts
                .iter()
                .flat_map(|t| alphabet.iter().map(move |c| format!("{t}{c}")))
                .collect();
            texts.extend(longer);
        }
        for t in &texts {
            for html in [true, false] {
                let mut out = String::new();
                write_string_escaping(&mut out, t, html);
                assert_eq!(out, reference(t, html), "{t:?}");
            }
        }
    }

    #[test]
    fn escapes_like_go() {
        let v = json!({"html": "<a href=\"x\">&</a>", "ctl": "\u{1}\u{8}\u{c}\n\r\t\u{1f}", "seps": "a\u{2028}b\u{2029}", "uni": "héllo ☺ 𝄞", "slash": "a/b\\c"});
        assert_eq!(
            to_json_go(&v),
            r#"{"html":"\u003ca href=\"x\"\u003e\u0026\u003c/a\u003e","ctl":"\u0001\b\f\n\r\t\u001f","seps":"a\u2028b\u2029","uni":"héllo ☺ 𝄞","slash":"a/b\\c"}"#
        );
    }

    #[test]
    fn numbers_and_structure_like_go() {
        let v = json!({"z": [1, -2, 1.5, 1e21, 1e-7, 1000000.0, 18446744073709551615u64], "a": null, "b": true, "e": {}, "l": []});
        assert_eq!(
            to_json_go(&v),
            r#"{"z":[1,-2,1.5,1e+21,1e-7,1000000,18446744073709551615],"a":null,"b":true,"e":{},"l":[]}"#
        );
    }

    #[test]
    fn sorted_encoding_orders_members_at_every_level_like_go_maps() {
        let v = json!({"b": "<&>\u{1}", "a": [1, true, null, {"y": 1, "x": 2}]});
        assert_eq!(
            to_json_go_sorted(&v),
            r#"{"a":[1,true,null,{"x":2,"y":1}],"b":"\u003c\u0026\u003e\u0001"}"#
        );
        assert_eq!(
            to_json_go(&v),
            r#"{"b":"\u003c\u0026\u003e\u0001","a":[1,true,null,{"y":1,"x":2}]}"#
        );
    }

    #[test]
    fn raw_and_indented_styles_like_go() {
        let v = json!({"b": ["<x>", {"y": 1, "x": {}}, []], "a": {"&": 1.5}, "e": {}});
        let raw = Style {
            escape_html: false,
            ..Style::default()
        };
        assert_eq!(
            to_json_go_styled(&v, raw),
            r#"{"b":["<x>",{"y":1,"x":{}},[]],"a":{"&":1.5},"e":{}}"#
        );
        let pretty = Style {
            indent: true,
            sorted: true,
            ..Style::default()
        };
        assert_eq!(
            to_json_go_styled(&v, pretty),
            "{\n  \"a\": {\n    \"\\u0026\": 1.5\n  },\n  \"b\": [\n    \"\\u003cx\\u003e\",\n    {\n      \"x\": {},\n      \"y\": 1\n    },\n    []\n  ],\n  \"e\": {}\n}"
        );
    }
}
