//! Observing what a BundleDeployment deployed: one list per kind and namespace, selected by this agent's
//! scope label and shared by every BundleDeployment observed in the same pass ([`ListCache`]), so an idle
//! agent makes a handful of requests per pass however many BundleDeployments it has; objects are then told
//! apart by their object-set ID (another agent's objects are never seen as ours). Desired objects the list
//! did not return are read by name (missing, or present but someone else's). Each object gets a
//! readiness summary ([`crate::readiness`]) and a drift check ([`crate::drift`]); objects of our set that are
//! no longer desired are reported as extra (Helm hooks excepted: they are not release objects). Secret values
//! never reach a drift patch.

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
use crate::scope::{SCOPE_LABEL, SET_ID_ANNOTATION, Scope};

/// Lists of this scope's objects per `(apiVersion, kind, namespace)`, filled on first use in a pass.
#[derive(Default)]
pub struct ListCache {
    lists: BTreeMap<(String, String, String), BTreeMap<String, DynamicObject>>,
}

impl ListCache {
    /// Forgets the lists of the groups `objects` belong to (after they were written).
    pub fn invalidate(&mut self, objects: &[Desired]) {
        for object in objects {
            let r = &object.object_ref;
            self.lists
                .remove(&(r.api_version.clone(), r.kind.clone(), r.namespace.clone()));
        }
    }

    async fn list(
        &mut self,
        downstream: &Downstream,
        scope: &Scope,
        key: &(String, String, String),
    ) -> &BTreeMap<String, DynamicObject> {
        if !self.lists.contains_key(key) {
            let selector = format!("{SCOPE_LABEL}={}", scope.label_value());
            let listed = match downstream.api_for_kind(&key.0, &key.1, &key.2).await {
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
            self.lists.insert(key.clone(), listed);
        }
        &self.lists[key]
    }
}

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

/// Observes the live state of `desired` (the objects of `set_id` in `scope`).
pub async fn observe(
    downstream: &Downstream,
    cache: &mut ListCache,
    scope: &Scope,
    set_id: &str,
    desired: &[Desired],
    options: &BundleDeploymentOptions,
) -> Report {
    let mut groups: BTreeMap<(String, String, String), Vec<&Desired>> = BTreeMap::new();
    for object in desired {
        let r = &object.object_ref;
        groups
            .entry((r.api_version.clone(), r.kind.clone(), r.namespace.clone()))
            .or_default()
            .push(object);
    }
    let mut report = Report::default();
    for (key, objects) in groups {
        let (api_version, kind, _) = &key;
        let listed: BTreeMap<String, DynamicObject> = cache
            .list(downstream, scope, &key)
            .await
            .iter()
            .filter(|(_, live)| annotation(live) == Some(set_id))
            .map(|(name, live)| (name.clone(), live.clone()))
            .collect();
        let wanted: BTreeSet<&str> = objects.iter().map(|o| o.object_ref.name.as_str()).collect();
        for object in &objects {
            let live = match listed.get(&object.object_ref.name) {
                Some(live) => Some(live.clone()),
                None => read(downstream, &object.object_ref).await,
            };
            observe_one(&mut report, object, live, set_id, options, desired);
        }
        for (name, live) in &listed {
            if wanted.contains(name.as_str()) || is_hook(live) {
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

/// Helm hooks carry the set's marks (their watch events must find their BundleDeployment) but are not part
/// of the release, so they are never reported as extra.
fn is_hook(live: &DynamicObject) -> bool {
    live.metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(crate::hooks::HOOK_ANNOTATION))
}

/// A Secret's drift patch with every value under `data` and `stringData` replaced by `(redacted)`: the
/// keys that differ are reported, never their contents.
fn redact_secret(object: &ObjectRef, mut patch: Value) -> Value {
    if object.kind == "Secret" && object.api_version == "v1" {
        for field in ["data", "stringData"] {
            if let Some(values) = patch.get_mut(field).and_then(Value::as_object_mut) {
                for value in values.values_mut() {
                    if !value.is_null() {
                        *value = Value::String("(redacted)".to_string());
                    }
                }
            }
        }
    }
    patch
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
    let ignored = ignored_for(&object_ref, options, bundle);
    let Some(live) = live else {
        if ignored.whole_object() {
            // Not checked for drift: its absence is neither missing nor something to repair.
            report.counts.ready += 1;
            return;
        }
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
    if annotation(&live) != Some(set_id) && !ignored.whole_object() {
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
    let patch = diff(&object.object, &live_json, &ignored);
    let modified = patch.is_some();
    if let Some(patch) = patch {
        report.counts.modified += 1;
        report.drifted.push(object_ref.clone());
        report.modified.push(ModifiedStatus {
            object: object_ref.clone(),
            patch: redact_secret(&object_ref, patch).to_string(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_drift_names_keys_but_never_values() {
        let secret = ObjectRef {
            kind: "Secret".into(),
            api_version: "v1".into(),
            namespace: "ns".into(),
            name: "s".into(),
        };
        let patch = json!({"data": {"password": "aHVudGVyMg==", "gone": null}, "type": "Opaque"});
        assert_eq!(
            redact_secret(&secret, patch.clone()),
            json!({"data": {"password": "(redacted)", "gone": null}, "type": "Opaque"})
        );
        let config_map = ObjectRef {
            kind: "ConfigMap".into(),
            ..secret
        };
        assert_eq!(redact_secret(&config_map, patch.clone()), patch);
    }
}
