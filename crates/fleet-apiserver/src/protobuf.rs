//! Request bodies in Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`), which kubectl's
//! typed clients send (`kubectl create configmap|secret|serviceaccount|namespace|token`, `kubectl auth
//! can-i`). Decodes the `k8s\0` envelope and the message for the kinds listed in [`schema_for`]; other kinds
//! are answered 415. Responses are always JSON, which those clients accept.

use base64::Engine;
use serde_json::{Map, Value, json};

use crate::error::{ApiError, ApiResult};

const MAGIC: &[u8] = b"k8s\0";

#[derive(Clone, Copy)]
enum Kind {
    Str,
    Int,
    Bool,
    RepeatedStr,
    MapStr,
    MapBytes,
    Message(&'static [Field]),
}

type Field = (u64, &'static str, Kind);

const META: &[Field] = &[
    (1, "name", Kind::Str),
    (2, "generateName", Kind::Str),
    (3, "namespace", Kind::Str),
    (11, "labels", Kind::MapStr),
    (12, "annotations", Kind::MapStr),
    (14, "finalizers", Kind::RepeatedStr),
];
const CONFIG_MAP: &[Field] = &[
    (1, "metadata", Kind::Message(META)),
    (2, "data", Kind::MapStr),
    (3, "binaryData", Kind::MapBytes),
    (4, "immutable", Kind::Bool),
];
const SECRET: &[Field] = &[
    (1, "metadata", Kind::Message(META)),
    (2, "data", Kind::MapBytes),
    (3, "type", Kind::Str),
    (4, "stringData", Kind::MapStr),
    (5, "immutable", Kind::Bool),
];
const SERVICE_ACCOUNT: &[Field] = &[
    (1, "metadata", Kind::Message(META)),
    (4, "automountServiceAccountToken", Kind::Bool),
];
const NAMESPACE: &[Field] = &[
    (1, "metadata", Kind::Message(META)),
    (
        2,
        "spec",
        Kind::Message(&[(1, "finalizers", Kind::RepeatedStr)]),
    ),
];
const TOKEN_REQUEST: &[Field] = &[
    (1, "metadata", Kind::Message(META)),
    (
        2,
        "spec",
        Kind::Message(&[
            (1, "audiences", Kind::RepeatedStr),
            (4, "expirationSeconds", Kind::Int),
        ]),
    ),
];
const RESOURCE_ATTRIBUTES: &[Field] = &[
    (1, "namespace", Kind::Str),
    (2, "verb", Kind::Str),
    (3, "group", Kind::Str),
    (4, "version", Kind::Str),
    (5, "resource", Kind::Str),
    (6, "subresource", Kind::Str),
    (7, "name", Kind::Str),
];
const SELF_SUBJECT_ACCESS_REVIEW: &[Field] = &[
    (1, "metadata", Kind::Message(META)),
    (
        2,
        "spec",
        Kind::Message(&[
            (1, "resourceAttributes", Kind::Message(RESOURCE_ATTRIBUTES)),
            (
                2,
                "nonResourceAttributes",
                Kind::Message(&[(1, "path", Kind::Str), (2, "verb", Kind::Str)]),
            ),
        ]),
    ),
];
const SELF_SUBJECT_RULES_REVIEW: &[Field] = &[
    (1, "metadata", Kind::Message(META)),
    (2, "spec", Kind::Message(&[(1, "namespace", Kind::Str)])),
];

fn schema_for(kind: &str) -> Option<&'static [Field]> {
    Some(match kind {
        "ConfigMap" => CONFIG_MAP,
        "Secret" => SECRET,
        "ServiceAccount" => SERVICE_ACCOUNT,
        "Namespace" => NAMESPACE,
        "TokenRequest" => TOKEN_REQUEST,
        "SelfSubjectAccessReview" => SELF_SUBJECT_ACCESS_REVIEW,
        "SelfSubjectRulesReview" => SELF_SUBJECT_RULES_REVIEW,
        "SelfSubjectReview" => &[(1, "metadata", Kind::Message(META))],
        _ => return None,
    })
}

fn malformed() -> ApiError {
    ApiError::bad_request("the protobuf request body is malformed")
}

/// Decodes a protobuf-encoded object into its JSON form.
pub fn decode(body: &[u8]) -> ApiResult<Value> {
    let envelope = body.strip_prefix(MAGIC).ok_or_else(malformed)?;
    let mut api_version = String::new();
    let mut kind = String::new();
    let mut raw: &[u8] = &[];
    for (number, value) in fields(envelope)? {
        match (number, value) {
            (1, Wire::Len(type_meta)) => {
                for (n, v) in fields(type_meta)? {
                    match (n, v) {
                        (1, Wire::Len(s)) => api_version = text(s)?,
                        (2, Wire::Len(s)) => kind = text(s)?,
                        _ => {}
                    }
                }
            }
            (2, Wire::Len(bytes)) => raw = bytes,
            _ => {}
        }
    }
    let schema = schema_for(&kind).ok_or_else(|| {
        ApiError::unsupported_media_type(&format!(
            "application/vnd.kubernetes.protobuf (kind {kind:?})"
        ))
    })?;
    let mut object = message(raw, schema)?;
    object.insert("apiVersion".into(), json!(api_version));
    object.insert("kind".into(), json!(kind));
    Ok(Value::Object(object))
}

enum Wire<'a> {
    Varint(u64),
    Len(&'a [u8]),
    Fixed,
}

fn varint(buf: &[u8], pos: &mut usize) -> ApiResult<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *buf.get(*pos).ok_or_else(malformed)?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Ok(value);
        }
    }
    Err(malformed())
}

fn fields(buf: &[u8]) -> ApiResult<Vec<(u64, Wire<'_>)>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < buf.len() {
        let key = varint(buf, &mut pos)?;
        let value = match key & 7 {
            0 => Wire::Varint(varint(buf, &mut pos)?),
            2 => {
                let len = usize::try_from(varint(buf, &mut pos)?).map_err(|_| malformed())?;
                let end = pos
                    .checked_add(len)
                    .filter(|end| *end <= buf.len())
                    .ok_or_else(malformed)?;
                let slice = &buf[pos..end];
                pos = end;
                Wire::Len(slice)
            }
            1 => {
                pos += 8;
                Wire::Fixed
            }
            5 => {
                pos += 4;
                Wire::Fixed
            }
            _ => return Err(malformed()),
        };
        if pos > buf.len() {
            return Err(malformed());
        }
        out.push((key >> 3, value));
    }
    Ok(out)
}

fn text(bytes: &[u8]) -> ApiResult<String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| malformed())
}

/// A map entry (`1: key, 2: value`).
fn entry(bytes: &[u8]) -> ApiResult<(String, &[u8])> {
    let mut key = String::new();
    let mut value: &[u8] = &[];
    for (n, v) in fields(bytes)? {
        match (n, v) {
            (1, Wire::Len(k)) => key = text(k)?,
            (2, Wire::Len(b)) => value = b,
            _ => {}
        }
    }
    Ok((key, value))
}

fn message(buf: &[u8], schema: &[Field]) -> ApiResult<Map<String, Value>> {
    let mut out = Map::new();
    for (number, wire) in fields(buf)? {
        let Some((_, name, kind)) = schema.iter().find(|(n, _, _)| *n == number) else {
            continue;
        };
        let name = name.to_string();
        match (kind, wire) {
            (Kind::Str, Wire::Len(b)) => {
                let s = text(b)?;
                if !s.is_empty() {
                    out.insert(name, json!(s));
                }
            }
            (Kind::Int, Wire::Varint(v)) => {
                out.insert(name, json!(v as i64));
            }
            (Kind::Bool, Wire::Varint(v)) => {
                out.insert(name, json!(v != 0));
            }
            (Kind::RepeatedStr, Wire::Len(b)) => {
                let list = out.entry(name).or_insert_with(|| json!([]));
                if let Some(items) = list.as_array_mut() {
                    items.push(json!(text(b)?));
                }
            }
            (Kind::MapStr, Wire::Len(b)) => {
                let (k, v) = entry(b)?;
                let map = out.entry(name).or_insert_with(|| json!({}));
                map[k] = json!(text(v)?);
            }
            (Kind::MapBytes, Wire::Len(b)) => {
                let (k, v) = entry(b)?;
                let map = out.entry(name).or_insert_with(|| json!({}));
                map[k] = json!(base64::engine::general_purpose::STANDARD.encode(v));
            }
            (Kind::Message(sub), Wire::Len(b)) => {
                let decoded = message(b, sub)?;
                if !decoded.is_empty() {
                    out.insert(name, Value::Object(decoded));
                }
            }
            _ => return Err(malformed()),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(number: u64, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![((number << 3) | 2) as u8, payload.len() as u8];
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn decodes_a_config_map_envelope() {
        let type_meta = [field(1, b"v1"), field(2, b"ConfigMap")].concat();
        let meta = [field(1, b"demo"), field(2, b"")].concat();
        let entry = [field(1, b"a"), field(2, b"1")].concat();
        let raw = [field(1, &meta), field(2, &entry)].concat();
        let body = [MAGIC.to_vec(), field(1, &type_meta), field(2, &raw)].concat();
        let value = decode(&body).unwrap();
        assert_eq!(
            value,
            json!({"metadata": {"name": "demo"}, "data": {"a": "1"}, "apiVersion": "v1", "kind": "ConfigMap"})
        );
    }

    #[test]
    fn rejects_truncated_and_unknown_kinds() {
        assert_eq!(decode(b"k8s\0\x0a\x05ab").unwrap_err().code, 400);
        let type_meta = [field(1, b"v1"), field(2, b"Pod")].concat();
        let body = [MAGIC.to_vec(), field(1, &type_meta)].concat();
        assert_eq!(decode(&body).unwrap_err().code, 415);
        assert_eq!(decode(b"nope").unwrap_err().code, 400);
    }
}
