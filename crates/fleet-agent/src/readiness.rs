//! Readiness of one live object, kstatus-style, as Fleet's summarizers report it: `error` (failed),
//! `transitioning` (not there yet) or ready, with a state word and messages. Kinds with known semantics
//! (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, Pod, Service of type LoadBalancer, PVC, CRD) are
//! checked by their status fields; every other kind by the generic `Ready`, `Available`, `Failed` and
//! `Stalled` conditions. Conditions matched by `ignore.conditions` are dropped first.

use std::collections::BTreeMap;

use fleet_api::ResourceSummary;
use serde_json::Value;

/// The summary of a live object; ready when neither `error` nor `transitioning`.
pub fn summarize(object: &Value, ignore: &[BTreeMap<String, String>]) -> ResourceSummary {
    let conditions: Vec<&Value> = object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter(|c| !ignored(c, ignore)).collect())
        .unwrap_or_default();
    let condition = |type_: &str| {
        conditions
            .iter()
            .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
            .copied()
    };
    let is = |type_: &str, status: &str| {
        condition(type_)
            .and_then(|c| c.get("status"))
            .and_then(Value::as_str)
            == Some(status)
    };
    let message_of = |type_: &str| {
        condition(type_)
            .and_then(|c| c.get("message").and_then(Value::as_str))
            .filter(|m| !m.is_empty())
            .map(str::to_string)
    };
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    let group = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .and_then(|v| v.split_once('/'))
        .map_or("", |(group, _)| group);
    let int = |pointer: &str| object.pointer(pointer).and_then(Value::as_i64);

    for failed in ["Failed", "Stalled"] {
        if is(failed, "True") {
            return error(message_of(failed).unwrap_or_else(|| failed.to_string()));
        }
    }
    if let Some(c) = conditions
        .iter()
        .find(|c| c.get("reason").and_then(Value::as_str) == Some("Error"))
    {
        let message = c.get("message").and_then(Value::as_str).unwrap_or("error");
        return error(message.to_string());
    }

    let generation = int("/metadata/generation").unwrap_or(0);
    let observed = int("/status/observedGeneration");
    let stale = || generation > 0 && observed.is_none_or(|o| o < generation);
    let replicas = int("/spec/replicas").unwrap_or(1);
    match (group, kind) {
        ("apps", "Deployment") => {
            if is("ReplicaFailure", "True") {
                return error(
                    message_of("ReplicaFailure").unwrap_or_else(|| "replica failure".into()),
                );
            }
            if is("Progressing", "False") {
                return error(
                    message_of("Progressing").unwrap_or_else(|| "not progressing".into()),
                );
            }
            if stale() {
                return transitioning(
                    "updating",
                    "waiting for the controller to observe the latest generation",
                );
            }
            let updated = int("/status/updatedReplicas").unwrap_or(0);
            let available = int("/status/availableReplicas").unwrap_or(0);
            if updated < replicas {
                return transitioning("updating", &format!("Updated: {updated}/{replicas}"));
            }
            if available < replicas {
                return transitioning("updating", &format!("Available: {available}/{replicas}"));
            }
        }
        ("apps", "StatefulSet") => {
            if stale() {
                return transitioning(
                    "updating",
                    "waiting for the controller to observe the latest generation",
                );
            }
            let ready = int("/status/readyReplicas").unwrap_or(0);
            if ready < replicas {
                return transitioning("updating", &format!("Ready: {ready}/{replicas}"));
            }
            let current = object.pointer("/status/currentRevision");
            let update = object.pointer("/status/updateRevision");
            if update.is_some() && current != update {
                return transitioning("updating", "rolling out the update revision");
            }
        }
        ("apps", "DaemonSet") => {
            if stale() {
                return transitioning(
                    "updating",
                    "waiting for the controller to observe the latest generation",
                );
            }
            let desired = int("/status/desiredNumberScheduled").unwrap_or(0);
            let available = int("/status/numberAvailable").unwrap_or(0);
            let updated = int("/status/updatedNumberScheduled").unwrap_or(0);
            if updated < desired || available < desired {
                return transitioning("updating", &format!("Available: {available}/{desired}"));
            }
        }
        ("apps", "ReplicaSet") => {
            if is("ReplicaFailure", "True") {
                return error(
                    message_of("ReplicaFailure").unwrap_or_else(|| "replica failure".into()),
                );
            }
            let available = int("/status/availableReplicas").unwrap_or(0);
            if stale() || available < replicas {
                return transitioning("updating", &format!("Available: {available}/{replicas}"));
            }
        }
        ("batch", "Job") => {
            if is("Complete", "True") {
                return ready();
            }
            return transitioning("in-progress", "the job has not completed");
        }
        ("", "Pod") => match object.pointer("/status/phase").and_then(Value::as_str) {
            Some("Succeeded") => return ready(),
            Some("Failed") => return error("the pod failed".into()),
            Some("Running") if is("Ready", "True") => return ready(),
            phase => {
                return transitioning(
                    "pending",
                    &format!("pod phase {}", phase.unwrap_or("unknown")),
                );
            }
        },
        ("", "Service") => {
            let load_balancer =
                object.pointer("/spec/type").and_then(Value::as_str) == Some("LoadBalancer");
            let ingress = object
                .pointer("/status/loadBalancer/ingress")
                .and_then(Value::as_array)
                .is_some_and(|list| !list.is_empty());
            if load_balancer && !ingress {
                return transitioning("pending", "waiting for a load balancer ingress");
            }
            return ready();
        }
        ("", "PersistentVolumeClaim") => {
            if object.pointer("/status/phase").and_then(Value::as_str) != Some("Bound") {
                return transitioning("pending", "the claim is not bound");
            }
            return ready();
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            if !is("Established", "True") {
                return transitioning("pending", "the CRD is not established");
            }
            return ready();
        }
        _ => {}
    }
    if is("Ready", "False") {
        return transitioning(
            "unavailable",
            &message_of("Ready").unwrap_or_else(|| "not ready".into()),
        );
    }
    if is("Available", "False") {
        return transitioning(
            "updating",
            &message_of("Available").unwrap_or_else(|| "not available".into()),
        );
    }
    ready()
}

fn ignored(condition: &Value, ignore: &[BTreeMap<String, String>]) -> bool {
    ignore.iter().any(|rule| {
        !rule.is_empty()
            && rule
                .iter()
                .all(|(key, value)| condition.get(key).and_then(Value::as_str) == Some(value))
    })
}

fn ready() -> ResourceSummary {
    ResourceSummary {
        state: "active".into(),
        ..Default::default()
    }
}

fn error(message: String) -> ResourceSummary {
    ResourceSummary {
        state: "error".into(),
        error: true,
        message: vec![message],
        ..Default::default()
    }
}

fn transitioning(state: &str, message: &str) -> ResourceSummary {
    ResourceSummary {
        state: state.into(),
        transitioning: true,
        message: vec![message.to_string()],
        ..Default::default()
    }
}

/// Whether a summary means ready.
pub fn is_ready(summary: &ResourceSummary) -> bool {
    !summary.error && !summary.transitioning
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(status: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"generation": 2},
               "spec": {"replicas": 2}, "status": status})
    }

    #[test]
    fn deployments_wait_for_observed_generation_and_available_replicas() {
        let s = summarize(&deployment(json!({})), &[]);
        assert!(s.transitioning && s.state == "updating", "{s:?}");
        let s = summarize(
            &deployment(
                json!({"observedGeneration": 2, "updatedReplicas": 2, "availableReplicas": 1}),
            ),
            &[],
        );
        assert_eq!(s.message, ["Available: 1/2"]);
        let s = summarize(
            &deployment(
                json!({"observedGeneration": 2, "updatedReplicas": 2, "availableReplicas": 2}),
            ),
            &[],
        );
        assert!(is_ready(&s), "{s:?}");
        let s = summarize(
            &deployment(json!({"observedGeneration": 2, "conditions": [
                {"type": "Progressing", "status": "False", "message": "deadline exceeded"}]})),
            &[],
        );
        assert!(s.error && s.message == ["deadline exceeded"], "{s:?}");
    }

    #[test]
    fn kinds_with_their_own_rules() {
        let lb = json!({"apiVersion": "v1", "kind": "Service", "spec": {"type": "LoadBalancer"}});
        assert!(summarize(&lb, &[]).transitioning);
        let lb_ready = json!({"apiVersion": "v1", "kind": "Service", "spec": {"type": "LoadBalancer"},
                              "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}}});
        assert!(is_ready(&summarize(&lb_ready, &[])));
        let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "status": {"phase": "Pending"}});
        assert!(summarize(&pvc, &[]).transitioning);
        let job = json!({"apiVersion": "batch/v1", "kind": "Job", "status": {"conditions": [
            {"type": "Failed", "status": "True", "message": "BackoffLimitExceeded"}]}});
        assert!(summarize(&job, &[]).error);
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                         "status": {"conditions": [{"type": "Established", "status": "True"}]}});
        assert!(is_ready(&summarize(&crd, &[])));
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap"});
        assert!(is_ready(&summarize(&cm, &[])));
    }

    #[test]
    fn generic_conditions_and_ignore_rules() {
        let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget", "status": {"conditions": [
            {"type": "Ready", "status": "False", "message": "warming up"}]}});
        let s = summarize(&widget, &[]);
        assert!(s.transitioning && s.message == ["warming up"], "{s:?}");
        let ignore = [BTreeMap::from([
            ("type".to_string(), "Ready".to_string()),
            ("status".to_string(), "False".to_string()),
        ])];
        assert!(is_ready(&summarize(&widget, &ignore)));
        let stalled = json!({"apiVersion": "example.com/v1", "kind": "Widget", "status": {"conditions": [
            {"type": "Stalled", "status": "True", "message": "bad spec"}]}});
        assert!(summarize(&stalled, &[]).error);
    }
}
