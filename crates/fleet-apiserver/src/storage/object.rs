//! Reading and writing the standard fields of objects held as JSON: metadata, resourceVersion, owners,
//! finalizers, timestamps, and the comparisons that decide whether `generation` moves.

use serde_json::{Map, Value, json};

/// The finalizer a foreground deletion keeps on the owner until its dependents are gone.
pub const FOREGROUND: &str = "foregroundDeletion";

pub fn metadata(obj: &Value) -> Option<&Map<String, Value>> {
    obj.get("metadata")?.as_object()
}

/// The metadata map, created if missing.
pub fn metadata_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.is_object() {
        *obj = json!({});
    }
    let map = obj.as_object_mut().expect("object");
    // `Map::entry` would allocate the key on every call.
    if !map.get("metadata").is_some_and(Value::is_object) {
        map.insert("metadata".into(), json!({}));
    }
    map.get_mut("metadata")
        .and_then(Value::as_object_mut)
        .expect("object")
}

pub fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    metadata(obj)?.get(field)?.as_str()
}

pub fn name(obj: &Value) -> &str {
    meta_str(obj, "name").unwrap_or("")
}

pub fn namespace(obj: &Value) -> &str {
    meta_str(obj, "namespace").unwrap_or("")
}

pub fn uid(obj: &Value) -> &str {
    meta_str(obj, "uid").unwrap_or("")
}

pub fn resource_version(obj: &Value) -> Option<u64> {
    meta_str(obj, "resourceVersion")?.parse().ok()
}

pub fn set_resource_version(obj: &mut Value, rv: u64) {
    metadata_mut(obj).insert("resourceVersion".into(), Value::String(rv.to_string()));
}

pub fn finalizers(obj: &Value) -> Vec<String> {
    metadata(obj)
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

pub fn set_finalizers(obj: &mut Value, finalizers: &[String]) {
    let meta = metadata_mut(obj);
    if finalizers.is_empty() {
        meta.remove("finalizers");
    } else {
        meta.insert("finalizers".into(), json!(finalizers));
    }
}

pub fn is_deleting(obj: &Value) -> bool {
    metadata(obj).is_some_and(|m| m.get("deletionTimestamp").is_some_and(|v| !v.is_null()))
}

pub fn labels(obj: &Value) -> Option<&Map<String, Value>> {
    metadata(obj)?.get("labels")?.as_object()
}

/// Owner uids named in `metadata.ownerReferences`.
pub fn owner_uids(obj: &Value) -> Vec<String> {
    owner_refs(obj)
        .iter()
        .filter_map(|r| r.get("uid")?.as_str().map(str::to_string))
        .collect()
}

pub fn owner_refs(obj: &Value) -> Vec<Value> {
    metadata(obj)
        .and_then(|m| m.get("ownerReferences"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// RFC 3339 with second precision, as kube-apiserver writes timestamps (formatted once a second per thread).
pub fn now_rfc3339() -> String {
    thread_local! {
        static LAST: std::cell::RefCell<(i64, String)> = const { std::cell::RefCell::new((i64::MIN, String::new())) };
    }
    let now = chrono::Utc::now();
    LAST.with_borrow_mut(|(second, text)| {
        if *second != now.timestamp() {
            *second = now.timestamp();
            *text = now.format("%Y-%m-%dT%H:%M:%SZ").to_string();
        }
        text.clone()
    })
}

/// Whether a change from `old` to `new` bumps `generation` (anything but metadata and, with a status
/// subresource, status).
pub fn spec_changed(old: &Value, new: &Value, status_subresource: bool) -> bool {
    let tracked = |key: &str| {
        let untracked = matches!(key, "metadata" | "apiVersion" | "kind")
            || status_subresource && key == "status";
        !untracked
    };
    members_differ(old.as_object(), new.as_object(), tracked)
}

/// Whether two maps differ in a member `tracked` accepts (compared in place, no copies); a missing map
/// counts as empty.
pub fn members_differ(
    old: Option<&Map<String, Value>>,
    new: Option<&Map<String, Value>>,
    tracked: impl Fn(&str) -> bool,
) -> bool {
    let empty = Map::new();
    let (old, new) = (old.unwrap_or(&empty), new.unwrap_or(&empty));
    let changed = |from: &Map<String, Value>, to: &Map<String, Value>| {
        from.iter().any(|(k, v)| tracked(k) && to.get(k) != Some(v))
    };
    changed(old, new) || changed(new, old)
}

/// Random lowercase suffix for generateName, from kube-apiserver's alphabet.
pub fn random_suffix(len: usize) -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = rand::rng();
    (0..len)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// Validates a DNS-1123 subdomain name; returns kube-apiserver's message on failure.
pub fn validate_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !part.starts_with('-')
                && !part.ends_with('-')
        });
    if valid {
        Ok(())
    } else {
        Err(format!(
            "Invalid value: \"{name}\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
        ))
    }
}

/// Looks up a dotted path such as `metadata.name` or `spec.nodeName`.
pub fn field_at<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(obj, |v, part| v.get(part))
}
