//! Go `encoding/json` compatible encoding of our serde types.
//!
//! Field order and `omitempty` are handled by the type definitions. What remains is Go's
//! escaping: `json.Marshal` and `json.Encoder` (with the default `SetEscapeHTML(true)`) write
//! `<`, `>` and `&` as `\u003c`, `\u003e`, `\u0026`, and always escape U+2028 and U+2029.
//! These characters can only occur inside JSON strings, so escaping the compact serde_json
//! output is exact.

use serde::Serialize;

/// Serializes `value` to compact JSON exactly as Go's `json.Marshal` would (no trailing
/// newline; `json.Encoder.Encode` adds one `\n`).
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, serde_json::Error> {
    serde_json::to_string(value).map(|json| escape_like_go(&json))
}

/// Applies Go's HTML-safe escaping to compact JSON text.
pub fn escape_like_go(json: &str) -> String {
    let mut escaped = String::with_capacity(json.len());
    for character in json.chars() {
        match character {
            '<' => escaped.push_str("\\u003c"),
            '>' => escaped.push_str("\\u003e"),
            '&' => escaped.push_str("\\u0026"),
            '\u{2028}' => escaped.push_str("\\u2028"),
            '\u{2029}' => escaped.push_str("\\u2029"),
            other => escaped.push(other),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_html_and_line_separators_like_go() {
        let encoded = to_string(&["<a href=\"x&y\">", "\u{2028}\u{2029}"]).unwrap();
        assert_eq!(
            encoded,
            r#"["\u003ca href=\"x\u0026y\"\u003e","\u2028\u2029"]"#
        );
    }

    #[test]
    fn leaves_other_text_alone() {
        assert_eq!(to_string("plain ü €").unwrap(), "\"plain ü €\"");
    }
}
