//! Observing what a BundleDeployment deployed: one list per kind and namespace, selected by this scope's
//! object-set hash label (so another agent's objects are never seen as ours), plus a read by name for
//! desired objects the list did not return (missing, or present but someone else's). Each object gets a
//! readiness summary ([`crate::readiness`]) and a drift check ([`crate::drift`]); objects of our set that are
//! no longer desired are reported as extra.

use std::collections::{BTreeMap, BTreeSet};

use fleet_api::{
    BundleDeploymentOptions, BundleDeploymentResource, ModifiedStatus, NonReadyStatus, ObjectRef,
    ResourceCounts,
};
use kube::api::{DynamicObject, ListParams};
use serde_json::Value;

use crate::downstream::Downstream;
use crate::drift::{diff, ignored_for};
use crate::readiness::{is_ready, summarize};
use crate::render::Desired;
use crate::scope::{SET_HASH_LABEL, SET_ID_ANNOTATION, Scope};

/// What the downstream cluster looks like for one BundleDeployment.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Report {
    pub non_ready: Vec<NonReadyStatus>,
    pub modified: Vec<ModifiedStatus>,
    pub resources: Vec<BundleDeploymentResource>,
    pub counts: ResourceCounts,
    /// Desired objects that are missing or whose fields we own were changed (what correctDrift repairs).
    pub drifted: Vec<ObjectRef>,
}

/// Observes the live state of `desired` (the objects of `set_id`).
pub async fn observe(
    downstream: &Downstream,
    set_id: &str,
    desired: &[Desired],
    options: &BundleDeploymentOptions,
) -> Report {
    let selector = format!("{SET_HASH_LABEL}={}", Scope::set_hash(set_id));
    let mut groups: BTreeMap<(String, String, String), Vec<&Desired>> = BTreeMap::new();
    for object in desired {
        let r = &object.object_ref;
        groups
            .entry((r.api_version.clone(), r.kind.clone(), r.namespace.clone()))
            .or_default()
            .push(object);
    }
    let mut report = Report::default();
    for ((api_version, kind, namespace), objects) in groups {
        let listed: BTreeMap<String, DynamicObject> = match downstream
            .api_for_kind(&api_version, &kind, &namespace)
            .await
        {
            Ok(api) => match api.list(&ListParams::default().labels(&selector)).await {
                Ok(list) => list
                    .items
                    .into_iter()
                    .filter_map(|o| o.metadata.name.clone().map(|n| (n, o)))
                    .collect(),
                Err(_) => BTreeMap::new(),
            },
            Err(_) => BTreeMap::new(),
        };
        let wanted: BTreeSet<&str> = objects.iter().map(|o| o.object_ref.name.as_str()).collect();
        for object in &objects {
            let live = match listed.get(&object.object_ref.name) {
                Some(live) => Some(live.clone()),
                None => read(downstream, &object.object_ref).await,
            };
            observe_one(&mut report, object, live, set_id, options, desired);
        }
        for (name, live) in &listed {
            if wanted.contains(name.as_str()) || annotation(live) != Some(set_id) {
                continue;
            }
            report.counts.orphaned += 1;
            report.modified.push(ModifiedStatus {
                object: ObjectRef {
                    kind: kind.clone(),
                    api_version: api_version.clone(),
                    namespace: live.metadata.namespace.clone().unwrap_or_default(),
                    name: name.clone(),
                },
                delete: true,
                ..Default::default()
            });
        }
    }
    report.counts.desired_ready = desired.len() as i64;
    report
}

fn annotation(live: &DynamicObject) -> Option<&str> {
    live.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(SET_ID_ANNOTATION))
        .map(String::as_str)
}

async fn read(downstream: &Downstream, object: &ObjectRef) -> Option<DynamicObject> {
    let api = downstream.api_for(downstream.client(), object).await.ok()?;
    api.get_opt(&object.name).await.ok().flatten()
}

fn observe_one(
    report: &mut Report,
    object: &Desired,
    live: Option<DynamicObject>,
    set_id: &str,
    options: &BundleDeploymentOptions,
    bundle: &[Desired],
) {
    let object_ref = object.object_ref.clone();
    let Some(live) = live else {
        report.counts.missing += 1;
        report.drifted.push(object_ref.clone());
        report.modified.push(ModifiedStatus {
            object: object_ref.clone(),
            create: true,
            ..Default::default()
        });
        report.resources.push(BundleDeploymentResource {
            object: object_ref,
            created_at: None,
        });
        return;
    };
    report.resources.push(BundleDeploymentResource {
        object: object_ref.clone(),
        created_at: live.metadata.creation_timestamp.clone(),
    });
    if annotation(&live) != Some(set_id) {
        report.counts.modified += 1;
        report.modified.push(ModifiedStatus {
            object: object_ref,
            create: true,
            exist: true,
            ..Default::default()
        });
        return;
    }
    let live_json = serde_json::to_value(&live).unwrap_or(Value::Null);
    let ignored = ignored_for(&object_ref, options, bundle);
    let patch = diff(&object.object, &live_json, &ignored);
    let modified = patch.is_some();
    if let Some(patch) = patch {
        report.counts.modified += 1;
        report.drifted.push(object_ref.clone());
        report.modified.push(ModifiedStatus {
            object: object_ref.clone(),
            patch: patch.to_string(),
            ..Default::default()
        });
    }
    let summary = summarize(&live_json, &options.ignore.conditions);
    if is_ready(&summary) {
        if !modified {
            report.counts.ready += 1;
        }
    } else {
        if !modified {
            report.counts.not_ready += 1;
        }
        report.non_ready.push(NonReadyStatus {
            uid: live.metadata.uid.clone().unwrap_or_default(),
            object: object_ref,
            summary,
        });
    }
}
