//! The one place this crate applies a strategic merge patch to a resource. The algorithm itself belongs to
//! `fleet_yaml::patch` (shared with bundle overlays and the API server).
//!
//! Until `fleet_yaml::patch::strategic` lands, lists are replaced as an RFC 7386 merge patch would (no merge
//! keys, no `$setElementOrder`/`$retainKeys`); a top-level `$patch: delete` removes the resource and
//! `$patch: replace` replaces it, as kustomize does.

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
    let mut out = doc.clone();
    fleet_yaml::patch::merge_patch::apply(&mut out, patch);
    Ok(Some(out))
}
