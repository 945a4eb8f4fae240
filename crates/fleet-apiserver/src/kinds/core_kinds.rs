//! What kube-apiserver's typed decoding and strategies do to ConfigMaps and Secrets on every write: value
//! types are checked as Go's JSON decoder checks them (strings; base64 for bytes) and answered with its 400
//! message shape, and a Secret's `stringData` is folded into `data` (base64) and dropped from the stored
//! object, `stringData` winning over `data` for the same key.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::kinds::registry::ResourceType;
use crate::kinds::validate::json_type;

/// Go's type of a field's values, which decides how each value must look.
#[derive(Clone, Copy)]
enum Values {
    /// `map[string]string`
    Strings,
    /// `map[string][]byte`: base64 strings.
    Bytes,
}

/// Checks and normalises a ConfigMap or Secret about to be stored (create, update, patch and apply alike);
/// other kinds pass through untouched.
pub fn decode_and_prepare(rt: &ResourceType, obj: &mut Value) -> ApiResult<()> {
    if !rt.group.is_empty() {
        return Ok(());
    }
    let fields: &[(&str, Values)] = match rt.plural.as_str() {
        "configmaps" => &[("data", Values::Strings), ("binaryData", Values::Bytes)],
        "secrets" => &[("data", Values::Bytes), ("stringData", Values::Strings)],
        _ => return Ok(()),
    };
    for &(field, values) in fields {
        decode_map(&rt.kind, obj, field, values)?;
    }
    if rt.plural == "secrets" {
        fold_string_data(obj);
    }
    Ok(())
}

/// Validates one map field; `null` values become empty strings, as Go's decoder leaves them.
fn decode_map(kind: &str, obj: &mut Value, field: &str, values: Values) -> ApiResult<()> {
    let Some(map) = obj.as_object_mut() else {
        return Ok(());
    };
    let go_type = match values {
        Values::Strings => "string",
        Values::Bytes => "[]uint8",
    };
    let undecodable = |detail: String| {
        ApiError::bad_request(format!(
            "{kind} in version \"v1\" cannot be handled as a {kind}: {detail}"
        ))
    };
    let wrong_type = |value: &Value, go_type: &str| {
        undecodable(format!(
            "json: cannot unmarshal {} into Go struct field {kind}.{field} of type {go_type}",
            json_type(value)
        ))
    };
    match map.get_mut(field) {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Object(entries)) => {
            for value in entries.values_mut() {
                match value {
                    Value::Null => *value = Value::String(String::new()),
                    Value::String(text) => {
                        if let Values::Bytes = values {
                            check_base64(text).map_err(undecodable)?;
                        }
                    }
                    other => return Err(wrong_type(other, go_type)),
                }
            }
            Ok(())
        }
        Some(other) => Err(wrong_type(other, &format!("map[string]{go_type}"))),
    }
}

/// Standard padded base64 (line breaks ignored, as Go does), with Go's error message and byte offset.
fn check_base64(text: &str) -> Result<(), String> {
    let compact: String = text.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
    let offset = match STANDARD.decode(&compact) {
        Ok(_) => return Ok(()),
        Err(base64::DecodeError::InvalidByte(at, _))
        | Err(base64::DecodeError::InvalidLastSymbol(at, _)) => at,
        Err(base64::DecodeError::InvalidLength(_)) | Err(base64::DecodeError::InvalidPadding) => {
            compact.len() - compact.len() % 4
        }
    };
    Err(format!("illegal base64 data at input byte {offset}"))
}

/// kube-apiserver's Secret strategy: each `stringData` entry replaces `data`'s entry, base64-encoded.
fn fold_string_data(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    let Some(Value::Object(strings)) = map.shift_remove("stringData") else {
        return;
    };
    if strings.is_empty() {
        return;
    }
    if !map.get("data").is_some_and(Value::is_object) {
        map.insert("data".into(), Value::Object(Map::new()));
    }
    if let Some(Value::Object(data)) = map.get_mut("data") {
        for (key, value) in strings {
            let text = value.as_str().unwrap_or_default();
            data.insert(key, Value::String(STANDARD.encode(text)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check_base64;

    #[test]
    fn base64_errors_name_go_offsets() {
        assert_eq!(check_base64("aGVsbG8="), Ok(()));
        assert_eq!(check_base64("aGVs\nbG8="), Ok(()));
        assert_eq!(
            check_base64("aGV*bG8="),
            Err("illegal base64 data at input byte 3".into())
        );
        assert_eq!(
            check_base64("abcde"),
            Err("illegal base64 data at input byte 4".into())
        );
    }
}
