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
use fleet_dev::{hub, registration};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;
use support::*;

fn configmap(name: &str, value: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  owner: {value}\n")
}

/// One fleet: its hub, the workspace its bundles go in, the cluster they target, and the `owner` value its
/// ConfigMaps carry.
struct Fleet<'a> {
    hub: &'a kube::Client,
    workspace: &'a str,
    cluster: &'a str,
    owner: &'a str,
}

impl Fleet<'_> {
    /// Creates or replaces the Bundle `name` deploying into `target_namespace` on the fleet's cluster one
    /// ConfigMap per name in `configmaps` (file `<name>.yaml`, `owner` the fleet's).
    async fn put_bundle(&self, name: &str, target_namespace: &str, configmaps: &[&str]) {
        let resources: Vec<_> = configmaps
            .iter()
            .map(|cm| json!({"name": format!("{cm}.yaml"), "content": configmap(cm, self.owner)}))
            .collect();
        let bundle = json!({
            "apiVersion": fleet_api::API_VERSION, "kind": "Bundle",
            "metadata": {"name": name, "namespace": self.workspace},
            "spec": {
                "defaultNamespace": target_namespace,
                "resources": resources,
                "targets": [{"clusterName": self.cluster}],
            },
        });
        Api::<Bundle>::namespaced(self.hub.clone(), self.workspace)
            .patch(
                name,
                &PatchParams::apply("test").force(),
                &Patch::Apply(&bundle),
            )
            .await
            .expect("bundle written");
    }
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
    let parent = dev_mode(1, Vec::new(), state.path()).await;
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

    let parent_fleet = Fleet {
        hub: &parent_hub,
        workspace: WORKSPACE,
        cluster: "cluster-1",
        owner: "parent",
    };
    let local_fleet = Fleet {
        hub: &child_hub,
        workspace: LOCAL_WORKSPACE,
        cluster: "local",
        owner: "local",
    };

    // The parent deploys first and owns `common/conflict`.
    parent_fleet
        .put_bundle("app", "parent-ns", &["shared", "extra"])
        .await;
    parent_fleet
        .put_bundle("owner", "common", &["conflict"])
        .await;
    eventually("the parent's objects on cluster-1", || async {
        let shared = owner_of(&child_hub, "parent-ns", "shared").await?;
        let conflict = owner_of(&child_hub, "common", "conflict").await?;
        (shared == "parent" && conflict == "parent").then_some(())
    })
    .await;

    // cluster-1's own fleet deploys same-named objects, and claims the parent's object.
    local_fleet.put_bundle("app", "local-ns", &["shared"]).await;
    local_fleet
        .put_bundle("intruder", "common", &["conflict"])
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
    parent_fleet
        .put_bundle("app", "parent-ns", &["shared"])
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
