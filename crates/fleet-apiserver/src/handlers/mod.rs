//! Resource request handlers, one module per verb, and what they share: object keys, the version an object
//! is presented in, and response encoding (plain JSON, `Table`, or `PartialObjectMetadata`).

pub(crate) mod apply;
mod create;
mod delete;
pub(crate) mod discovery;
mod get;
mod list;
pub(crate) mod openapi;
mod patch;
pub(crate) mod scale;
pub(crate) mod table;
mod update;
mod watch;

use std::sync::Arc;

use axum::response::{IntoResponse, Response};
use http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::auth::rbac;
use crate::error::{ApiError, ApiResult};
use crate::http::request::Request;
use crate::kinds::registry::ResourceType;
use crate::server::ApiServer;
use crate::storage::store::ObjKey;

pub(crate) use create::create_object;
pub(crate) use update::{WriteKind, store_modified, write_existing};

/// Routes a resolved resource request to its verb. Synchronous (a watch returns a streaming body), which
/// keeps the per-request future small.
pub fn handle(server: &ApiServer, mut req: Request) -> ApiResult<Response> {
    let inner = &server.inner;
    let watching = req.path.watch_prefix || req.query.flag("watch");
    let verb = match (&req.method, req.path.name.is_some()) {
        (&Method::GET, _) if watching => "watch",
        (&Method::GET, false) => "list",
        (&Method::GET, true) => "get",
        (&Method::POST, _) => "create",
        (&Method::PUT, true) => "update",
        (&Method::PATCH, true) => "patch",
        (&Method::DELETE, true) => "delete",
        (&Method::DELETE, false) => "deletecollection",
        (m, _) => return Err(ApiError::method_not_allowed(m.as_str())),
    };
    if let Some(sub) = req.path.subresource.as_deref() {
        let known = (sub == "status" && req.rt.status_subresource)
            || req.rt.other_subresources.contains(&sub);
        if !known {
            return Err(ApiError::no_route());
        }
    }
    if !req.rt.verbs.contains(&verb) {
        return Err(ApiError::method_not_allowed(req.method.as_str()));
    }
    if req.rt.namespaced && req.path.namespace.is_none() {
        // kube-apiserver routes a namespaced resource without `/namespaces/{ns}` for list and watch only.
        if req.path.name.is_some() {
            return Err(ApiError::no_route());
        }
        if !matches!(verb, "list" | "watch") {
            return Err(ApiError::method_not_routed());
        }
    }
    rbac::authorize_request(inner, &req, verb)?;
    if req.rt.namespaced && req.path.namespace.as_deref() == Some("") {
        match verb {
            // An empty namespace is no namespace to kube-apiserver's storage when it lists: every namespace.
            "list" | "watch" => req.path.namespace = None,
            // Its create validates the object, whose namespace is then empty (create_object answers 422).
            "create" if req.path.subresource.is_none() => {}
            // Every other verb needs the object's key, and answers 400.
            "deletecollection" => return delete::delete_collection(inner, &req),
            _ => return Err(ApiError::namespace_required()),
        }
    }
    if req.path.subresource.as_deref() == Some("scale") {
        return crate::handlers::scale::handle(inner, &req, verb);
    }
    match verb {
        "watch" => watch::watch(server, &req),
        "list" => list::list(inner, &req),
        "get" => get::get(inner, &req),
        "create" if req.path.subresource.as_deref() == Some("token") => {
            crate::auth::tokens::token_request(inner, &req)
        }
        "create" if req.rt.virtual_only => crate::auth::reviews::create(inner, &req),
        "create" => create::create(inner, &req),
        "update" => update::update(inner, &req),
        "patch" => patch::patch(inner, &req),
        "delete" => delete::delete(inner, &req),
        _ => delete::delete_collection(inner, &req),
    }
}

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
