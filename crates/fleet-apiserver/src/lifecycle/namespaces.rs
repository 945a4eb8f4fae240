//! Namespace admission (objects go only into existing, non-terminating namespaces) and the namespaces
//! every cluster starts with.

use serde_json::json;

use crate::error::{ApiError, ApiResult};
use crate::state::Inner;
use crate::storage::object;
use crate::storage::store::{ObjKey, Txn};

/// Namespaces kube-apiserver refuses to delete.
pub const PROTECTED: [&str; 3] = ["default", "kube-system", "kube-public"];

pub const DEFAULT_NAMESPACES: [&str; 4] =
    ["default", "kube-system", "kube-public", "kube-node-lease"];

pub fn key(name: &str) -> ObjKey {
    ObjKey::new("/namespaces", "", name)
}

/// Rejects creating an object in a missing or terminating namespace.
pub fn admit_create(txn: &Txn<'_>, namespace: &str) -> ApiResult<()> {
    match txn.get(&key(namespace)) {
        None => Err(ApiError::not_found("", "namespaces", namespace)),
        Some(ns) if object::is_deleting(&ns) => Err(ApiError::forbidden(format!(
            "unable to create new content in namespace {namespace} because it is being terminated"
        ))),
        Some(_) => Ok(()),
    }
}

/// Creates the standard namespaces when missing (first start, or a data dir without them).
pub fn ensure_defaults(inner: &Inner) {
    let _ = inner.store.transact(|txn| {
        for name in DEFAULT_NAMESPACES {
            if txn.get(&key(name)).is_none() {
                let ns = json!({
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {
                        "name": name,
                        "uid": uuid::Uuid::new_v4().to_string(),
                        "creationTimestamp": object::now_rfc3339(),
                        "labels": {"kubernetes.io/metadata.name": name},
                    },
                    "spec": {"finalizers": ["kubernetes"]},
                    "status": {"phase": "Active"},
                });
                txn.put(&key(name), ns);
                add_default_service_account(txn, name);
            }
        }
        Ok(())
    });
}

/// The `default` ServiceAccount every namespace gets (kube-controller-manager creates it in a real cluster).
pub fn add_default_service_account(txn: &mut Txn<'_>, namespace: &str) {
    let sa_key = ObjKey::new("/serviceaccounts", namespace, "default");
    if txn.get(&sa_key).is_none() {
        txn.put(
            &sa_key,
            json!({
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {
                    "name": "default",
                    "namespace": namespace,
                    "uid": uuid::Uuid::new_v4().to_string(),
                    "creationTimestamp": object::now_rfc3339(),
                },
            }),
        );
    }
}
