//! YAML output of the offline commands, in the style `fleet apply -o -` and `fleet test` print (go-yaml v2 via
//! `sigs.k8s.io/yaml`): keys sorted, block style, sequences not indented under their key, multi-line strings as
//! literal blocks, strings that would read back as another type double-quoted.
//! (To be replaced by `fleet_yaml::emit` once that emitter lands.)

use serde_json::Value;

/// Documents joined the way Fleet separates exported objects.
pub fn documents(values: &[Value]) -> String {
    values
        .iter()
        .map(to_yaml)
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// One document.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => write_map(&mut out, value, 0),
        Value::Array(items) if !items.is_empty() => write_seq(&mut out, items, 0),
        scalar => {
            write_scalar(&mut out, scalar, 0);
            out.push('\n');
        }
    }
    out
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

fn write_map(out: &mut String, value: &Value, indent: usize) {
    let Value::Object(map) = value else { return };
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    for key in keys {
        let child = &map[key];
        pad(out, indent);
        out.push_str(&plain_or_quoted(key));
        out.push(':');
        write_child(out, child, indent, indent + 2);
    }
}

/// Writes what follows `key:` or `-`: nested collections on the next lines, scalars inline.
fn write_child(out: &mut String, child: &Value, seq_indent: usize, map_indent: usize) {
    match child {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            write_map(out, child, map_indent);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            write_seq(out, items, seq_indent);
        }
        scalar => {
            out.push(' ');
            write_scalar(out, scalar, map_indent);
            out.push('\n');
        }
    }
}

fn write_seq(out: &mut String, items: &[Value], indent: usize) {
    for item in items {
        let nested = match item {
            Value::Object(map) if !map.is_empty() => Some(collection(item, indent + 2)),
            Value::Array(inner) if !inner.is_empty() => Some(collection(item, indent + 2)),
            _ => None,
        };
        pad(out, indent);
        out.push_str("- ");
        match nested {
            // The first line of a nested collection goes after the dash, in place of its indentation.
            Some(text) => out.push_str(&text[indent + 2..]),
            None => {
                write_scalar(out, item, indent + 2);
                out.push('\n');
            }
        }
    }
}

/// A non-empty map or sequence rendered at `indent`.
fn collection(value: &Value, indent: usize) -> String {
    let mut text = String::new();
    match value {
        Value::Array(items) => write_seq(&mut text, items, indent),
        _ => write_map(&mut text, value, indent),
    }
    text
}

fn write_scalar(out: &mut String, value: &Value, block_indent: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_string(out, s, block_indent),
        Value::Object(_) => out.push_str("{}"),
        Value::Array(_) => out.push_str("[]"),
    }
}

fn write_string(out: &mut String, s: &str, block_indent: usize) {
    if s.contains('\n') && literal_allowed(s) {
        let trimmed = s.trim_end_matches('\n');
        let trailing = s.len() - trimmed.len();
        out.push_str(match trailing {
            0 => "|-",
            1 => "|",
            _ => "|+",
        });
        let body = if trailing > 1 {
            &s[..s.len() - 1]
        } else {
            trimmed
        };
        for line in body.split('\n') {
            out.push('\n');
            if !line.is_empty() {
                pad(out, block_indent);
                out.push_str(line);
            }
        }
        return;
    }
    let text = plain_or_quoted(s);
    if text.starts_with('"') {
        out.push_str(&text);
    } else {
        write_folded(out, &text, block_indent);
    }
}

/// go-yaml's line width: plain and single-quoted scalars break at a single space once a line is past it.
const BEST_WIDTH: usize = 80;

/// Writes a plain or single-quoted scalar, folding long lines at single spaces as go-yaml v2 does.
fn write_folded(out: &mut String, text: &str, indent: usize) {
    let mut column = out.len() - out.rfind('\n').map_or(0, |i| i + 1);
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let lone_space =
            c == ' ' && i > 0 && chars[i - 1] != ' ' && chars.get(i + 1).is_some_and(|&n| n != ' ');
        if lone_space && column > BEST_WIDTH {
            out.push('\n');
            pad(out, indent);
            column = indent;
            continue;
        }
        out.push(c);
        column += 1;
    }
}

fn literal_allowed(s: &str) -> bool {
    !s.starts_with([' ', '\t'])
        && s.split('\n').all(|line| !line.ends_with([' ', '\t']))
        && s.chars().all(|c| c == '\n' || !c.is_control() || c == '\t')
}

/// The scalar as a plain string when YAML would read it back as this same string, else quoted.
fn plain_or_quoted(s: &str) -> String {
    if s.is_empty() || resolves_to_non_string(s) || s.chars().any(|c| c.is_control()) {
        return double_quoted(s);
    }
    if plain_allowed(s) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}

fn plain_allowed(s: &str) -> bool {
    let first = s.chars().next().unwrap_or(' ');
    let second = s.chars().nth(1);
    if "#,[]{}&*!|>'\"%@`".contains(first) {
        return false;
    }
    if "-?:".contains(first) && second.is_none_or(|c| c == ' ') {
        return false;
    }
    !(s.starts_with(' ')
        || s.ends_with(' ')
        || s.ends_with(':')
        || s.contains(": ")
        || s.contains(" #")
        || s.contains('\t'))
}

fn resolves_to_non_string(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false",
        "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "~", "null", "Null", "NULL",
        ".inf", ".Inf", ".INF", "-.inf", "-.Inf", "-.INF", "+.inf", ".nan", ".NaN", ".NAN", "<<",
        "=",
    ];
    if WORDS.contains(&s) {
        return true;
    }
    let body = s.strip_prefix(['-', '+']).unwrap_or(s).replace('_', "");
    if body.is_empty() {
        return false;
    }
    let is_int = body.chars().all(|c| c.is_ascii_digit())
        || body
            .strip_prefix("0x")
            .is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()))
        || body
            .strip_prefix("0b")
            .is_some_and(|b| !b.is_empty() && b.chars().all(|c| c == '0' || c == '1'))
        || body
            .strip_prefix("0o")
            .is_some_and(|o| !o.is_empty() && o.chars().all(|c| ('0'..='7').contains(&c)));
    let is_float = body.parse::<f64>().is_ok() && body.chars().any(|c| c.is_ascii_digit());
    let is_sexagesimal = body.contains(':')
        && body
            .split(':')
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit() || c == '.'));
    is_int || is_float || is_sexagesimal
}

fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn go_yaml_v2_layout() {
        let value = json!({
            "spec": {"resources": [{"name": "a.yaml", "content": "x: 1\ny: 2\n"}], "targets": [], "ignore": {}},
            "kind": "Bundle",
            "list": [["a", "b"], "c"],
        });
        assert_eq!(
            to_yaml(&value),
            "kind: Bundle\nlist:\n- - a\n  - b\n- c\nspec:\n  ignore: {}\n  resources:\n  - content: |\n      x: 1\n      y: 2\n    name: a.yaml\n  targets: []\n"
        );
    }

    #[test]
    fn quoting() {
        let cases = [
            ("plain", "plain"),
            ("", "\"\""),
            ("true", "\"true\""),
            ("on", "\"on\""),
            ("8080", "\"8080\""),
            ("1.5", "\"1.5\""),
            ("1e3", "\"1e3\""),
            ("*.example.com", "'*.example.com'"),
            ("a: b", "'a: b'"),
            ("- x", "'- x'"),
            ("it's", "it's"),
            ("v1.2.3", "v1.2.3"),
            ("100Mi", "100Mi"),
        ];
        for (input, expected) in cases {
            assert_eq!(plain_or_quoted(input), expected, "{input:?}");
        }
        assert_eq!(
            to_yaml(&json!({"a": "no newline\nat end"})),
            "a: |-\n  no newline\n  at end\n"
        );
    }

    #[test]
    fn long_plain_strings_fold_like_go_yaml() {
        let long = format!("{} tail words", "word ".repeat(17).trim_end());
        let text = to_yaml(&json!({ "description": long }));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(
            lines[0].len(),
            82,
            "the break comes at the first space past column 80: {text}"
        );
        assert_eq!(lines[1], "  word word word tail words", "{text}");
        // Keys and short values never fold.
        assert_eq!(to_yaml(&json!({"a": "b c"})), "a: b c\n");
    }
}
