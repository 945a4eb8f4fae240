//! The one place this crate applies a strategic merge patch to a resource. The algorithm (merge keys, `$patch`,
//! `$setElementOrder`, `$retainKeys`, `$deleteFromPrimitiveList`) belongs to `fleet_yaml::patch::strategic`,
//! shared with bundle overlays and the API server; here only the resource-level directives kustomize adds:
//! a top-level `$patch: delete` removes the resource and `$patch: replace` replaces it.

use serde_json::Value;

/// Patches `doc`; `Ok(None)` means the patch deletes the resource.
pub fn apply(doc: &Value, patch: &Value) -> Result<Option<Value>, String> {
    match patch.get("$patch").and_then(Value::as_str) {
        Some("delete") => return Ok(None),
        Some("replace") => {
            let mut p = patch.clone();
            if let Value::Object(m) = &mut p {
                m.shift_remove("$patch");
            }
            return Ok(Some(p));
        }
        Some("merge") | None => {}
        Some(other) => return Err(format!("unknown $patch directive {other:?}")),
    }
    fleet_yaml::patch::strategic::apply_to_object(doc, patch)
        .map(Some)
        .map_err(|e| e.to_string())
}
