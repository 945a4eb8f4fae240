//! What every verb's handler shares: the store key a request names, the version an object is presented in,
//! and response encoding (plain JSON, `Table`, or `PartialObjectMetadata`, with the request's warnings).

use std::sync::Arc;

use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::{Value, json};

use crate::handlers::table;
use crate::http::request::Request;
use crate::kinds::registry::ResourceType;
use crate::storage::store::ObjKey;

/// The store key of the object a request names.
pub(crate) fn object_key(req: &Request, name: &str) -> ObjKey {
    ObjKey::new(
        req.rt.storage_key(),
        req.path.namespace.clone().unwrap_or_default(),
        name,
    )
}

/// The object as served at `rt`'s version (objects are stored once per group/resource).
pub(crate) fn present(rt: &ResourceType, obj: &Arc<Value>) -> Value {
    let mut out = (**obj).clone();
    if let Some(map) = out.as_object_mut() {
        map.insert("apiVersion".into(), json!(rt.api_version()));
        map.insert("kind".into(), json!(rt.kind));
    }
    out
}

/// Whether an object already carries the apiVersion and kind `rt` serves it as.
pub(crate) fn presented_as_stored(rt: &ResourceType, obj: &Value) -> bool {
    let api_version = obj.get("apiVersion").and_then(Value::as_str);
    let kind = obj.get("kind").and_then(Value::as_str);
    kind == Some(rt.kind.as_str())
        && match api_version.and_then(|v| v.rsplit_once('/')) {
            Some((group, version)) => group == rt.group && version == rt.version,
            None => rt.group.is_empty() && api_version == Some(rt.version.as_str()),
        }
}

/// Encodes one object for the client: `Table` or `PartialObjectMetadata` when asked, else the object.
pub(crate) fn respond_object(req: &Request, code: StatusCode, obj: &Arc<Value>) -> Response {
    let accept = req.accept();
    let body = if table::wants_table(accept) {
        table::table(&req.rt, std::slice::from_ref(obj), None, None)
    } else if table::wants_metadata(accept) {
        table::partial_metadata(obj)
    } else if presented_as_stored(&req.rt, obj) {
        // The common case: serialize the shared object without copying it.
        return with_warnings(req, (code, axum::Json(&**obj)).into_response());
    } else {
        present(&req.rt, obj)
    };
    with_warnings(req, (code, axum::Json(body)).into_response())
}

/// Adds the request's warnings as `Warning: 299 - "..."` headers, which kubectl prints.
fn with_warnings(req: &Request, mut response: Response) -> Response {
    for warning in req.take_warnings() {
        let text = format!("299 - {}", Value::String(warning));
        if let Ok(value) = http::HeaderValue::from_str(&text) {
            response.headers_mut().append(http::header::WARNING, value);
        }
    }
    response
}
