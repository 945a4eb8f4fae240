//! Registration end to end: the real controller and the real agent against a hub that requires
//! authentication. A ClusterRegistrationToken's values become the agent's bootstrap Secret, the agent
//! registers, the controller grants, and the agent — holding nothing but its granted credentials — deploys
//! a Bundle the controller targeted at the new Cluster.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use fleet_agent::registration::{self, BOOTSTRAP_SECRET};
use fleet_agent::tls::TlsMode;
use fleet_agent::{Agent, AgentConfig, Downstream, Scope};
use fleet_api::ClusterRegistrationToken;
use fleet_testing::TestCluster;
use fleet_testing::secret_data;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, PostParams};
use serde_json::json;
use support::*;

const AGENT_NS: &str = "cattle-fleet-system";

/// The downstream cluster as the agent reaches it (impersonating a user when a BundleDeployment asks).
fn downstream_of(cluster: &TestCluster) -> Downstream {
    let cluster = cluster.clone();
    Downstream::new(Arc::new(move |user: Option<&str>| cluster.client_as(user)))
}

#[tokio::test]
async fn an_agent_registers_with_a_token_and_deploys_through_its_grant() {
    let hub = authenticated_hub().await;
    create_namespace(&hub.client, AGENT_NS).await;
    let (addr, _) = hub.serve_loopback().await;
    let url = format!("http://{addr}");
    // Where agents reach the hub, as Fleet configures it.
    let config: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "fleet-controller"},
        "data": {"config": json!({"apiServerURL": url}).to_string()},
    }))
    .unwrap();
    Api::<ConfigMap>::namespaced(hub.client.clone(), AGENT_NS)
        .create(&PostParams::default(), &config)
        .await
        .unwrap();
    let controller = RunningController::start(hub.client.clone()).await;

    let token: ClusterRegistrationToken = serde_json::from_value(json!({
        "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "ClusterRegistrationToken",
        "metadata": {"name": "new-clusters", "namespace": NS}, "spec": {"ttl": "1h"},
    }))
    .unwrap();
    Api::<ClusterRegistrationToken>::namespaced(hub.client.clone(), NS)
        .create(&PostParams::default(), &token)
        .await
        .unwrap();
    let secrets: Api<Secret> = Api::namespaced(hub.client.clone(), NS);
    let values = eventually("the token's values secret", || {
        let secrets = secrets.clone();
        async move { secrets.get_opt("new-clusters").await.ok().flatten() }
    })
    .await;
    let values = values.data.unwrap_or_default()["values"].0.clone();
    let values: serde_json::Value = serde_json::from_slice(&values).unwrap();
    assert_eq!(values["apiServerURL"], url.as_str());

    // The downstream cluster gets the bootstrap Secret made from the values, as the fleet-agent chart does.
    let downstream = TestCluster::empty();
    create_namespace(&downstream.client, AGENT_NS).await;
    let field = |key: &str| values[key].as_str().unwrap().to_string();
    let bootstrap: Secret = serde_json::from_value(json!({
        "metadata": {"name": BOOTSTRAP_SECRET},
        "data": secret_data(&[
            ("apiServerURL", &field("apiServerURL")),
            ("apiServerCA", &field("apiServerCA")),
            ("token", &field("token")),
            ("clusterNamespace", &field("clusterNamespace")),
            ("systemRegistrationNamespace", &field("systemRegistrationNamespace")),
        ]),
    }))
    .unwrap();
    Api::<Secret>::namespaced(downstream.client.clone(), AGENT_NS)
        .create(&PostParams::default(), &bootstrap)
        .await
        .unwrap();

    let labels = BTreeMap::from([("env".to_string(), "edge".to_string())]);
    let (agent_hub, credentials) = registration::connect(
        &downstream.client,
        AGENT_NS,
        None,
        labels,
        Duration::from_secs(60),
        TlsMode::default(),
    )
    .await
    .expect("registered");
    assert!(
        Api::<Secret>::namespaced(downstream.client.clone(), AGENT_NS)
            .get_opt(BOOTSTRAP_SECRET)
            .await
            .unwrap()
            .is_none(),
        "the bootstrap secret is removed"
    );
    let cluster_name = credentials.cluster.name.clone();
    assert_eq!(credentials.cluster.namespace, NS);
    assert_eq!(
        credentials.deployment_namespace,
        fleet_controller::cluster::cluster_namespace(NS, &cluster_name)
    );

    let mut config = AgentConfig::new(
        agent_hub,
        credentials.deployment_namespace.clone(),
        Scope::new(AGENT_NS, ""),
    );
    config.monitor_interval = Duration::from_millis(200);
    config.retry_interval = Duration::from_millis(100);
    tokio::spawn(Agent::new(config, downstream_of(&downstream)).run());

    // A Bundle targeted at the registered cluster (selected by its registration label).
    let cm = deploy_edge_config(&hub.client, &downstream.client, "registered").await;
    assert_eq!(cm.data.unwrap()["key"], "registered");
    controller.stop().await;
}
