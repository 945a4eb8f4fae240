//! Deletion: finalizers and deletionTimestamp, propagation policies (background, foreground and orphan, the
//! collection itself running in [`crate::lifecycle::gc`]), namespace termination, and what follows an object's removal.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::error::ApiResult;
use crate::lifecycle::queue::Propagation;
use crate::state::Inner;
use crate::storage::object::{self, FOREGROUND};
use crate::storage::store::{ObjKey, Txn};

/// The namespace controller's finalizer, in a namespace's `spec.finalizers`.
pub const NAMESPACE_FINALIZER: &str = "kubernetes";

/// What a delete did.
pub struct Deleted {
    pub object: Arc<Value>,
}

/// Deletes `key` (which must exist) inside a transaction.
pub fn delete(
    txn: &mut Txn<'_>,
    inner: &Inner,
    key: &ObjKey,
    propagation: Propagation,
) -> ApiResult<Deleted> {
    let Some(current) = txn.get(key) else {
        return Err(crate::error::ApiError::not_found(
            "",
            &key.resource,
            &key.name,
        ));
    };
    if key.resource == "/namespaces" {
        return Ok(terminate_namespace(txn, inner, key, &current));
    }
    if propagation == Propagation::Orphan {
        orphan_dependents(txn, object::uid(&current));
    }
    let has_dependents = !txn.dependents(object::uid(&current)).is_empty();
    let mut finalizers = object::finalizers(&current);
    if propagation == Propagation::Foreground
        && has_dependents
        && !finalizers.iter().any(|f| f == FOREGROUND)
    {
        finalizers.push(FOREGROUND.into());
    }
    if finalizers.is_empty() {
        let removed = txn.remove(key).unwrap_or(current);
        after_removal(txn, inner, key, &removed);
        return Ok(Deleted { object: removed });
    }
    let mut marked = (*current).clone();
    let already = object::is_deleting(&marked);
    if !already || object::finalizers(&current) != finalizers {
        let meta = object::metadata_mut(&mut marked);
        if !already {
            meta.insert("deletionTimestamp".into(), json!(object::now_rfc3339()));
            meta.insert("deletionGracePeriodSeconds".into(), json!(0));
        }
        object::set_finalizers(&mut marked, &finalizers);
        let stored = txn.put(key, marked);
        if finalizers.iter().any(|f| f == FOREGROUND) {
            inner
                .gc
                .enqueue(object::uid(&stored), Propagation::Foreground);
        }
        return Ok(Deleted { object: stored });
    }
    Ok(Deleted { object: current })
}

/// Called after an object left the store: hands its dependents to the garbage collector, completes
/// foreground deletions waiting on it, finishes terminating namespaces, and removes the custom resources of
/// a deleted CRD.
pub fn after_removal(txn: &mut Txn<'_>, inner: &Inner, key: &ObjKey, removed: &Value) {
    let uid = object::uid(removed);
    if !txn.dependents(uid).is_empty() {
        inner.gc.enqueue(uid, Propagation::Background);
    }
    for owner_uid in object::owner_uids(removed) {
        if let Some(owner_key) = txn.by_uid(&owner_uid) {
            finish_foreground(txn, inner, &owner_key);
        }
    }
    if !key.namespace.is_empty() {
        let ns_key = ObjKey::new("/namespaces", "", key.namespace.clone());
        if txn.get(&ns_key).is_some_and(|ns| object::is_deleting(&ns)) {
            finish_namespace(txn, inner, &ns_key);
        }
    }
    if key.resource == "apiextensions.k8s.io/customresourcedefinitions" {
        let storage = crate::kinds::crd::storage_key_of(removed);
        for obj in txn.list(&storage, None) {
            let k = ObjKey::new(storage.clone(), object::namespace(&obj), object::name(&obj));
            if let Some(gone) = txn.remove(&k) {
                after_removal(txn, inner, &k, &gone);
            }
        }
    }
}

/// The garbage collector's step for one owner: deletes (or detaches) its dependents, then completes the
/// owner's foreground deletion if nothing blocks it any more.
pub fn collect_dependents(
    txn: &mut Txn<'_>,
    inner: &Inner,
    owner_uid: &str,
    propagation: Propagation,
) {
    delete_dependents(txn, inner, owner_uid, propagation);
    if let Some(owner_key) = txn.by_uid(owner_uid) {
        finish_foreground(txn, inner, &owner_key);
    }
}

fn delete_dependents(txn: &mut Txn<'_>, inner: &Inner, owner_uid: &str, propagation: Propagation) {
    for dep_key in txn.dependents(owner_uid) {
        let Some(dep) = txn.get(&dep_key) else {
            continue;
        };
        if crate::lifecycle::owner_scope::namespaced_owner_of_cluster_object(
            inner, &dep_key, &dep, owner_uid,
        ) {
            continue;
        }
        let still_owned = object::owner_uids(&dep)
            .iter()
            .any(|u| u != owner_uid && txn.by_uid(u).is_some());
        let owner_gone = txn.by_uid(owner_uid).is_none();
        if still_owned && owner_gone {
            let mut detached = (*dep).clone();
            remove_owner_ref(&mut detached, owner_uid);
            txn.put(&dep_key, detached);
        } else if !still_owned && !object::is_deleting(&dep) {
            let _ = delete(txn, inner, &dep_key, propagation);
        }
    }
}

/// Removes the `foregroundDeletion` finalizer (and the object, if that was the last) once no dependents remain.
fn finish_foreground(txn: &mut Txn<'_>, inner: &Inner, key: &ObjKey) -> Option<Arc<Value>> {
    let owner = txn.get(key)?;
    if !object::is_deleting(&owner) || !object::finalizers(&owner).iter().any(|f| f == FOREGROUND) {
        return None;
    }
    let blocking = txn
        .dependents(object::uid(&owner))
        .into_iter()
        .any(|k| txn.get(&k).is_some());
    if blocking {
        return None;
    }
    let mut next = (*owner).clone();
    let rest: Vec<String> = object::finalizers(&owner)
        .into_iter()
        .filter(|f| f != FOREGROUND)
        .collect();
    object::set_finalizers(&mut next, &rest);
    Some(store_modified(txn, inner, key, next))
}

fn orphan_dependents(txn: &mut Txn<'_>, owner_uid: &str) {
    for dep_key in txn.dependents(owner_uid) {
        if let Some(dep) = txn.get(&dep_key) {
            let mut detached = (*dep).clone();
            remove_owner_ref(&mut detached, owner_uid);
            txn.put(&dep_key, detached);
        }
    }
}

fn remove_owner_ref(obj: &mut Value, owner_uid: &str) {
    let meta = object::metadata_mut(obj);
    if let Some(Value::Array(refs)) = meta.get_mut("ownerReferences") {
        refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(owner_uid));
        if refs.is_empty() {
            meta.remove("ownerReferences");
        }
    }
}

/// Marks a namespace Terminating (deletionTimestamp, `status.phase`) and hands the deletion of its contents
/// to the collector thread, which removes the namespace once it is empty.
fn terminate_namespace(
    txn: &mut Txn<'_>,
    inner: &Inner,
    key: &ObjKey,
    current: &Arc<Value>,
) -> Deleted {
    if object::is_deleting(current) {
        return Deleted {
            object: current.clone(),
        };
    }
    let mut marked = (**current).clone();
    let meta = object::metadata_mut(&mut marked);
    meta.insert("deletionTimestamp".into(), json!(object::now_rfc3339()));
    meta.insert("deletionGracePeriodSeconds".into(), json!(0));
    marked["status"] = json!({"phase": "Terminating"});
    if !marked.get("spec").is_some_and(Value::is_object) {
        marked["spec"] = json!({});
    }
    let finalizers = marked["spec"]
        .as_object_mut()
        .map(|spec| spec.entry("finalizers").or_insert_with(|| json!([])));
    if let Some(Value::Array(finalizers)) = finalizers
        && !finalizers.iter().any(|f| f == NAMESPACE_FINALIZER)
    {
        finalizers.push(json!(NAMESPACE_FINALIZER));
    }
    let object = txn.put(key, marked);
    inner.gc.enqueue_namespace(&key.name);
    Deleted { object }
}

/// The namespace controller's step, on the collector thread: deletes everything in a terminating namespace
/// (objects with finalizers are only marked, and go when their finalizers do), then finishes the namespace
/// if that emptied it.
pub fn empty_namespace(txn: &mut Txn<'_>, inner: &Inner, name: &str) {
    let key = crate::lifecycle::namespaces::key(name);
    if !txn.get(&key).is_some_and(|ns| object::is_deleting(&ns)) {
        return;
    }
    for content in txn.keys_in_namespace(name) {
        if txn.get(&content).is_some_and(|o| !object::is_deleting(&o)) {
            let _ = delete(txn, inner, &content, Propagation::Background);
        }
    }
    finish_namespace(txn, inner, &key);
}

/// Once a terminating namespace is empty: drops the `kubernetes` finalizer from `spec.finalizers` (the
/// namespace controller's) and removes the namespace when no finalizer is left.
fn finish_namespace(txn: &mut Txn<'_>, inner: &Inner, key: &ObjKey) {
    let Some(ns) = txn.get(key) else {
        return;
    };
    if !txn.keys_in_namespace(&key.name).is_empty() {
        return;
    }
    let mut next = (*ns).clone();
    let mut spec_finalizers_left = false;
    if let Some(spec) = next.get_mut("spec").and_then(Value::as_object_mut) {
        if let Some(Value::Array(finalizers)) = spec.get_mut("finalizers") {
            finalizers.retain(|f| f.as_str() != Some(NAMESPACE_FINALIZER));
            spec_finalizers_left = !finalizers.is_empty();
        }
        if !spec_finalizers_left {
            spec.remove("finalizers");
        }
    }
    if !spec_finalizers_left && object::finalizers(&next).is_empty() {
        if let Some(removed) = txn.remove(key) {
            after_removal(txn, inner, key, &removed);
        }
    } else if next != *ns {
        txn.put(key, next);
    }
}

/// Stores a modified object, or removes it when it is being deleted and has no finalizers left.
pub(crate) fn store_modified(
    txn: &mut Txn<'_>,
    inner: &Inner,
    key: &ObjKey,
    new: Value,
) -> Arc<Value> {
    store_modified_from(txn, inner, key, new, None)
}

/// [`store_modified`] for a writer holding the object it replaces.
pub(crate) fn store_modified_from(
    txn: &mut Txn<'_>,
    inner: &Inner,
    key: &ObjKey,
    new: Value,
    replaced: Option<Arc<Value>>,
) -> Arc<Value> {
    if object::is_deleting(&new) && object::finalizers(&new).is_empty() {
        let removed = txn.remove(key).unwrap_or_else(|| Arc::new(new));
        after_removal(txn, inner, key, &removed);
        return removed;
    }
    txn.replace(key, new, replaced)
}
