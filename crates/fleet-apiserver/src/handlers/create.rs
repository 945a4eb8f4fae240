//! POST on a collection: names (including generateName), uid, timestamps, generation, defaults, namespace
//! admission, and the CRD side effect of serving a new resource.

use std::sync::Arc;

use axum::response::Response;
use http::StatusCode;
use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};
use crate::handlers::respond::{object_key, respond_object};
use crate::handlers::update::WriteKind;
use crate::http::request::Request;
use crate::state::Inner;
use crate::storage::object;
use crate::{kinds::crd, kinds::defaults, lifecycle::namespaces, storage::managed};

pub fn create(inner: &Inner, req: &Request) -> ApiResult<Response> {
    let obj = req.object()?;
    let stored = create_object(inner, req, obj, WriteKind::Update)?;
    Ok(respond_object(req, StatusCode::CREATED, &stored))
}

/// Validates and stores a new object (also used by server-side apply when the object does not exist).
pub fn create_object(
    inner: &Inner,
    req: &Request,
    mut obj: Value,
    kind: WriteKind,
) -> ApiResult<Arc<Value>> {
    let rt = &req.rt;
    check_type(req, &obj)?;
    crate::kinds::core_kinds::decode_and_prepare(rt, &mut obj)?;
    obj["apiVersion"] = json!(rt.api_version());
    obj["kind"] = json!(rt.kind);
    let url_name = req.path.name.clone();
    let meta = object::metadata_mut(&mut obj);
    if meta
        .get("name")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        if let Some(name) = url_name {
            meta.insert("name".into(), json!(name));
        } else if let Some(prefix) = meta
            .get("generateName")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
        {
            let name = format!("{prefix}{}", object::random_suffix(5));
            meta.insert("name".into(), json!(name));
        }
    }
    let name = object::name(&obj).to_string();
    if name.is_empty() {
        return Err(ApiError::invalid(
            &rt.group,
            &rt.kind,
            "",
            &[(
                "metadata.name".into(),
                "Required value: name or generateName is required".into(),
            )],
        ));
    }
    object::validate_name(&name).map_err(|msg| {
        ApiError::invalid(&rt.group, &rt.kind, &name, &[("metadata.name".into(), msg)])
    })?;
    let namespace = req.path.namespace.clone().unwrap_or_default();
    if rt.namespaced && namespace.is_empty() {
        // kube-apiserver clears the object's namespace to match the request's empty one, and its validation
        // then requires one.
        return Err(ApiError::invalid(
            &rt.group,
            &rt.kind,
            &name,
            &[("metadata.namespace".into(), "Required value".into())],
        ));
    }
    let meta = object::metadata_mut(&mut obj);
    if rt.namespaced {
        match meta.get("namespace").and_then(Value::as_str) {
            Some(ns) if !ns.is_empty() && ns != namespace => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            _ => {
                meta.insert("namespace".into(), json!(namespace));
            }
        }
    } else {
        meta.remove("namespace");
    }
    for field in [
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "resourceVersion",
    ] {
        meta.remove(field);
    }
    meta.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
    meta.insert("creationTimestamp".into(), json!(object::now_rfc3339()));
    meta.insert("generation".into(), json!(1));
    if rt.status_subresource
        && let Some(map) = obj.as_object_mut()
    {
        map.remove("status");
    }
    defaults::on_create(rt, &mut obj);
    crate::auth::tokens::fill_secret(inner, rt, &mut obj);
    crate::kinds::validate::check_write(req, &mut obj)?;
    if kind == WriteKind::Update {
        managed::record_update(
            &mut obj,
            None,
            &req.field_manager(),
            &rt.api_version(),
            None,
            crate::kinds::validate::schema_of(rt).as_deref(),
        );
    }
    if rt.plural == "customresourcedefinitions" && rt.group == "apiextensions.k8s.io" {
        crd::validate(&obj)?;
    }
    let key = object_key(req, &name);
    if req.query.dry_run() {
        if inner.store.get(&key).is_some() {
            return Err(ApiError::already_exists(&rt.group, &rt.plural, &name));
        }
        return Ok(Arc::new(obj));
    }
    let stored = inner.store.transact(|txn| {
        if rt.namespaced {
            namespaces::admit_create(txn, &namespace)?;
        }
        if txn.resource_version(&key).is_some() {
            return Err(ApiError::already_exists(&rt.group, &rt.plural, &name));
        }
        let stored = txn.put(&key, obj);
        if rt.group.is_empty() && rt.plural == "namespaces" {
            namespaces::add_default_service_account(txn, &name);
        }
        Ok(stored)
    })?;
    crd::after_write(inner, rt, &stored);
    inner.gc.enqueue_owner_check(&key, &stored);
    Ok(stored)
}

/// A body whose apiVersion/kind name another type is rejected as kube-apiserver does.
fn check_type(req: &Request, obj: &Value) -> ApiResult<()> {
    let rt = &req.rt;
    if let Some(kind) = obj.get("kind").and_then(Value::as_str)
        && kind != rt.kind
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({}) does not match the expected API version ({}), or kind {kind} does not match {}",
            obj.get("apiVersion").and_then(Value::as_str).unwrap_or(""),
            rt.api_version(),
            rt.kind
        )));
    }
    if let Some(api_version) = obj.get("apiVersion").and_then(Value::as_str) {
        let (group, _) = crate::kinds::registry::split_api_version(api_version);
        if group != rt.group {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({api_version}) does not match the expected API version ({})",
                rt.api_version()
            )));
        }
    }
    Ok(())
}
