//! Go `encoding/json` compatible encoding of our serde types, for hashing as Fleet hashes.
//!
//! Field order and `omitempty` are handled by the type definitions; the escaping and number formatting of Go's
//! `json.Marshal` are [`fleet_yaml::gojson`]'s, so there is one Go JSON encoder in the workspace.

use serde::Serialize;

/// Serializes `value` to compact JSON exactly as Go's `json.Marshal` would (no trailing
/// newline; `json.Encoder.Encode` adds one `\n`).
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, serde_json::Error> {
    serde_json::to_value(value).map(|value| fleet_yaml::gojson::to_json_go(&value))
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
