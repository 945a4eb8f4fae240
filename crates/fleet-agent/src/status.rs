//! Building a BundleDeployment's status from what the agent did and saw: conditions Installed, Deployed,
//! Monitored and Ready (timestamps kept while a condition does not change), `appliedDeploymentID`, `ready`,
//! `nonModified`, the non-ready and modified lists sorted and capped at ten (`incompleteState`), `resources`,
//! `resourceCounts`, and `display` with the state Fleet's `GetDeploymentState` would compute.

use fleet_api::{
    BundleDeploymentDisplay, BundleDeploymentSpec, BundleDeploymentStatus, Condition,
    deployment_state, find_condition,
};
use serde_json::Value;

use crate::monitor::Report;

/// How many non-ready or modified resources a status lists (Fleet's cap).
pub const LIST_CAP: usize = 10;

/// What one reconcile did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Observation {
    /// The deploymentID whose objects are applied downstream (empty before the first success).
    pub applied_deployment_id: String,
    /// Why the current deploymentID is not (fully) deployed; `None` when it is.
    pub deploy_error: Option<String>,
    /// What the deployment is waiting for (a Helm hook), when it is still in progress.
    pub waiting: Option<String>,
    /// The live state, when it was observed.
    pub report: Option<Report>,
    /// `options.forceSyncGeneration` that was synced.
    pub sync_generation: Option<i64>,
    /// `spec.downstreamResourcesGeneration` whose copies were applied.
    pub downstream_resources_generation: Option<i64>,
    /// A note for the `Installed` condition when installed (e.g. Helm hooks not run).
    pub installed_note: String,
}

impl Observation {
    /// A reconcile still deploying (waiting for `message`): the previously applied deploymentID stays.
    pub fn waiting(applied_deployment_id: &str, message: String) -> Self {
        Observation {
            applied_deployment_id: applied_deployment_id.to_string(),
            waiting: Some(message),
            ..Default::default()
        }
    }

    /// A reconcile that could not deploy: the previously applied deploymentID stays, with `message`.
    pub fn failed(applied_deployment_id: &str, message: String) -> Self {
        Observation {
            applied_deployment_id: applied_deployment_id.to_string(),
            deploy_error: Some(message),
            ..Default::default()
        }
    }
}

/// The new status, starting from `previous` (for condition timestamps).
pub fn build(
    previous: &BundleDeploymentStatus,
    spec: &BundleDeploymentSpec,
    observation: &Observation,
    now: &str,
) -> BundleDeploymentStatus {
    let mut status = BundleDeploymentStatus {
        conditions: previous.conditions.clone(),
        applied_deployment_id: observation.applied_deployment_id.clone(),
        sync_generation: observation.sync_generation.or(previous.sync_generation),
        downstream_resources_generation: observation
            .downstream_resources_generation
            .unwrap_or(previous.downstream_resources_generation),
        ..Default::default()
    };
    // Not deployed: an error (False), or still in progress (Unknown); the message says which.
    let deployed = observation
        .deploy_error
        .clone()
        .or_else(|| observation.waiting.clone());
    let deployed_status = match (&observation.deploy_error, &observation.waiting) {
        (Some(_), _) => FALSE,
        (None, Some(_)) => UNKNOWN,
        (None, None) => TRUE,
    };
    set_condition(
        &mut status.conditions,
        "Installed",
        deployed_status,
        deployed.as_deref().unwrap_or(&observation.installed_note),
        now,
    );
    set_condition(
        &mut status.conditions,
        "Deployed",
        deployed_status,
        deployed.as_deref().unwrap_or(""),
        now,
    );
    match &observation.report {
        Some(report) => {
            let mut non_ready = report.non_ready.clone();
            non_ready.sort_by_key(|s| s.object.to_string());
            let mut modified = report.modified.clone();
            modified.sort_by_key(|s| s.object.to_string());
            status.ready = non_ready.is_empty();
            status.non_modified = modified.is_empty();
            status.incomplete_state = non_ready.len() > LIST_CAP || modified.len() > LIST_CAP;
            let ready_message = non_ready
                .first()
                .map(|s| {
                    format!(
                        "{} {}: {}",
                        s.object,
                        s.summary.state,
                        s.summary.message.join("; ")
                    )
                })
                .or_else(|| modified.first().map(ToString::to_string));
            non_ready.truncate(LIST_CAP);
            modified.truncate(LIST_CAP);
            status.non_ready_status = non_ready;
            status.modified_status = modified;
            let mut resources = report.resources.clone();
            resources.sort_by_key(|r| r.object.to_string());
            status.resources = resources;
            status.resource_counts = report.counts.clone();
            set_condition(&mut status.conditions, "Monitored", TRUE, "", now);
            let message = deployed.clone().or(ready_message);
            let ready = deployed.is_none() && status.ready && status.non_modified;
            set_condition(
                &mut status.conditions,
                "Ready",
                if ready { TRUE } else { FALSE },
                message.as_deref().unwrap_or(""),
                now,
            );
        }
        None => {
            status.resources = previous.resources.clone();
            status.resource_counts = previous.resource_counts.clone();
            let message = deployed
                .clone()
                .unwrap_or_else(|| "not monitored yet".to_string());
            set_condition(&mut status.conditions, "Monitored", FALSE, "", now);
            set_condition(&mut status.conditions, "Ready", FALSE, &message, now);
        }
    }
    status.display = BundleDeploymentDisplay {
        deployed: display_condition(&status.conditions, "Deployed"),
        monitored: display_condition(&status.conditions, "Monitored"),
        state: deployment_state(spec, &status).as_str().to_string(),
    };
    status
}

fn display_condition(conditions: &[Condition], type_: &str) -> String {
    match find_condition(conditions, type_) {
        Some(c) if !c.is_true() && !c.message.is_empty() => format!("Error: {}", c.message),
        Some(c) => c.status.clone(),
        None => String::new(),
    }
}

const TRUE: &str = "True";
const FALSE: &str = "False";
const UNKNOWN: &str = "Unknown";

/// Sets a condition to `status` (`True`, `False` or `Unknown`), keeping its timestamps when neither status
/// nor message changed.
pub fn set_condition(
    conditions: &mut Vec<Condition>,
    type_: &str,
    status: &str,
    message: &str,
    now: &str,
) {
    match conditions.iter_mut().find(|c| c.type_ == type_) {
        Some(c) if c.status == status && c.message == message => {}
        Some(c) => {
            if c.status != status {
                c.last_transition_time = now.to_string();
            }
            c.status = status.to_string();
            c.message = message.to_string();
            c.last_update_time = now.to_string();
        }
        None => conditions.push(Condition {
            type_: type_.to_string(),
            status: status.to_string(),
            last_update_time: now.to_string(),
            last_transition_time: now.to_string(),
            message: message.to_string(),
            ..Default::default()
        }),
    }
}

/// The JSON merge patch turning `old` into `new` at `status` (fields that disappeared become `null`), or
/// `None` when nothing changed.
pub fn merge_patch(old: &BundleDeploymentStatus, new: &BundleDeploymentStatus) -> Option<Value> {
    if old == new {
        return None;
    }
    let mut new_json = serde_json::to_value(new).expect("status serializes");
    let old_json = serde_json::to_value(old).expect("status serializes");
    if let (Some(new_map), Some(old_map)) = (new_json.as_object_mut(), old_json.as_object()) {
        for key in old_map.keys() {
            new_map.entry(key.clone()).or_insert(Value::Null);
        }
    }
    Some(serde_json::json!({ "status": new_json }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_api::{ModifiedStatus, NonReadyStatus, ObjectRef, ResourceSummary};

    fn object(name: &str) -> ObjectRef {
        ObjectRef {
            kind: "ConfigMap".into(),
            api_version: "v1".into(),
            namespace: "ns".into(),
            name: name.into(),
        }
    }

    fn spec(id: &str) -> BundleDeploymentSpec {
        BundleDeploymentSpec {
            deployment_id: id.into(),
            staged_deployment_id: id.into(),
            ..Default::default()
        }
    }

    #[test]
    fn lists_are_sorted_and_capped_and_state_follows_fleet() {
        let report = Report {
            non_ready: (0..12)
                .rev()
                .map(|i| NonReadyStatus {
                    object: object(&format!("c{i:02}")),
                    summary: ResourceSummary {
                        state: "updating".into(),
                        transitioning: true,
                        message: vec!["waiting".into()],
                        ..Default::default()
                    },
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let observation = Observation {
            applied_deployment_id: "s-1:a".into(),
            report: Some(report),
            ..Default::default()
        };
        let status = build(&Default::default(), &spec("s-1:a"), &observation, "t0");
        assert_eq!(status.non_ready_status.len(), LIST_CAP);
        assert!(status.incomplete_state);
        assert_eq!(status.non_ready_status[0].object.name, "c00");
        assert_eq!(status.display.state, "NotReady");
        let ready = find_condition(&status.conditions, "Ready").unwrap();
        assert_eq!(ready.message, "configmap.v1 ns/c00 updating: waiting");
    }

    #[test]
    fn modified_and_errors_and_stable_timestamps() {
        let report = Report {
            modified: vec![ModifiedStatus {
                object: object("a"),
                patch: r#"{"data":{"k":"v"}}"#.into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let observation = Observation {
            applied_deployment_id: "s-1:a".into(),
            report: Some(report),
            ..Default::default()
        };
        let first = build(&Default::default(), &spec("s-1:a"), &observation, "t0");
        assert_eq!(first.display.state, "Modified");
        let again = build(&first, &spec("s-1:a"), &observation, "t1");
        assert_eq!(merge_patch(&first, &again), None, "no change, no patch");
        let failed = Observation {
            applied_deployment_id: String::new(),
            deploy_error: Some("rendering: bad".into()),
            ..Default::default()
        };
        let status = build(&first, &spec("s-1:b"), &failed, "t2");
        assert_eq!(status.display.state, "ErrApplied");
        assert_eq!(status.display.deployed, "Error: rendering: bad");
        let patch = merge_patch(&first, &status).unwrap();
        assert_eq!(patch["status"]["modifiedStatus"], Value::Null);
    }
}
