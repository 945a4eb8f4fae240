//! Manager-initiated registration end to end, on two API servers reached over loopback HTTP: a hub that
//! requires authentication and a downstream cluster. A Cluster whose `kubeConfigSecret` points at the
//! downstream cluster gets the agent's objects installed there by the controller; an agent started from the
//! bootstrap Secret it wrote registers and the Cluster becomes Joined and Ready; changed agent settings
//! update the Deployment in place, a bumped `redeployAgentGeneration` installs it anew; deleting the Cluster
//! removes the agent. A kubeconfig that cannot be used is reported on the Cluster without its content.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use fleet_agent::registration::{self, BOOTSTRAP_SECRET, CREDENTIALS_SECRET};
use fleet_agent::tls::TlsMode;
use fleet_agent::{Agent, AgentConfig, Downstream, Scope};
use fleet_api::Cluster;
use fleet_testing::TestCluster;
use fleet_testing::secret_data;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod, PodSpec, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;
use support::*;

const SYSTEM_NS: &str = "cattle-fleet-system";
const AGENT_NS: &str = "edge-agent";

async fn create_secret(client: &kube::Client, name: &str, data: &[(&str, &str)]) {
    let secret: Secret =
        serde_json::from_value(json!({"metadata": {"name": name}, "data": secret_data(data)}))
            .unwrap();
    Api::<Secret>::namespaced(client.clone(), NS)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
}

/// A hub with the controller's configuration ConfigMap (`apiServerURL`, as the fleet chart writes it).
async fn hub_with_address() -> TestCluster {
    let hub = authenticated_hub().await;
    create_namespace(&hub.client, SYSTEM_NS).await;
    let (addr, _) = hub.serve_loopback().await;
    let config: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "fleet-controller"},
        "data": {"config": json!({"apiServerURL": format!("http://{addr}"), "agentImage": "fleet:test"}).to_string()},
    }))
    .unwrap();
    Api::<ConfigMap>::namespaced(hub.client.clone(), SYSTEM_NS)
        .create(&PostParams::default(), &config)
        .await
        .unwrap();
    hub
}

async fn create_cluster(client: &kube::Client, name: &str, spec: serde_json::Value) {
    let cluster: Cluster = serde_json::from_value(json!({
        "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "Cluster",
        "metadata": {"name": name, "namespace": NS, "labels": {"env": "edge"}},
        "spec": spec,
    }))
    .unwrap();
    Api::<Cluster>::namespaced(client.clone(), NS)
        .create(&PostParams::default(), &cluster)
        .await
        .unwrap();
}

/// Sets `agentImage` in the controller's configuration ConfigMap (see [`hub_with_address`]).
async fn set_agent_image(hub: &kube::Client, image: &str) {
    let configs: Api<ConfigMap> = Api::namespaced(hub.clone(), SYSTEM_NS);
    let mut config = configs.get("fleet-controller").await.unwrap();
    let mut settings: serde_json::Value =
        serde_json::from_str(&config.data.as_ref().unwrap()["config"]).unwrap();
    settings["agentImage"] = json!(image);
    config
        .data
        .as_mut()
        .unwrap()
        .insert("config".into(), settings.to_string());
    configs
        .replace("fleet-controller", &PostParams::default(), &config)
        .await
        .unwrap();
}

/// A hub (see [`hub_with_address`]) with the controller running, and the Cluster `edge` (labelled
/// `env: edge`) whose kubeconfig Secret `secret` reaches the empty cluster `downstream`.
struct Import {
    hub: TestCluster,
    controller: RunningController,
    downstream: TestCluster,
}

/// [`Import`] with `spec` as the Cluster's spec beside `kubeConfigSecret`.
async fn import_edge(secret: &str, mut spec: serde_json::Value) -> Import {
    let hub = hub_with_address().await;
    let controller = RunningController::start(hub.client.clone()).await;
    let downstream = TestCluster::empty();
    let (_, kubeconfig) = downstream.serve_loopback().await;
    create_secret(&hub.client, secret, &[("value", &kubeconfig)]).await;
    spec["kubeConfigSecret"] = json!(secret);
    create_cluster(&hub.client, "edge", spec).await;
    Import {
        hub,
        controller,
        downstream,
    }
}

fn condition(cluster: &Cluster, type_: &str) -> Option<(String, String)> {
    let condition = fleet_api::find_condition(&cluster.status.as_ref()?.conditions, type_)?;
    Some((condition.status.clone(), condition.message.clone()))
}

/// The pod template's spec of a Deployment (the agent's), which must have one.
fn pod_spec(deployment: &Deployment) -> &PodSpec {
    deployment
        .spec
        .as_ref()
        .unwrap()
        .template
        .spec
        .as_ref()
        .unwrap()
}

fn env_names(deployment: &Deployment) -> Vec<String> {
    pod_spec(deployment).containers[0]
        .env
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|e| e.name)
        .collect()
}

#[tokio::test]
async fn a_cluster_with_a_kubeconfig_secret_gets_its_agent_installed_updated_and_removed() {
    let Import {
        hub,
        controller,
        downstream,
    } = import_edge("edge-kubeconfig", json!({"agentNamespace": AGENT_NS})).await;
    let clusters: Api<Cluster> = Api::namespaced(hub.client.clone(), NS);

    // The agent's objects, downstream.
    let deployments: Api<Deployment> = Api::namespaced(downstream.client.clone(), AGENT_NS);
    let deployment = eventually("the agent Deployment downstream", || async {
        deployments.get_opt("fleet-agent").await.ok().flatten()
    })
    .await;
    let pod = pod_spec(&deployment);
    assert_eq!(pod.service_account_name.as_deref(), Some("fleet-agent"));
    assert_eq!(pod.containers[0].image.as_deref(), Some("fleet:test"));
    let cluster = clusters.get("edge").await.unwrap();
    let client_id = cluster.spec.client_id.clone();
    assert!(
        !client_id.is_empty(),
        "the controller gave the Cluster a clientID"
    );
    assert!(
        pod.containers[0]
            .args
            .as_ref()
            .unwrap()
            .contains(&format!("--client-id={client_id}"))
    );
    let config = Api::<ConfigMap>::namespaced(downstream.client.clone(), AGENT_NS)
        .get("fleet-agent")
        .await
        .unwrap();
    let config: serde_json::Value = serde_json::from_str(&config.data.unwrap()["config"]).unwrap();
    assert_eq!(config["clientID"], client_id.as_str());
    assert!(
        Api::<ServiceAccount>::namespaced(downstream.client.clone(), AGENT_NS)
            .get_opt("fleet-agent")
            .await
            .unwrap()
            .is_some()
    );
    let binding = Api::<ClusterRoleBinding>::all(downstream.client.clone())
        .get("edge-agent-fleet-agent-role-binding")
        .await
        .unwrap();
    assert_eq!(binding.role_ref.name, "edge-agent-fleet-agent-role");
    assert_eq!(
        binding.subjects.unwrap()[0].namespace.as_deref(),
        Some(AGENT_NS)
    );
    let cluster = eventually("the import recorded in the Cluster's status", || async {
        let cluster = clusters.get("edge").await.ok()?;
        (condition(&cluster, "Imported")?.0 == "True").then_some(cluster)
    })
    .await;
    assert_eq!(
        cluster.status.as_ref().unwrap().agent_deployed_generation,
        Some(0)
    );

    // The agent registers from the bootstrap Secret and checks in: the Cluster joins.
    let (agent_hub, credentials) = registration::connect(
        &downstream.client,
        AGENT_NS,
        Some(&client_id),
        BTreeMap::new(),
        Duration::from_secs(60),
        TlsMode::default(),
    )
    .await
    .expect("registered");
    assert_eq!(
        credentials.cluster.name, "edge",
        "found its Cluster by clientID"
    );
    let start_agent = |agent_hub: kube::Client| {
        let mut config = AgentConfig::new(
            agent_hub,
            credentials.deployment_namespace.clone(),
            Scope::new(AGENT_NS, AGENT_NS),
        );
        config.cluster = Some(credentials.cluster.clone());
        let target = downstream.clone();
        tokio::spawn(
            Agent::new(
                config,
                Downstream::new(Arc::new(move |user: Option<&str>| target.client_as(user))),
            )
            .run(),
        )
    };
    let agent = start_agent(agent_hub.clone());
    eventually("the Cluster Joined and Ready", || async {
        let cluster = clusters.get("edge").await.ok()?;
        (condition(&cluster, "Joined")?.0 == "True" && condition(&cluster, "Ready")?.0 == "True")
            .then_some(())
    })
    .await;

    // Changed agent settings update the Deployment; the agent keeps its registration.
    clusters
        .patch(
            "edge",
            &PatchParams::default(),
            &Patch::Merge(
                &json!({"spec": {"agentEnvVars": [{"name": "HTTPS_PROXY", "value": "http://proxy:3128"}]}}),
            ),
        )
        .await
        .unwrap();
    eventually("the Deployment with the new variable", || async {
        let deployment = deployments.get("fleet-agent").await.ok()?;
        env_names(&deployment)
            .contains(&"HTTPS_PROXY".to_string())
            .then_some(())
    })
    .await;
    let secrets: Api<Secret> = Api::namespaced(downstream.client.clone(), AGENT_NS);
    assert!(secrets.get_opt(CREDENTIALS_SECRET).await.unwrap().is_some());
    assert!(secrets.get_opt(BOOTSTRAP_SECRET).await.unwrap().is_none());

    // A bumped redeployAgentGeneration installs the agent anew: new bootstrap Secret, old credentials gone.
    clusters
        .patch(
            "edge",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"redeployAgentGeneration": 1}})),
        )
        .await
        .unwrap();
    eventually("a new bootstrap Secret", || async {
        secrets.get_opt(BOOTSTRAP_SECRET).await.ok().flatten()
    })
    .await;
    assert!(secrets.get_opt(CREDENTIALS_SECRET).await.unwrap().is_none());
    eventually("agentDeployedGeneration 1", || async {
        let cluster = clusters.get("edge").await.ok()?;
        (cluster.status?.agent_deployed_generation == Some(1)).then_some(())
    })
    .await;

    // A bundle deployed through the agent.
    deploy_edge_config(&hub.client, &downstream.client, "imported").await;
    let deployed: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "apps");

    // The agent's pod, as a kubelet keeps it while the process runs (terminating once deleted, until the
    // kubelet has stopped the process).
    let pods: Api<Pod> = Api::namespaced(downstream.client.clone(), AGENT_NS);
    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "fleet-agent-0", "labels": {"app": "fleet-agent"},
                     "finalizers": ["test.fleet.cattle.io/process-running"]},
        "spec": {"containers": [{"name": "fleet-agent", "image": "fleet-agent"}]},
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();

    // Deleting the Cluster: the agent stays while the Cluster's bundles are still deployed (here: while the
    // agent is stopped), since it is the agent that uninstalls them.
    agent.abort();
    let seen = controller.reconciles("clusterimport");
    clusters
        .delete("edge", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the import controller handling the deletion", || async {
        (controller.reconciles("clusterimport") >= seen + 2).then_some(())
    })
    .await;
    assert!(
        deployments.get_opt("fleet-agent").await.unwrap().is_some(),
        "the agent is kept while the Cluster's bundles are deployed"
    );
    // The agent comes back with its own credentials (they are revoked only after it is removed) and
    // uninstalls what it deployed for the deleted BundleDeployments.
    let agent = start_agent(agent_hub.clone());
    fleet_testing::gone("the agent Deployment removed", &deployments, "fleet-agent").await;
    assert!(
        deployed.get_opt("edge").await.unwrap().is_none(),
        "the agent uninstalled the bundle before it was removed"
    );
    // Its pod is still terminating: the Cluster (and with it the agent's credentials) stays.
    let seen = controller.reconciles("clusterimport");
    eventually(
        "the import controller waiting for the agent's pod",
        || async { (controller.reconciles("clusterimport") >= seen + 2).then_some(()) },
    )
    .await;
    assert!(
        clusters.get_opt("edge").await.unwrap().is_some(),
        "the Cluster left while its agent's pod was still running"
    );
    // The process has stopped: the kubelet removes the pod.
    pods.patch(
        "fleet-agent-0",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    pods.delete("fleet-agent-0", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the Cluster gone", || async {
        clusters.get_opt("edge").await.ok()?.is_none().then_some(())
    })
    .await;
    agent.abort();
    assert!(
        Api::<ClusterRoleBinding>::all(downstream.client.clone())
            .get_opt("edge-agent-fleet-agent-role-binding")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        Api::<ClusterRole>::all(downstream.client.clone())
            .get_opt("edge-agent-fleet-agent-role")
            .await
            .unwrap()
            .is_none()
    );
    let namespaces: Api<Namespace> = Api::all(downstream.client.clone());
    fleet_testing::gone("the agent namespace gone", &namespaces, AGENT_NS).await;
    controller.stop().await;
}

#[tokio::test]
async fn a_bad_kubeconfig_is_reported_on_the_cluster_without_its_content() {
    let hub = hub_with_address().await;
    let controller = RunningController::start(hub.client.clone()).await;
    create_secret(
        &hub.client,
        "broken",
        &[(
            "value",
            "clusters: [{name: x, cluster: {server: 42, token: sekret-value",
        )],
    )
    .await;
    create_cluster(&hub.client, "broken", json!({"kubeConfigSecret": "broken"})).await;
    create_cluster(
        &hub.client,
        "missing",
        json!({"kubeConfigSecret": "absent"}),
    )
    .await;
    let clusters: Api<Cluster> = Api::namespaced(hub.client.clone(), NS);
    for (name, expected) in [
        (
            "broken",
            "Secret fleet-default/broken: key value does not hold a valid kubeconfig",
        ),
        (
            "missing",
            "kubeConfigSecret fleet-default/absent does not exist",
        ),
    ] {
        let (status, message) = eventually(&format!("Imported=False on {name}"), || async {
            condition(&clusters.get(name).await.ok()?, "Imported")
        })
        .await;
        assert_eq!(status, "False");
        assert!(message.contains(expected), "{message}");
        assert!(!message.contains("sekret"), "{message}");
    }
    controller.stop().await;
}

#[tokio::test]
async fn a_new_controller_with_another_agent_image_updates_the_agent_in_place_and_a_moved_agent_is_reinstalled()
 {
    let Import {
        hub,
        controller,
        downstream,
    } = import_edge("kc", json!({})).await;
    let deployments: Api<Deployment> = Api::namespaced(downstream.client.clone(), SYSTEM_NS);
    let image = |d: &Deployment| pod_spec(d).containers[0].image.clone().unwrap_or_default();
    let first = eventually("the agent Deployment", || async {
        deployments.get_opt("fleet-agent").await.ok().flatten()
    })
    .await;
    assert_eq!(image(&first), "fleet:test");
    controller.stop().await;

    // The upgraded controller comes with another agent image.
    set_agent_image(&hub.client, "fleet:next").await;
    let controller = RunningController::start(hub.client.clone()).await;
    let updated = eventually("the agent on the new image", || async {
        let deployment = deployments.get("fleet-agent").await.ok()?;
        (image(&deployment) == "fleet:next").then_some(deployment)
    })
    .await;
    assert_eq!(
        updated.metadata.uid, first.metadata.uid,
        "updated in place, not reinstalled"
    );

    // The agent checked in from its namespace; the Cluster then moves it to another one.
    fleet_agent::heartbeat::check_in(
        &hub.client,
        &fleet_agent::heartbeat::ClusterRef {
            namespace: NS.into(),
            name: "edge".into(),
        },
        SYSTEM_NS,
    )
    .await
    .unwrap();
    Api::<Cluster>::namespaced(hub.client.clone(), NS)
        .patch(
            "edge",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"agentNamespace": "moved-agent"}})),
        )
        .await
        .unwrap();
    let moved: Api<Deployment> = Api::namespaced(downstream.client.clone(), "moved-agent");
    eventually("the agent in its new namespace", || async {
        moved.get_opt("fleet-agent").await.ok().flatten()
    })
    .await;
    let secrets: Api<Secret> = Api::namespaced(downstream.client.clone(), "moved-agent");
    assert!(
        secrets.get_opt(BOOTSTRAP_SECRET).await.unwrap().is_some(),
        "it registers anew from there"
    );
    fleet_testing::gone(
        "the agent gone from its old namespace",
        &deployments,
        "fleet-agent",
    )
    .await;
    controller.stop().await;
}

#[tokio::test]
async fn changes_of_the_manager_config_and_of_the_kubeconfig_secret_reach_the_agent() {
    let Import {
        hub,
        controller,
        downstream,
    } = import_edge("edge-kubeconfig", json!({"agentNamespace": AGENT_NS})).await;
    let deployments: Api<Deployment> = Api::namespaced(downstream.client.clone(), AGENT_NS);
    let image = || async {
        let deployment = deployments.get_opt("fleet-agent").await.ok()??;
        deployment.spec?.template.spec?.containers[0].image.clone()
    };
    eventually("the agent installed", || async {
        (image().await? == "fleet:test").then_some(())
    })
    .await;
    let clusters: Api<Cluster> = Api::namespaced(hub.client.clone(), NS);
    eventually("the import recorded", || async {
        let cluster = clusters.get("edge").await.ok()?;
        (condition(&cluster, "Imported")?.0 == "True").then_some(())
    })
    .await;

    // The import no longer re-checks on a timer: a change of the manager configuration wakes it.
    set_agent_image(&hub.client, "fleet:next").await;
    eventually("the agent updated to the configured image", || async {
        (image().await? == "fleet:next").then_some(())
    })
    .await;

    // So does a change of the kubeconfig Secret: a new hub address installs the agent anew.
    let secrets: Api<Secret> = Api::namespaced(hub.client.clone(), NS);
    secrets
        .patch(
            "edge-kubeconfig",
            &PatchParams::default(),
            &Patch::Merge(
                &json!({"data": secret_data(&[("apiServerURL", "https://hub.example.com:6443")])}),
            ),
        )
        .await
        .unwrap();
    let bootstrap: Api<Secret> = Api::namespaced(downstream.client.clone(), AGENT_NS);
    eventually(
        "a bootstrap Secret with the Secret's hub address",
        || async {
            let secret = bootstrap.get_opt(BOOTSTRAP_SECRET).await.ok()??;
            let url = secret.data?.get("apiServerURL")?.0.clone();
            (url == b"https://hub.example.com:6443").then_some(())
        },
    )
    .await;
    controller.stop().await;
}
