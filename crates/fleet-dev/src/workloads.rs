//! Stand-ins for the workload controllers a simulated cluster lacks (it has no kubelet): every Deployment,
//! StatefulSet and DaemonSet gets the status of a rollout that completed with all replicas available, every
//! Job completes, and every LoadBalancer Service gets an address, as from a load-balancer controller such as
//! k3s's. Without this, nothing with pods (nor a LoadBalancer Service) would ever be Ready in dev mode.

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Service;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::discovery::ApiResource;
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::{Value, json};

use crate::task::Task;

/// Watches the workload kinds of `cluster` and completes their rollouts until the task is dropped.
pub(crate) fn simulate(cluster: kube::Client) -> Task {
    Task::spawn(async move {
        futures::join!(
            complete(cluster.clone(), ApiResource::erase::<Deployment>(&())),
            complete(cluster.clone(), ApiResource::erase::<StatefulSet>(&())),
            complete(cluster.clone(), ApiResource::erase::<DaemonSet>(&())),
            complete(cluster.clone(), ApiResource::erase::<Job>(&())),
            complete(cluster, ApiResource::erase::<Service>(&())),
        );
    })
}

async fn complete(cluster: kube::Client, resource: ApiResource) {
    let all: Api<DynamicObject> = Api::all_with(cluster.clone(), &resource);
    let mut objects = watcher(all, watcher::Config::default())
        .default_backoff()
        .applied_objects()
        .boxed();
    while let Some(object) = objects.next().await {
        let Ok(object) = object else { continue };
        let value = serde_json::to_value(&object).unwrap_or_default();
        let Some(status) = completed_status(&resource.kind, &value) else {
            continue;
        };
        let namespace = object.metadata.namespace.clone().unwrap_or_default();
        let name = object.metadata.name.clone().unwrap_or_default();
        let api: Api<DynamicObject> = Api::namespaced_with(cluster.clone(), &namespace, &resource);
        if let Err(err) = api
            .patch_status(
                &name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": status})),
            )
            .await
        {
            tracing::debug!(kind = %resource.kind, %namespace, %name, error = %err, "simulating a completed rollout");
        }
    }
}

/// The status a completed rollout of `object` has, or `None` when it has it already.
pub fn completed_status(kind: &str, object: &Value) -> Option<Value> {
    let int = |pointer: &str| object.pointer(pointer).and_then(Value::as_i64);
    let generation = int("/metadata/generation").unwrap_or(1);
    let replicas = int("/spec/replicas").unwrap_or(1);
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let status = match kind {
        "Deployment" => json!({
            "observedGeneration": generation,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
            "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
            ],
        }),
        "StatefulSet" => {
            let revision = format!("{name}-{generation}");
            json!({
                "observedGeneration": generation,
                "replicas": replicas,
                "readyReplicas": replicas,
                "currentReplicas": replicas,
                "updatedReplicas": replicas,
                "availableReplicas": replicas,
                "currentRevision": revision,
                "updateRevision": revision,
            })
        }
        "DaemonSet" => json!({
            "observedGeneration": generation,
            "currentNumberScheduled": 1,
            "desiredNumberScheduled": 1,
            "numberAvailable": 1,
            "numberReady": 1,
            "updatedNumberScheduled": 1,
            "numberMisscheduled": 0,
        }),
        "Job" => json!({
            "succeeded": 1,
            "conditions": [{"type": "Complete", "status": "True"}],
        }),
        "Service"
            if object.pointer("/spec/type").and_then(Value::as_str) == Some("LoadBalancer") =>
        {
            json!({"loadBalancer": {"ingress": [{"ip": "127.0.0.1", "ipMode": "VIP"}]}})
        }
        _ => return None,
    };
    let current = object.get("status").cloned().unwrap_or(Value::Null);
    let done = status
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(key, _)| key.as_str() != "conditions")
        .all(|(key, value)| current.get(key) == Some(value));
    (!done).then_some(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_deployment_gets_all_replicas_available_once() {
        let deployment =
            json!({"metadata": {"name": "web", "generation": 2}, "spec": {"replicas": 3}});
        let status = completed_status("Deployment", &deployment).expect("a status to write");
        assert_eq!(status["availableReplicas"], 3);
        assert_eq!(status["observedGeneration"], 2);
        let mut done = deployment.clone();
        done["status"] = status;
        assert_eq!(completed_status("Deployment", &done), None);
        done["metadata"]["generation"] = json!(3);
        assert!(completed_status("Deployment", &done).is_some());
    }

    #[test]
    fn a_load_balancer_service_gets_an_address_and_other_services_do_not() {
        let service = |kind: &str| json!({"metadata": {"name": "web"}, "spec": {"type": kind}});
        let status = completed_status("Service", &service("LoadBalancer")).expect("an address");
        assert_eq!(status["loadBalancer"]["ingress"][0]["ip"], "127.0.0.1");
        let mut served = service("LoadBalancer");
        served["status"] = status;
        assert_eq!(completed_status("Service", &served), None, "once is enough");
        assert_eq!(completed_status("Service", &service("ClusterIP")), None);
    }

    #[test]
    fn other_kinds_are_left_alone() {
        assert_eq!(
            completed_status("ConfigMap", &json!({"metadata": {"name": "c"}})),
            None
        );
    }
}
