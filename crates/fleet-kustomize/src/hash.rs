//! The content-hash name suffix of generated ConfigMaps and Secrets, computed exactly as kustomize does: the
//! sha256 of Go's JSON encoding (sorted keys, HTML-escaped) of kind, type, data and binary/string data, whose first
//! ten hex digits are made unambiguous (`0→g 1→h 3→k a→m e→t`).

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The suffix for a generated resource.
pub fn suffix(obj: &Value) -> String {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let field = |k: &str| match obj.get(k) {
        Some(Value::Object(m)) => Value::Object(m.clone()),
        Some(Value::String(s)) => Value::String(s.clone()),
        _ => Value::String(String::new()),
    };
    let mut m = serde_json::Map::new();
    m.insert("kind".into(), Value::String(kind.into()));
    // kustomize computes the hash before the name is part of the content it looks at: the name is empty.
    m.insert("name".into(), Value::String(String::new()));
    m.insert("data".into(), field("data"));
    if kind == "Secret" {
        m.insert("type".into(), field("type"));
        if let Some(Value::Object(sd)) = obj.get("stringData") {
            m.insert("stringData".into(), Value::Object(sd.clone()));
        }
    } else if let Some(Value::Object(bd)) = obj.get("binaryData") {
        m.insert("binaryData".into(), Value::Object(bd.clone()));
    }
    let encoded = fleet_yaml::gojson::to_json_go_sorted(&Value::Object(m));
    encode(&Sha256::digest(encoded.as_bytes()))
}

fn encode(digest: &[u8]) -> String {
    digest
        .iter()
        .flat_map(|b| [b >> 4, b & 0xf])
        .take(10)
        .map(|n| match n {
            0 => 'g',
            1 => 'h',
            3 => 'k',
            10 => 'm',
            14 => 't',
            n => char::from_digit(u32::from(n), 16).unwrap_or('0'),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matches_kubectl_kustomize() {
        // Values observed from `kubectl kustomize` v5.7.1.
        let cm = json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"1","b":"two"}});
        assert_eq!(suffix(&cm), "5m9tg7g54f");
        let s = json!({"apiVersion":"v1","kind":"Secret","metadata":{"name":"sec"},"type":"Opaque","data":{"k":"dg=="}});
        assert_eq!(suffix(&s), "ftgtgc4t9f");
    }
}
