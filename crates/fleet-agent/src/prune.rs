//! Deleting what a BundleDeployment no longer deploys (pruning) and everything it deployed (uninstall), in
//! reverse install order. An object is deleted only while it still carries this agent's object-set ID, so an
//! object taken over by someone else (another agent scope included) survives; objects marked
//! `helm.sh/resource-policy: keep` and everything under `keepResources` survive too. Every answer saying
//! an object cannot exist or was never created (404, a kind not served, 400 for a request that cannot
//! address it) counts as deleted, so such an entry never holds a BundleDeployment in error.

use fleet_api::ObjectRef;
use kube::api::DeleteParams;

use crate::apply::ObjectError;
use crate::downstream::Downstream;
use crate::error::{is_gone, is_gone_kind, is_not_found};
use crate::inventory::{Entry, Inventory};
use crate::order::install_rank;
use crate::scope::SET_ID_ANNOTATION;

/// Deletes `entries` that belong to `set_id`; returns those that could not be deleted, with the reason.
pub async fn delete_entries(
    downstream: &Downstream,
    set_id: &str,
    entries: &[Entry],
) -> Vec<(ObjectRef, ObjectError)> {
    let mut ordered: Vec<&Entry> = entries.iter().filter(|entry| !entry.keep).collect();
    ordered.sort_by_key(|entry| std::cmp::Reverse(install_rank(&entry.object.kind)));
    let mut failed = Vec::new();
    for entry in ordered {
        if let Err(reason) = delete_owned(downstream, set_id, &entry.object).await {
            failed.push((entry.object.clone(), reason));
        }
    }
    failed
}

async fn delete_owned(
    downstream: &Downstream,
    set_id: &str,
    object: &ObjectRef,
) -> Result<(), ObjectError> {
    let api = match downstream.api_for(downstream.client(), object).await {
        Ok(api) => api,
        Err(err) if is_gone_kind(&err) => return Ok(()),
        Err(err) => return Err(ObjectError::unresolved(err)),
    };
    let live = match api.get_metadata(&object.name).await {
        Ok(live) => live,
        Err(err) if is_gone(&err) => return Ok(()),
        Err(err) => return Err(ObjectError::refused(err)),
    };
    let owner = live
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(SET_ID_ANNOTATION))
        .map(String::as_str);
    if owner != Some(set_id) {
        return Ok(());
    }
    match api.delete(&object.name, &DeleteParams::background()).await {
        Ok(_) => Ok(()),
        Err(err) if is_gone(&err) => Ok(()),
        Err(err) => Err(ObjectError::refused(err)),
    }
}

/// Whether an object that failed to apply may nevertheless exist (applied before, or by a run that crashed
/// before recording it): anything but an answer that it cannot exist counts as "may".
pub async fn may_exist(downstream: &Downstream, object: &ObjectRef) -> bool {
    let api = match downstream.api_for(downstream.client(), object).await {
        Ok(api) => api,
        Err(err) => return !is_gone_kind(&err),
    };
    match api.get_metadata(&object.name).await {
        Ok(_) => true,
        Err(err) => !is_gone(&err),
    }
}

/// Uninstalls a BundleDeployment from its inventory: its objects unless `keepResources`, then the namespaces
/// it created (and its release namespace) when `deleteNamespace`.
pub async fn uninstall(
    downstream: &Downstream,
    set_id: &str,
    inventory: &Inventory,
) -> Vec<(ObjectRef, ObjectError)> {
    if inventory.keep_resources {
        return Vec::new();
    }
    let mut failed = delete_entries(downstream, set_id, &inventory.objects).await;
    if inventory.delete_namespace {
        let mut namespaces = inventory.created_namespaces.clone();
        namespaces.push(inventory.release_namespace.clone());
        namespaces.sort();
        namespaces.dedup();
        let api: kube::Api<k8s_openapi::api::core::v1::Namespace> =
            kube::Api::all(downstream.client().clone());
        for namespace in namespaces {
            if namespace.is_empty() || namespace == "default" || namespace.starts_with("kube-") {
                continue;
            }
            if let Err(err) = api.delete(&namespace, &DeleteParams::background()).await
                && !is_not_found(&err)
            {
                failed.push((
                    ObjectRef {
                        kind: "Namespace".into(),
                        api_version: "v1".into(),
                        name: namespace,
                        ..Default::default()
                    },
                    ObjectError::refused(err),
                ));
            }
        }
    }
    failed
}
