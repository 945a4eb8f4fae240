//! Fleet managing fleet with two real controllers (issue #7 item 7). The parent hub from dev mode manages
//! `cluster-1` through the agent in `cattle-fleet-system`. `cluster-1` is also a hub: it runs its own controller
//! and its own local agent in `cattle-fleet-local-system`, registered through its own token. Both fleets deploy
//! objects with the same names into different namespaces, and one object both claim. Each fleet's objects
//! survive the other's prune, and the conflict is reported, not fought over.

mod support;

use std::sync::Arc;

use fleet_agent::Scope;
use fleet_api::{Bundle, BundleDeployment};
use fleet_controller::Settings;
use fleet_controller::cluster::bootstrap::LOCAL_WORKSPACE;
use fleet_dev::cluster::{AgentRunner, precreate_cluster};
use fleet_dev::controller::{ControllerSlot, RunningController};
use fleet_dev::hub::{LOCAL_AGENT_NAMESPACE, SYSTEM_NAMESPACE};
use fleet_dev::{Dev, DevOptions, hub, registration};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;
use support::*;

fn configmap(name: &str, value: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  owner: {value}\n")
}

/// Creates or replaces the Bundle `namespace/name` deploying `files` into `target_namespace` on `cluster`.
async fn put_bundle(
    hub: &kube::Client,
    namespace: &str,
    name: &str,
    cluster: &str,
    target_namespace: &str,
    files: &[(&str, String)],
) {
    let resources: Vec<_> = files
        .iter()
        .map(|(file, content)| json!({"name": file, "content": content}))
        .collect();
    let bundle = json!({
        "apiVersion": fleet_api::API_VERSION, "kind": "Bundle",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "defaultNamespace": target_namespace,
            "resources": resources,
            "targets": [{"clusterName": cluster}],
        },
    });
    Api::<Bundle>::namespaced(hub.clone(), namespace)
        .patch(
            name,
            &PatchParams::apply("test").force(),
            &Patch::Apply(&bundle),
        )
        .await
        .expect("bundle written");
}

/// The `owner` value of a ConfigMap on the cluster, if it exists.
async fn owner_of(cluster: &kube::Client, namespace: &str, name: &str) -> Option<String> {
    let configmap = Api::<ConfigMap>::namespaced(cluster.clone(), namespace)
        .get_opt(name)
        .await
        .ok()??;
    configmap.data?.get("owner").cloned()
}

/// The BundleDeployment of `bundle` on a hub (every cluster namespace is searched).
async fn bundle_deployment(hub: &kube::Client, bundle: &str) -> Option<BundleDeployment> {
    fleet_testing::bundle_deployments(hub)
        .await
        .into_values()
        .find(|bd| bd.metadata.name.as_deref() == Some(bundle))
}

/// The status of the BundleDeployment `app` on `hub` once its agent reports its current deploymentID applied,
/// Ready and unmodified.
async fn applied_and_ready(hub: &kube::Client, what: &str) -> fleet_api::BundleDeploymentStatus {
    eventually(what, || async {
        let bd = bundle_deployment(hub, "app").await?;
        let status = bd.status?;
        (status.applied_deployment_id == bd.spec.deployment_id
            && status.ready
            && status.non_modified)
            .then_some(status)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_fleets_manage_one_cluster_without_harming_each_other() {
    let state = tempfile::tempdir().expect("temp dir");
    let parent = Dev::start(DevOptions {
        clusters: 1,
        repos: Vec::new(),
        data_dir: state.path().join("dev"),
        tuning: fast(),
    })
    .await
    .expect("dev mode starts");
    let parent_hub = parent.hub_client();
    let child = parent.cluster("cluster-1").expect("cluster-1");
    let child_hub = child.client();

    // cluster-1 becomes a hub too: CRDs, the fleet-local bootstrap, its own controller and local agent.
    hub::prepare(&child_hub, &child.api.url(), &child.api.ca_pem)
        .await
        .expect("child hub prepared");
    let settings = Settings {
        git_cache_dir: state.path().join("child-git"),
        system_namespace: SYSTEM_NAMESPACE.to_string(),
        ..Settings::default()
    };
    let _child_controller = RunningController::start(
        child_hub.clone(),
        settings,
        Default::default(),
        Arc::new(ControllerSlot::default()),
    )
    .await;
    let values = registration::token_values(&child_hub, LOCAL_WORKSPACE, "child-local")
        .await
        .expect("registration token values");
    let labels = [("name".to_string(), "local".to_string())].into();
    precreate_cluster(&child_hub, LOCAL_WORKSPACE, "local", "child-local", &labels)
        .await
        .expect("local Cluster");
    let _local_agent = AgentRunner::register_and_start(
        &child.api.server,
        LOCAL_AGENT_NAMESPACE,
        Scope::new(LOCAL_AGENT_NAMESPACE, LOCAL_AGENT_NAMESPACE),
        &values,
        "child-local",
        labels,
        fast().agent,
    )
    .await
    .expect("local agent registered");

    // The parent deploys first and owns `common/conflict`.
    put_bundle(
        &parent_hub,
        WORKSPACE,
        "app",
        "cluster-1",
        "parent-ns",
        &[
            ("shared.yaml", configmap("shared", "parent")),
            ("extra.yaml", configmap("extra", "parent")),
        ],
    )
    .await;
    put_bundle(
        &parent_hub,
        WORKSPACE,
        "owner",
        "cluster-1",
        "common",
        &[("conflict.yaml", configmap("conflict", "parent"))],
    )
    .await;
    eventually("the parent's objects on cluster-1", || async {
        let shared = owner_of(&child_hub, "parent-ns", "shared").await?;
        let conflict = owner_of(&child_hub, "common", "conflict").await?;
        (shared == "parent" && conflict == "parent").then_some(())
    })
    .await;

    // cluster-1's own fleet deploys same-named objects, and claims the parent's object.
    put_bundle(
        &child_hub,
        LOCAL_WORKSPACE,
        "app",
        "local",
        "local-ns",
        &[("shared.yaml", configmap("shared", "local"))],
    )
    .await;
    put_bundle(
        &child_hub,
        LOCAL_WORKSPACE,
        "intruder",
        "local",
        "common",
        &[("conflict.yaml", configmap("conflict", "local"))],
    )
    .await;
    eventually("the local fleet's object on cluster-1", || async {
        (owner_of(&child_hub, "local-ns", "shared").await? == "local").then_some(())
    })
    .await;
    let message = eventually("the conflict reported on the intruder", || async {
        let status = bundle_deployment(&child_hub, "intruder").await?.status?;
        let deployed = fleet_api::find_condition(&status.conditions, "Deployed")?;
        (deployed.status == "False").then(|| deployed.message.clone())
    })
    .await;
    assert!(message.contains("conflict"), "{message}");
    assert_eq!(
        owner_of(&child_hub, "common", "conflict").await.as_deref(),
        Some("parent"),
        "the parent's object is not taken over"
    );

    // The parent prunes a file: only its own object goes; the local fleet's same-named object stays.
    put_bundle(
        &parent_hub,
        WORKSPACE,
        "app",
        "cluster-1",
        "parent-ns",
        &[("shared.yaml", configmap("shared", "parent"))],
    )
    .await;
    eventually("the parent's removed file pruned", || async {
        owner_of(&child_hub, "parent-ns", "extra")
            .await
            .is_none()
            .then_some(())
    })
    .await;
    // The agent prunes before it reports the new deployment applied (a status read in between still lists
    // the pruned object): wait for that report, then look at what survived.
    let parent_app = applied_and_ready(&parent_hub, "the parent app applied and Ready").await;
    assert_eq!(
        owner_of(&child_hub, "local-ns", "shared").await.as_deref(),
        Some("local")
    );
    assert_eq!(
        owner_of(&child_hub, "parent-ns", "shared").await.as_deref(),
        Some("parent")
    );
    // Neither fleet reports the other's objects as its own or as modified.
    assert_eq!(parent_app.resources.len(), 1, "{:?}", parent_app.resources);
    let local_app = applied_and_ready(&child_hub, "the local app applied and Ready").await;
    assert_eq!(local_app.resources.len(), 1, "{:?}", local_app.resources);
    parent.shutdown().await;
}
