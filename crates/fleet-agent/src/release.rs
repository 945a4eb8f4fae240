//! Applying one deployment of a BundleDeployment: its objects are applied, what the previous inventory had and
//! they lack is pruned, and the new inventory is saved (the union first, so that a crash mid-apply leaves
//! nothing untracked, and then only what was applied or may exist from an earlier apply); drifted objects are
//! re-applied when `correctDrift` asks for it.

use std::collections::BTreeSet;

use fleet_api::BundleDeploymentOptions;
use tracing::{info, warn};

use crate::apply::{ObjectError, apply_all, apply_one, release_namespace};
use crate::downstream::Downstream;
use crate::error::Result;
use crate::inventory::{self, Entry, Inventory, object_key};
use crate::monitor::Report;
use crate::prune;
use crate::render::Desired;
use crate::scope::Scope;
use crate::status;

/// What one deployment applies.
pub struct Target<'a> {
    pub deployment_id: &'a str,
    pub objects: &'a [Desired],
    pub options: &'a BundleDeploymentOptions,
    /// Apply every object even when its configuration is unchanged (`forceSyncGeneration`).
    pub force_all: bool,
}

/// Applies the target's objects, prunes what the previous inventory had and they lack, and saves the new
/// inventory. Returns it and the objects that failed (to apply or to prune).
pub async fn apply_and_prune(
    downstream: &Downstream,
    store: &inventory::Store,
    scope: &Scope,
    previous: &Inventory,
    target: Target<'_>,
) -> Result<(Inventory, Vec<(fleet_api::ObjectRef, ObjectError)>)> {
    let Target {
        deployment_id,
        objects,
        options,
        force_all,
    } = target;
    let set_id = scope.set_id(&previous.bundle_deployment);
    let wanted: BTreeSet<String> = objects.iter().map(|d| object_key(&d.object_ref)).collect();
    let removed: Vec<Entry> = previous
        .objects
        .iter()
        .filter(|entry| !wanted.contains(&object_key(&entry.object)))
        .cloned()
        .collect();
    // Record the union first, so that a crash mid-apply leaves nothing untracked.
    let mut pending = previous.clone();
    for desired in objects {
        if !previous
            .objects
            .iter()
            .any(|e| e.object == desired.object_ref)
        {
            pending.objects.push(Entry {
                object: desired.object_ref.clone(),
                hash: String::new(),
                keep: desired.keep(),
            });
        }
    }
    if pending != *previous {
        store.save(&pending).await?;
    }
    let hashes = if force_all {
        Default::default()
    } else {
        previous.hashes()
    };
    let client = downstream.deploy_client(&scope.agent_namespace, &options.service_account);
    let mut outcome = apply_all(
        downstream,
        &client,
        &scope.field_manager(),
        objects,
        &hashes,
        options,
    )
    .await;
    let mut failures = std::mem::take(&mut outcome.failed);
    let prune_failed = prune::delete_entries(downstream, &set_id, &removed).await;
    // Only what was applied, or what failed now but may exist from an earlier apply, is recorded: an object
    // that was never created must not be pruned or uninstalled later.
    let mut recorded = Vec::new();
    for desired in objects {
        let key = object_key(&desired.object_ref);
        let hash = outcome.applied.get(&key).cloned();
        let earlier = previous
            .objects
            .iter()
            .any(|entry| entry.object == desired.object_ref);
        if hash.is_some() || (earlier && prune::may_exist(downstream, &desired.object_ref).await) {
            recorded.push(Entry {
                object: desired.object_ref.clone(),
                hash: hash.unwrap_or_default(),
                keep: desired.keep(),
            });
        }
    }
    let mut next = Inventory {
        bundle_deployment: previous.bundle_deployment.clone(),
        deployment_id: if failures.is_empty() {
            deployment_id.to_string()
        } else {
            previous.deployment_id.clone()
        },
        objects: recorded,
        created_namespaces: previous.created_namespaces.clone(),
        release_namespace: release_namespace(options),
        keep_resources: options.keep_resources,
        delete_namespace: options.delete_namespace,
        orphan: previous.orphan,
    };
    next.created_namespaces
        .extend(outcome.created_namespaces.iter().cloned());
    next.created_namespaces.sort();
    next.created_namespaces.dedup();
    if !prune_failed.is_empty() {
        next.deployment_id = previous.deployment_id.clone();
    }
    for (object, reason) in prune_failed {
        if let Some(entry) = removed.iter().find(|e| e.object == object) {
            next.objects.push(entry.clone());
        }
        failures.push((object, ObjectError::Pruning(Box::new(reason))));
    }
    store.save(&next).await?;
    if !outcome.patched.is_empty() {
        info!(bundle_deployment = %previous.bundle_deployment, patched = outcome.patched.len(), "applied");
    }
    Ok((next, failures))
}

/// Re-applies drifted objects with force; with `force`, an object the API refuses to update is re-created.
pub async fn correct(
    downstream: &Downstream,
    scope: &Scope,
    objects: &[Desired],
    report: &Report,
    force: bool,
) {
    let manager = scope.field_manager();
    for object_ref in &report.drifted {
        let Some(desired) = objects.iter().find(|d| &d.object_ref == object_ref) else {
            continue;
        };
        if let Err(reason) =
            apply_one(downstream, downstream.client(), &manager, desired, true).await
        {
            if force
                && let Ok(api) = downstream.api_for(downstream.client(), object_ref).await
                && api
                    .delete(&object_ref.name, &Default::default())
                    .await
                    .is_ok()
                && apply_one(downstream, downstream.client(), &manager, desired, true)
                    .await
                    .is_ok()
            {
                continue;
            }
            warn!(object = %object_ref, %reason, "correcting drift");
        }
    }
}

/// The status message for objects that failed, capped like Fleet's lists.
pub fn failure_message(failures: &[(fleet_api::ObjectRef, ObjectError)]) -> String {
    let shown: Vec<String> = failures
        .iter()
        .take(status::LIST_CAP)
        .map(|(object, reason)| format!("{object}: {reason}"))
        .collect();
    let more = failures.len().saturating_sub(status::LIST_CAP);
    if more > 0 {
        format!("{} (and {more} more)", shown.join("; "))
    } else {
        shown.join("; ")
    }
}
