//! The one place this crate applies a strategic merge patch to a resource: kustomize's flavour of the algorithm
//! (kyaml `merge2`: patch items first, `$patch` directives, two-field list keys), which lives in
//! `fleet_yaml::patch::strategic::kustomize`, shared with bundle overlays and the API server.

use fleet_yaml::patch::PatchError;
use serde_json::Value;

/// Patches `doc`; `Ok(None)` means the patch deletes the resource (`$patch: delete` at the top).
pub fn apply(doc: &Value, patch: &Value) -> Result<Option<Value>, PatchError> {
    fleet_yaml::patch::strategic::kustomize::apply_to_object(doc, patch)
}
