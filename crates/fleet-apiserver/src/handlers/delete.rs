//! DELETE on an object (preconditions, propagation policy, finalizers) and on a collection.

use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};
use crate::handlers::list;
use crate::handlers::respond::{object_key, present, respond_object};
use crate::http::request::{Request, decode_body};
use crate::lifecycle::deletion;
use crate::lifecycle::queue::Propagation;
use crate::state::Inner;

struct Options {
    propagation: Propagation,
    uid: Option<String>,
    resource_version: Option<String>,
}

fn options(req: &Request) -> ApiResult<Options> {
    let body: Value = if req.body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else if req.content_type().contains("protobuf") {
        // client-go's typed clients (helm's release storage among them) send DeleteOptions as protobuf
        // and, unlike for other bodies, do not fall back to JSON on 415.
        crate::kinds::protobuf::decode(&req.body)?
    } else {
        decode_body(&req.body, req.content_type())?
    };
    let policy = req
        .query
        .get("propagationPolicy")
        .map(str::to_string)
        .or_else(|| {
            body.get("propagationPolicy")
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    let orphan = body
        .get("orphanDependents")
        .and_then(Value::as_bool)
        .or_else(|| req.query.get("orphanDependents").map(|v| v == "true"));
    let propagation = match (policy.as_deref(), orphan) {
        (Some("Foreground"), _) => Propagation::Foreground,
        (Some("Orphan"), _) | (None, Some(true)) => Propagation::Orphan,
        (Some("Background") | None, _) => Propagation::Background,
        (Some(other), _) => {
            return Err(ApiError::bad_request(format!(
                "invalid propagationPolicy {other:?}"
            )));
        }
    };
    let pre = body.get("preconditions");
    let text = |field: &str| {
        pre.and_then(|p| p.get(field))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    Ok(Options {
        propagation,
        uid: text("uid"),
        resource_version: text("resourceVersion"),
    })
}

pub fn delete(inner: &Inner, req: &Request) -> ApiResult<Response> {
    let opts = options(req)?;
    let rt = &req.rt;
    let name = req.path.name.clone().unwrap_or_default();
    let key = object_key(req, &name);
    if rt.group.is_empty()
        && rt.plural == "namespaces"
        && crate::lifecycle::namespaces::PROTECTED.contains(&name.as_str())
    {
        return Err(ApiError::forbidden(format!(
            "namespaces \"{name}\" is forbidden: this namespace may not be deleted"
        )));
    }
    if req.query.dry_run() {
        let obj = inner
            .store
            .get(&key)
            .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, &name))?;
        return Ok(respond_object(req, StatusCode::OK, &obj));
    }
    let result = inner.store.transact(|txn| {
        let current = txn
            .get(&key)
            .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, &name))?;
        let precondition_failed = opts
            .uid
            .as_deref()
            .is_some_and(|u| u != crate::storage::object::uid(&current))
            || opts.resource_version.as_deref().is_some_and(|rv| {
                Some(rv) != crate::storage::object::meta_str(&current, "resourceVersion")
            });
        if precondition_failed {
            return Err(ApiError::conflict(
                &rt.group,
                &rt.plural,
                &name,
                "Precondition failed",
            ));
        }
        deletion::delete(txn, inner, &key, opts.propagation)
    })?;
    crate::kinds::crd::after_write(inner, rt, &result.object);
    Ok(respond_object(req, StatusCode::OK, &result.object))
}

pub fn delete_collection(inner: &Inner, req: &Request) -> ApiResult<Response> {
    let opts = options(req)?;
    let (objects, _) = list::matching(inner, req)?;
    if req.path.namespace.as_deref() == Some("") && !objects.is_empty() {
        // kube-apiserver lists every namespace, then fails to delete the first object it found.
        return Err(ApiError::namespace_required());
    }
    let mut items = Vec::new();
    for obj in objects {
        let key = object_key(req, crate::storage::object::name(&obj));
        if req.query.dry_run() {
            items.push(present(&req.rt, &obj));
            continue;
        }
        let result = inner.store.transact(|txn| match txn.get(&key) {
            Some(_) => deletion::delete(txn, inner, &key, opts.propagation).map(Some),
            None => Ok(None),
        })?;
        if let Some(result) = result {
            crate::kinds::crd::after_write(inner, &req.rt, &result.object);
            items.push(present(&req.rt, &result.object));
        }
    }
    let body = json!({"kind": req.rt.list_kind(), "apiVersion": req.rt.api_version(), "metadata": {}, "items": items});
    Ok(axum::Json(body).into_response())
}
