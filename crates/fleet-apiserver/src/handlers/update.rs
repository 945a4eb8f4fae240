//! PUT on an object or its `status`, and the write path every modification shares: optimistic concurrency,
//! the status-subresource split, immutable metadata, generation, no-op detection, managedFields, and
//! completing a deletion once the last finalizer is gone.

use std::sync::Arc;

use axum::response::Response;
use http::StatusCode;
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::handlers::respond::{object_key, respond_object};
use crate::http::request::Request;
use crate::state::Inner;
use crate::{kinds::crd, storage::managed, storage::object};

pub fn update(inner: &Inner, req: &Request) -> ApiResult<Response> {
    let body = req.object()?;
    let name = req.path.name.clone().unwrap_or_default();
    if let Some(body_name) = object::meta_str(&body, "name")
        && body_name != name
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let stored = write_existing(inner, req, WriteKind::Update, |_| Ok(body.clone()))?;
    Ok(respond_object(req, StatusCode::OK, &stored))
}

/// How a modification was expressed (decides managedFields bookkeeping).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    Update,
    /// Server-side apply already computed managedFields.
    Apply,
}

/// Reads the current object, lets `change` compute the new one, and stores it under kube-apiserver's rules.
/// The new object is computed without holding the store's lock and stored only if the object has not
/// changed meanwhile; otherwise it is computed again from the newer object (a conflict the client never
/// sees, unlike a stale resourceVersion it sent itself).
pub fn write_existing(
    inner: &Inner,
    req: &Request,
    kind: WriteKind,
    change: impl Fn(&Value) -> ApiResult<Value>,
) -> ApiResult<Arc<Value>> {
    let rt = &req.rt;
    let name = req.path.name.clone().unwrap_or_default();
    let key = object_key(req, &name);
    let result = loop {
        let old = inner
            .store
            .get(&key)
            .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, &name))?;
        let new = match modified(req, kind, &old, &change)? {
            Some(new) if !req.query.dry_run() => new,
            Some(new) => break Arc::new(new),
            None => break old,
        };
        let read_rv = object::resource_version(&old);
        let owners_before = object::owner_refs(&old);
        let stored = inner.store.transact(|txn| {
            let current_rv = txn
                .resource_version(&key)
                .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, &name))?;
            if read_rv.is_some_and(|read| read != current_rv) {
                return Ok(None);
            }
            Ok(Some(crate::lifecycle::deletion::store_modified_from(
                txn,
                inner,
                &key,
                new,
                Some(old),
            )))
        })?;
        if let Some(stored) = stored {
            if object::owner_refs(&stored) != owners_before {
                inner.gc.enqueue_owner_check(&key, &stored);
            }
            break stored;
        }
    };
    crd::after_write(inner, rt, &result);
    Ok(result)
}

/// The object `change` makes of `old`, checked and completed (status split, immutable metadata,
/// generation, managedFields); `None` when it equals `old` (a no-op write).
fn modified(
    req: &Request,
    kind: WriteKind,
    old: &Value,
    change: &impl Fn(&Value) -> ApiResult<Value>,
) -> ApiResult<Option<Value>> {
    let rt = &req.rt;
    let name = req.path.name.as_deref().unwrap_or_default();
    let status_only = req.path.subresource.as_deref() == Some("status");
    let proposed = change(old)?;
    if !proposed.is_object() {
        return Err(ApiError::bad_request(
            "the resulting object is not a JSON object",
        ));
    }
    if let Some(rv) = object::meta_str(&proposed, "resourceVersion").filter(|rv| !rv.is_empty())
        && Some(rv) != object::meta_str(old, "resourceVersion")
    {
        return Err(ApiError::stale_resource_version(
            &rt.group, &rt.plural, name,
        ));
    }
    let mut new = merge_with_old(old, proposed, rt.status_subresource, status_only, kind);
    crate::kinds::core_kinds::decode_and_prepare(rt, &mut new)?;
    crate::kinds::validate::check_write(req, &mut new)?;
    if rt.plural == "customresourcedefinitions" && rt.group == "apiextensions.k8s.io" {
        crd::validate(&new)?;
    }
    let generation = object::metadata(old)
        .and_then(|m| m.get("generation"))
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let bumped = if object::spec_changed(old, &new, rt.status_subresource) {
        generation + 1
    } else {
        generation
    };
    object::metadata_mut(&mut new).insert("generation".into(), bumped.into());
    if kind == WriteKind::Update {
        managed::record_update(
            &mut new,
            Some(old),
            &req.field_manager(),
            &rt.api_version(),
            req.path.subresource.as_deref(),
            crate::kinds::validate::schema_of(rt).as_deref(),
        );
    }
    Ok((!same_content(old, &new)).then_some(new))
}

/// Applies the status-subresource split and keeps metadata the client may not change.
fn merge_with_old(
    old: &Value,
    proposed: Value,
    status_subresource: bool,
    status_only: bool,
    kind: WriteKind,
) -> Value {
    // Server-side apply computed the new managedFields; other writes get theirs from `record_update`.
    let applied_managed = match kind {
        WriteKind::Apply => object::metadata(&proposed)
            .and_then(|m| m.get("managedFields"))
            .cloned(),
        WriteKind::Update => None,
    };
    let mut new = if status_only {
        let mut base = old.clone();
        match proposed.get("status") {
            Some(status) => base["status"] = status.clone(),
            None => {
                if let Some(map) = base.as_object_mut() {
                    map.remove("status");
                }
            }
        }
        base
    } else {
        let mut new = proposed;
        if status_subresource {
            match old.get("status") {
                Some(status) => new["status"] = status.clone(),
                None => {
                    if let Some(map) = new.as_object_mut() {
                        map.remove("status");
                    }
                }
            }
        }
        new
    };
    let old_meta = object::metadata(old);
    let meta = object::metadata_mut(&mut new);
    for field in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "resourceVersion",
    ] {
        match old_meta.and_then(|m| m.get(field)) {
            Some(v) => meta.insert(field.into(), v.clone()),
            None => meta.remove(field),
        };
    }
    match applied_managed {
        Some(v) => meta.insert("managedFields".into(), v),
        None => meta.remove("managedFields"),
    };
    if let Some(map) = new.as_object_mut() {
        for field in ["apiVersion", "kind"] {
            if let Some(v) = old.get(field) {
                map.insert(field.into(), v.clone());
            }
        }
    }
    new
}

/// Equal apart from managedFields timestamps: such a write is a no-op (no new resourceVersion, no event).
fn same_content(old: &Value, new: &Value) -> bool {
    !object::members_differ(old.as_object(), new.as_object(), |key| key != "metadata")
        && !object::members_differ(object::metadata(old), object::metadata(new), |key| {
            key != "managedFields"
        })
        && managed::read(old)
            .iter()
            .map(|e| (&e.manager, &e.fields))
            .eq(managed::read(new).iter().map(|e| (&e.manager, &e.fields)))
}
