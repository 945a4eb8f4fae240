//! Resource request handlers: [`handle`] routes a resolved request to its verb's module; what the verbs share
//! (object keys, the version an object is presented in, response encoding) is in [`respond`].

pub(crate) mod apply;
pub(crate) mod create;
mod delete;
pub(crate) mod discovery;
mod get;
mod list;
pub(crate) mod openapi;
mod patch;
pub(crate) mod respond;
pub(crate) mod scale;
pub(crate) mod table;
pub(crate) mod update;
mod watch;

use std::sync::Arc;

use axum::response::Response;
use http::Method;

use crate::auth::rbac;
use crate::error::{ApiError, ApiResult};
use crate::http::request::Request;
use crate::state::Inner;

/// Routes a resolved resource request to its verb. Synchronous (a watch returns a streaming body), which
/// keeps the per-request future small.
pub fn handle(inner: &Arc<Inner>, mut req: Request) -> ApiResult<Response> {
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
        "watch" => watch::watch(inner, &req),
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
