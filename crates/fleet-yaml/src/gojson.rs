//! JSON text exactly as Go's `encoding/json` `Marshal` writes it (what Fleet hashes): no spaces, `<`, `>`, `&`,
//! U+2028 and U+2029 escaped as `\u003c`…, control characters as `\n`/`\t`/… or `\u00XX`, floats in Go's
//! shortest form. Object members are written in the order given (Go sorts map keys; sort first if you need that).

use serde_json::Value;

use crate::gofmt;

/// Encodes `value` as Go's `json.Marshal` would.
pub fn to_json_go(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match n.as_f64().filter(|_| n.is_f64()) {
            Some(f) => out.push_str(&gofmt::json_float(f)),
            None => out.push_str(&n.to_string()),
        },
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_value(out, v);
            }
            out.push('}');
        }
    }
}

/// A JSON string with Go's HTML-safe escaping.
pub fn write_string(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{0}'..='\u{1f}' => {
                let b = c as u8;
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 0xf)]));
            }
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
}
