//! PATCH on an object or its `status`: JSON patch (RFC 6902), merge patch (RFC 7386), strategic merge patch
//! (built-in kinds), and server-side apply, chosen by Content-Type.

use axum::response::Response;
use http::StatusCode;
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::handlers::respond::respond_object;
use crate::handlers::update::{WriteKind, write_existing};
use crate::http::request::{Request, decode_body};
use crate::state::Inner;

pub fn patch(inner: &Inner, req: &Request) -> ApiResult<Response> {
    if req.media_type() == "application/apply-patch+yaml" {
        return crate::handlers::apply::apply(inner, req);
    }
    let (content_type, patch) = decode_patch(req)?;
    let stored = write_existing(inner, req, WriteKind::Update, |old| {
        apply_patch(req, content_type, old, &patch)
    })?;
    Ok(respond_object(req, StatusCode::OK, &stored))
}

/// The media type and body of a JSON, merge or strategic merge patch; any other Content-Type is refused
/// with 415.
pub(crate) fn decode_patch(req: &Request) -> ApiResult<(&str, Value)> {
    const PATCH_TYPES: [&str; 3] = [
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
    ];
    let media_type = req.media_type();
    if !PATCH_TYPES.contains(&media_type) {
        return Err(ApiError::unsupported_media_type(media_type));
    }
    Ok((media_type, decode_body(&req.body, media_type)?))
}

fn apply_patch(req: &Request, content_type: &str, old: &Value, patch: &Value) -> ApiResult<Value> {
    let mut doc = old.clone();
    match content_type {
        "application/json-patch+json" => apply_json_patch(&mut doc, patch)?,
        "application/merge-patch+json" => {
            if !patch.is_object() {
                return Err(ApiError::bad_request("a merge patch must be a JSON object"));
            }
            fleet_yaml::patch::merge_patch::apply(&mut doc, patch);
        }
        "application/strategic-merge-patch+json" => {
            if !patch.is_object() {
                return Err(ApiError::bad_request(
                    "a strategic merge patch must be a JSON object",
                ));
            }
            doc = crate::kinds::strategic::apply(&req.rt, old, patch)?;
        }
        other => return Err(ApiError::unsupported_media_type(other)),
    }
    Ok(doc)
}

/// Applies an RFC 6902 patch one operation at a time, so that a `test` of `null` against a missing location
/// passes, as it does in kube-apiserver (kube-runtime's finalizer helper relies on this). The document is
/// only changed when every operation succeeds. As in kube-apiserver, a body that is not a list of operations
/// is a bad request and an operation that cannot be applied is [`ApiError::json_patch_not_applicable`].
pub(crate) fn apply_json_patch(doc: &mut Value, patch: &Value) -> ApiResult<()> {
    let Some(ops) = patch.as_array() else {
        return Err(ApiError::bad_request(
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
        ));
    };
    let mut work = doc.clone();
    for op in ops {
        let is_null_test = op.get("op").and_then(Value::as_str) == Some("test")
            && op.get("value").is_none_or(Value::is_null);
        let path = op.get("path").and_then(Value::as_str);
        if is_null_test && path.is_some_and(|p| work.pointer(p).is_none_or(Value::is_null)) {
            continue;
        }
        fleet_yaml::patch::json_patch::apply(&mut work, &Value::Array(vec![op.clone()]))
            .map_err(|_| ApiError::json_patch_not_applicable())?;
    }
    *doc = work;
    Ok(())
}
