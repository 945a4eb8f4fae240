//! Strategic merge patch for built-in kinds, through `fleet_yaml::patch::strategic` (the shared
//! implementation). Until that module is available this answers 415, as kube-apiserver does for kinds
//! without strategic-merge metadata.

use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::registry::ResourceType;

pub fn apply(_rt: &ResourceType, _old: &Value, _patch: &Value) -> ApiResult<Value> {
    Err(ApiError::unsupported_media_type(
        "application/strategic-merge-patch+json",
    ))
}
