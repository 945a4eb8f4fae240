//! Go's zero-value rules for JSON fields.
//!
//! Writing: Go omits a field tagged `omitempty` when it holds the zero value of its type:
//! `false`, `0`, `""`, a nil pointer, or an empty slice or map. Strings, slices and maps use
//! the standard `String::is_empty` / `Vec::is_empty` / `BTreeMap::is_empty`; this module
//! covers the rest so that every `skip_serializing_if` in the crate reads the same way.
//!
//! Reading: Fleet's CRDs mark most fields `nullable`, so stored objects may hold `null`
//! where Go reads the zero value; [`null_as_zero`] does the same.

use serde::{Deserialize, Deserializer};

/// Reads a field like Go's `encoding/json`: `null` leaves the zero (default) value.
pub fn null_as_zero<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// `true` when a Go `bool` with `omitempty` would be left out (it is `false`).
pub fn is_false(value: &bool) -> bool {
    !*value
}

/// `true` when a Go integer with `omitempty` would be left out (it is `0`).
pub fn is_zero(value: &i64) -> bool {
    *value == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Example {
        #[serde(default, deserialize_with = "null_as_zero")]
        name: String,
        #[serde(default, deserialize_with = "null_as_zero")]
        items: Vec<String>,
        #[serde(default, deserialize_with = "null_as_zero")]
        count: i64,
    }

    #[test]
    fn null_reads_as_the_zero_value() {
        let example: Example =
            serde_json::from_str(r#"{"name":null,"items":null,"count":null}"#).unwrap();
        assert_eq!(
            (example.name.as_str(), example.items.len(), example.count),
            ("", 0, 0)
        );
        let example: Example = serde_json::from_str(r#"{"name":"a","items":["b"]}"#).unwrap();
        assert_eq!(
            (example.name.as_str(), example.items.len(), example.count),
            ("a", 1, 0)
        );
    }
}
