//! Strategic merge patch for built-in kinds, through the shared `fleet_yaml::patch::strategic` (merge keys
//! and directives from its built-in tables). Custom resources have no strategic-merge metadata: kube-apiserver
//! answers 415 for them, and so do we.

use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::registry::ResourceType;

pub fn apply(rt: &ResourceType, old: &Value, patch: &Value) -> ApiResult<Value> {
    if rt.crd.is_some() {
        return Err(ApiError::unsupported_media_type(
            "application/strategic-merge-patch+json",
        ));
    }
    let mut typed = old.clone();
    typed["apiVersion"] = Value::String(rt.api_version());
    typed["kind"] = Value::String(rt.kind.clone());
    fleet_yaml::patch::strategic::apply_to_object(&typed, patch).map_err(|e| {
        ApiError::invalid(
            &rt.group,
            &rt.kind,
            crate::object::name(old),
            &[("patch".into(), e.to_string())],
        )
    })
}
