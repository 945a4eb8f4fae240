//! Agent-side registration against an embedded hub. The controller's side of the protocol (granting) is not
//! wired in yet, so this test plays the hub's part by hand: it sees the ClusterRegistration and writes the
//! grant Secret where Fleet's controller writes it.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use fleet_agent::registration::{self, BOOTSTRAP_SECRET};
use fleet_api::ClusterRegistration;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, PostParams};
use serde_json::json;

fn data(pairs: &[(&str, &str)]) -> serde_json::Value {
    use base64::Engine;
    pairs
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                json!(base64::engine::general_purpose::STANDARD.encode(v)),
            )
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

#[tokio::test]
async fn registers_with_a_bootstrap_token_and_stores_the_grant() {
    let hub = hub().await;
    create_namespace(&hub.client, "fleet-default").await;
    create_namespace(&hub.client, "cattle-fleet-clusters-system").await;
    create_namespace(&hub.client, "cluster-fleet-default-other-000000000000").await;
    let (addr, _) = hub.serve_loopback().await;
    let import_token = service_account_token(
        &hub.client,
        "fleet-default",
        "import",
        &[
            ("fleet-default", json!([{"apiGroups": ["fleet.cattle.io"], "resources": ["clusterregistrations"], "verbs": ["create"]}])),
            ("cattle-fleet-clusters-system", json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}])),
        ],
        None,
    )
    .await;
    let downstream = fleet_testing::TestCluster::empty();
    create_namespace(&downstream.client, "cattle-fleet-system").await;
    let secrets: Api<Secret> = Api::namespaced(downstream.client.clone(), "cattle-fleet-system");
    let bootstrap: Secret = serde_json::from_value(json!({
        "metadata": {"name": BOOTSTRAP_SECRET},
        "data": data(&[("apiServerURL", &format!("http://{addr}")), ("token", &import_token),
            ("clusterNamespace", "fleet-default"), ("systemRegistrationNamespace", "cattle-fleet-clusters-system")]),
    }))
    .unwrap();
    secrets
        .create(&PostParams::default(), &bootstrap)
        .await
        .unwrap();

    let read = registration::bootstrap(&downstream.client, "cattle-fleet-system")
        .await
        .unwrap()
        .expect("bootstrap secret");
    let client_id = registration::client_id(&downstream.client, None)
        .await
        .unwrap();
    let kube_system = Api::<Namespace>::all(downstream.client.clone())
        .get("kube-system")
        .await
        .unwrap();
    assert_eq!(Some(client_id.clone()), kube_system.metadata.uid);
    let labels = BTreeMap::from([("env".to_string(), "test".to_string())]);
    let downstream_client = downstream.client.clone();
    let registering = tokio::spawn(async move {
        registration::register(
            &downstream_client,
            "cattle-fleet-system",
            &read,
            &client_id,
            labels,
            Duration::from_secs(20),
        )
        .await
    });

    // The hub's part: grant the registration.
    let registrations: Api<ClusterRegistration> =
        Api::namespaced(hub.client.clone(), "fleet-default");
    let request = wait_for("the ClusterRegistration", || {
        let registrations = registrations.clone();
        async move {
            registrations
                .list(&Default::default())
                .await
                .ok()?
                .items
                .into_iter()
                .next()
        }
    })
    .await;
    assert!(
        request
            .metadata
            .name
            .as_deref()
            .unwrap()
            .starts_with("request-")
    );
    assert_eq!(request.spec.cluster_labels["env"], "test");
    // Fleet's grant: BundleDeployments of this cluster's namespace (read, status), its secrets, and Content.
    let granted_token = service_account_token(
        &hub.client,
        CLUSTER_NS,
        "request-1",
        &[(CLUSTER_NS, json!([
            {"apiGroups": ["fleet.cattle.io"], "resources": ["bundledeployments"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": ["fleet.cattle.io"], "resources": ["bundledeployments/status"], "verbs": ["update", "patch"]},
            {"apiGroups": [""], "resources": ["secrets", "configmaps"], "verbs": ["get"]}]))],
        Some(json!([{"apiGroups": ["fleet.cattle.io"], "resources": ["contents"], "verbs": ["get"]}])),
    )
    .await;
    let grant_name =
        registration::grant_secret_name(&request.spec.client_id, &request.spec.client_random);
    let grant: Secret = serde_json::from_value(json!({
        "metadata": {"name": grant_name},
        "data": data(&[("token", &granted_token), ("deploymentNamespace", CLUSTER_NS),
            ("clusterNamespace", "fleet-default"), ("clusterName", "c1"), ("systemNamespace", "cattle-fleet-system")]),
    }))
    .unwrap();
    Api::<Secret>::namespaced(hub.client.clone(), "cattle-fleet-clusters-system")
        .create(&PostParams::default(), &grant)
        .await
        .unwrap();

    let credentials = registering.await.unwrap().unwrap();
    assert_eq!(credentials.deployment_namespace, CLUSTER_NS);
    assert_eq!(credentials.cluster.name, "c1");
    assert!(
        secrets.get_opt(BOOTSTRAP_SECRET).await.unwrap().is_none(),
        "bootstrap removed"
    );
    let stored = registration::credentials(&downstream.client, "cattle-fleet-system")
        .await
        .unwrap()
        .expect("credentials secret");
    assert_eq!(stored, credentials);
    assert!(stored.kubeconfig.contains(&granted_token));
    assert!(
        stored
            .kubeconfig
            .contains(&format!("namespace: {CLUSTER_NS}"))
    );
    // The stored credentials read this cluster's BundleDeployments and are refused (403) another cluster's.
    let agent_hub = registration::client_from_kubeconfig(&stored.kubeconfig)
        .await
        .unwrap();
    Api::<fleet_api::BundleDeployment>::namespaced(agent_hub.clone(), CLUSTER_NS)
        .list(&Default::default())
        .await
        .unwrap();
    let refused = Api::<fleet_api::BundleDeployment>::namespaced(
        agent_hub,
        "cluster-fleet-default-other-000000000000",
    )
    .list(&Default::default())
    .await
    .unwrap_err();
    assert!(
        matches!(&refused, kube::Error::Api(status) if status.code == 403),
        "{refused}"
    );
}
