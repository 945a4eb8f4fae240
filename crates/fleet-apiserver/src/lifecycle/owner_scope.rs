//! ownerReferences that cross scopes, judged as kube-controller-manager's garbage collector judges them: an
//! owner is looked up in its dependent's namespace (or cluster-wide for a cluster-scoped owner kind), so a
//! namespaced owner of a cluster-scoped object, or an owner in another namespace, is never a valid owner.
//! The collector records a Warning Event `OwnerRefInvalidNamespace` on such a dependent; a cluster-scoped
//! dependent of a namespaced owner is never collected, and a namespaced dependent whose every owner is absent
//! from its namespace is deleted at once.

use serde_json::{Value, json};

use crate::state::Inner;
use crate::storage::object;
use crate::storage::store::{ObjKey, Txn};

const REASON: &str = "OwnerRefInvalidNamespace";
const COMPONENT: &str = "garbage-collector-controller";

/// Whether the reference `owner_uid` in `dependent` names a namespaced kind while `dependent` is
/// cluster-scoped: such a reference is ignored by the collector (the dependent stays when the owner goes).
pub fn namespaced_owner_of_cluster_object(
    inner: &Inner,
    dependent_key: &ObjKey,
    dependent: &Value,
    owner_uid: &str,
) -> bool {
    if !dependent_key.namespace.is_empty() {
        return false;
    }
    object::owner_refs(dependent)
        .iter()
        .filter(|r| r.get("uid").and_then(Value::as_str) == Some(owner_uid))
        .any(|r| kind_is_namespaced(inner, r) == Some(true))
}

/// Whether the kind an ownerReference names is namespaced (`None` if the server does not serve it).
fn kind_is_namespaced(inner: &Inner, reference: &Value) -> Option<bool> {
    let api_version = reference.get("apiVersion").and_then(Value::as_str)?;
    let kind = reference.get("kind").and_then(Value::as_str)?;
    let (group, version) = crate::kinds::registry::split_api_version(api_version);
    inner
        .registry
        .in_group_version(group, version)
        .into_iter()
        .find(|rt| rt.kind == kind && !rt.virtual_only)
        .map(|rt| rt.namespaced)
}

/// The collector's look at a dependent whose ownerReferences were written: an Event for each existing owner
/// in another namespace than the dependent's. Returns whether the dependent is to be deleted: a namespaced
/// dependent none of whose owners exists in its namespace (the collector deletes dependents of absent owners).
pub fn check(txn: &mut Txn<'_>, key: &ObjKey, uid: &str) -> bool {
    let Some(dependent) = txn.get(key) else {
        return false;
    };
    if object::uid(&dependent) != uid || object::is_deleting(&dependent) {
        return false;
    }
    let refs = object::owner_refs(&dependent);
    let mut invalid = 0;
    let mut valid = 0;
    for reference in &refs {
        let owner_uid = reference.get("uid").and_then(Value::as_str).unwrap_or("");
        match txn.by_uid(owner_uid) {
            Some(owner_key) if owner_key.namespace.is_empty() => valid += 1,
            Some(owner_key) if owner_key.namespace == key.namespace => valid += 1,
            Some(_) => {
                invalid += 1;
                record_event(txn, key, &dependent, reference);
            }
            None => {}
        }
    }
    invalid > 0 && valid == 0 && !key.namespace.is_empty()
}

fn record_event(txn: &mut Txn<'_>, key: &ObjKey, dependent: &Value, reference: &Value) {
    let text = |v: &Value, field: &str| {
        v.get(field)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let message = format!(
        "ownerRef [{}/{}, namespace: {}, name: {}, uid: {}] does not exist in namespace {:?}",
        text(reference, "apiVersion"),
        text(reference, "kind"),
        key.namespace,
        text(reference, "name"),
        text(reference, "uid"),
        key.namespace,
    );
    // Events about cluster-scoped objects go to `default`, as client-go's recorder files them.
    let namespace = if key.namespace.is_empty() {
        "default"
    } else {
        key.namespace.as_str()
    };
    let dependent_uid = object::uid(dependent);
    let recorded = txn.list("/events", Some(namespace)).iter().any(|event| {
        event.pointer("/involvedObject/uid").and_then(Value::as_str) == Some(dependent_uid)
            && event.get("reason").and_then(Value::as_str) == Some(REASON)
            && event.get("message").and_then(Value::as_str) == Some(message.as_str())
    });
    if recorded {
        return;
    }
    let now = object::now_rfc3339();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let name = format!("{}.{nanos:x}", key.name);
    let mut involved = json!({
        "apiVersion": text(dependent, "apiVersion"),
        "kind": text(dependent, "kind"),
        "name": key.name,
        "uid": dependent_uid,
    });
    if !key.namespace.is_empty() {
        involved["namespace"] = json!(key.namespace);
    }
    let event = json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uuid::Uuid::new_v4().to_string(),
            "creationTimestamp": now,
        },
        "involvedObject": involved,
        "reason": REASON,
        "message": message,
        "type": "Warning",
        "count": 1,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "source": {"component": COMPONENT},
        "reportingComponent": COMPONENT,
        "reportingInstance": "",
    });
    txn.put(&ObjKey::new("/events", namespace, name), event);
}
