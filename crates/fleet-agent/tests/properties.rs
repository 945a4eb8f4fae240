//! Cluster properties: the agent reports the downstream cluster's Kubernetes version, node count, summed CPU
//! and memory, and OCM ClusterClaims into its Cluster's status on the hub, and reports again when they change.

mod common;

use std::time::Duration;

use common::*;
use fleet_api::{Cluster, PROPERTY_KUBERNETES_VERSION, PROPERTY_NODE_COUNT};
use fleet_testing::TestCluster;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::discovery::ApiResource;
use serde_json::json;

async fn add_node(
    cluster: &TestCluster,
    name: &str,
    cpu: &str,
    memory: &str,
    allocatable_cpu: &str,
) {
    let nodes: Api<Node> = Api::all(cluster.client.clone());
    let node: Node = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
    nodes.create(&PostParams::default(), &node).await.unwrap();
    let status = json!({"status": {"capacity": {"cpu": cpu, "memory": memory, "pods": "110"},
        "allocatable": {"cpu": allocatable_cpu, "memory": memory, "pods": "110"}}});
    nodes
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

fn claim_resource() -> ApiResource {
    ApiResource {
        group: "cluster.open-cluster-management.io".into(),
        version: "v1alpha1".into(),
        api_version: "cluster.open-cluster-management.io/v1alpha1".into(),
        kind: "ClusterClaim".into(),
        plural: "clusterclaims".into(),
    }
}

/// OCM's ClusterClaim CRD (cluster-scoped, `spec.value`).
async fn install_claim_crd(cluster: &TestCluster) {
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "clusterclaims.cluster.open-cluster-management.io"},
        "spec": {"group": "cluster.open-cluster-management.io", "scope": "Cluster",
            "names": {"kind": "ClusterClaim", "plural": "clusterclaims", "singular": "clusterclaim",
                "listKind": "ClusterClaimList"},
            "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"value": {"type": "string"}}}}}}}]}
    }))
    .unwrap();
    cluster.install_crds(vec![crd]).await;
}

async fn add_claim(cluster: &TestCluster, name: &str, value: &str) {
    let api: Api<DynamicObject> = Api::all_with(cluster.client.clone(), &claim_resource());
    let claim: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "ClusterClaim",
        "metadata": {"name": name}, "spec": {"value": value}}))
    .unwrap();
    api.create(&PostParams::default(), &claim).await.unwrap();
}

async fn hub_with_cluster() -> (TestCluster, Api<Cluster>) {
    let hub = hub().await;
    create_namespace(&hub.client, "fleet-default").await;
    let cluster: Cluster = serde_json::from_value(json!({"apiVersion": fleet_api::API_VERSION,
        "kind": "Cluster", "metadata": {"name": "c1", "namespace": "fleet-default"}, "spec": {}}))
    .unwrap();
    let clusters: Api<Cluster> = Api::namespaced(hub.client.clone(), "fleet-default");
    clusters
        .create(&PostParams::default(), &cluster)
        .await
        .unwrap();
    (hub, clusters)
}

fn start_checking_in(hub: &TestCluster, downstream: &TestCluster) {
    let scope = fleet_agent::Scope::new("cattle-fleet-system", "");
    let mut config = fleet_agent::AgentConfig::new(hub.client.clone(), CLUSTER_NS, scope);
    config.checkin_interval = Duration::from_millis(300);
    config.cluster = Some(fleet_agent::heartbeat::ClusterRef {
        namespace: "fleet-default".into(),
        name: "c1".into(),
    });
    tokio::spawn(fleet_agent::Agent::new(config, downstream_of(downstream)).run());
}

#[tokio::test]
async fn reports_version_nodes_resources_and_claims_and_follows_changes() {
    let (hub, clusters) = hub_with_cluster().await;
    let downstream = TestCluster::empty();
    add_node(&downstream, "n1", "4", "16Gi", "3800m").await;
    add_node(&downstream, "n2", "2", "8Gi", "2").await;
    install_claim_crd(&downstream).await;
    add_claim(&downstream, "region.example.com", "eu-west").await;
    add_claim(&downstream, "tier.example.com", "gold").await;
    start_checking_in(&hub, &downstream);

    let status = wait_for("properties", || {
        let clusters = clusters.clone();
        async move {
            let status = clusters.get("c1").await.ok()?.status?;
            status.properties.is_some().then_some(status)
        }
    })
    .await;
    let properties = status.properties.unwrap();
    assert_eq!(properties[PROPERTY_NODE_COUNT].value, "2");
    assert!(
        properties[PROPERTY_KUBERNETES_VERSION]
            .value
            .starts_with("v1."),
        "{:?}",
        properties[PROPERTY_KUBERNETES_VERSION]
    );
    assert_eq!(properties["region.example.com"].value, "eu-west");
    assert_eq!(properties["tier.example.com"].value, "gold");
    assert!(properties["tier.example.com"].observation_time.is_some());
    let usage = status.resource_usage.unwrap();
    assert_eq!(usage.capacity["cpu"], "6");
    assert_eq!(usage.capacity["memory"], "24Gi");
    assert_eq!(usage.allocatable["cpu"], "5800m");
    assert_eq!(usage.available["memory"], "24Gi");
    assert!(
        status.agent.is_some(),
        "the heartbeat is kept beside the properties"
    );

    // Unchanged properties are not written again: later check-ins leave the observation time alone.
    let first_seen = usage.observation_time.clone();
    let mut last_seen = status.agent.unwrap().last_seen;
    for _ in 0..2 {
        last_seen = wait_for("a later check-in", || {
            let clusters = clusters.clone();
            let last_seen = last_seen.clone();
            async move {
                let agent = clusters.get("c1").await.ok()?.status?.agent?;
                (agent.last_seen > last_seen).then_some(agent.last_seen)
            }
        })
        .await;
    }
    let again = clusters.get("c1").await.unwrap().status.unwrap();
    assert_eq!(again.resource_usage.unwrap().observation_time, first_seen);

    // A new node and a deleted claim are reported; the deleted claim's property disappears.
    add_node(&downstream, "n3", "8", "32Gi", "8").await;
    let claims: Api<DynamicObject> = Api::all_with(downstream.client.clone(), &claim_resource());
    claims
        .delete("tier.example.com", &DeleteParams::default())
        .await
        .unwrap();
    let properties = wait_for("the third node", || {
        let clusters = clusters.clone();
        async move {
            let properties = clusters.get("c1").await.ok()?.status?.properties?;
            (properties[PROPERTY_NODE_COUNT].value == "3"
                && !properties.contains_key("tier.example.com"))
            .then_some(properties)
        }
    })
    .await;
    assert_eq!(properties["region.example.com"].value, "eu-west");
    let usage = clusters
        .get("c1")
        .await
        .unwrap()
        .status
        .unwrap()
        .resource_usage
        .unwrap();
    assert_eq!(usage.capacity["cpu"], "14");
    assert_eq!(usage.capacity["memory"], "56Gi");
}

#[tokio::test]
async fn a_cluster_without_the_claim_crd_reports_built_in_properties() {
    let (hub, clusters) = hub_with_cluster().await;
    let downstream = TestCluster::empty();
    add_node(&downstream, "only", "1", "2Gi", "1").await;
    start_checking_in(&hub, &downstream);
    let properties = wait_for("properties", || {
        let clusters = clusters.clone();
        async move { clusters.get("c1").await.ok()?.status?.properties }
    })
    .await;
    let names: Vec<&str> = properties.keys().map(String::as_str).collect();
    assert_eq!(names, [PROPERTY_KUBERNETES_VERSION, PROPERTY_NODE_COUNT]);
    assert_eq!(properties[PROPERTY_NODE_COUNT].value, "1");
}
