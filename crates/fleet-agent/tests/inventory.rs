//! The inventory records only what was applied, and pruning and uninstall count every answer saying an
//! object cannot exist (an unknown kind, a namespaced object without a namespace) as gone, so that such an
//! object never holds a BundleDeployment in error nor leaks its inventory. Namespaced objects that name no
//! namespace go to the release namespace: the agent never sends a request with an empty namespace.

mod common;

use common::*;
use fleet_agent::Scope;
use fleet_api::BundleDeployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::{Value, json};

const AGENT_NS: &str = "cattle-fleet-system";
const WIDGET: &str = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n";

fn scope() -> Scope {
    Scope::new(AGENT_NS, "")
}

/// The inventory's objects as `kind namespace/name`.
async fn recorded(downstream: &kube::Client, bundle_deployment: &str) -> Vec<String> {
    let api: Api<ConfigMap> = Api::namespaced(downstream.clone(), AGENT_NS);
    let cm = api
        .get(&scope().inventory_name(bundle_deployment))
        .await
        .unwrap();
    let inventory: Value = serde_json::from_str(&cm.data.unwrap()["inventory"]).unwrap();
    let mut objects: Vec<String> = inventory["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            format!(
                "{} {}/{}",
                o["kind"].as_str().unwrap(),
                o["namespace"].as_str().unwrap(),
                o["name"].as_str().unwrap()
            )
        })
        .collect();
    objects.sort();
    objects
}

/// Adds entries an older agent could have recorded for objects that were never created: a Widget (a kind
/// the cluster does not serve) and a ConfigMap without a namespace.
async fn add_impossible_entries(downstream: &kube::Client, bundle_deployment: &str) {
    let api: Api<ConfigMap> = Api::namespaced(downstream.clone(), AGENT_NS);
    let name = scope().inventory_name(bundle_deployment);
    let cm = api.get(&name).await.unwrap();
    let mut inventory: Value = serde_json::from_str(&cm.data.unwrap()["inventory"]).unwrap();
    let objects = inventory["objects"].as_array_mut().unwrap();
    objects.push(
        json!({"kind": "Widget", "apiVersion": "example.com/v1", "namespace": "apps", "name": "w"}),
    );
    objects
        .push(json!({"kind": "ConfigMap", "apiVersion": "v1", "namespace": "", "name": "nowhere"}));
    let patch = json!({"data": {"inventory": inventory.to_string()}});
    api.patch(&name, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .unwrap();
}

/// Stops `agent`, adds [`add_impossible_entries`] to the inventory of `mixed` while no agent runs, and starts
/// a new agent.
async fn restart_with_impossible_entries(
    agent: tokio::task::JoinHandle<fleet_agent::error::Result<()>>,
    hub: &kube::Client,
    downstream: &fleet_testing::TestCluster,
) -> tokio::task::JoinHandle<fleet_agent::error::Result<()>> {
    agent.abort();
    let _ = agent.await;
    add_impossible_entries(&downstream.client, "mixed").await;
    start_agent(hub, downstream, scope())
}

#[tokio::test]
async fn objects_never_created_are_not_recorded_and_never_block_pruning_or_uninstall() {
    let hub = hub().await;
    let downstream = fleet_testing::TestCluster::empty();
    let agent = start_agent(&hub.client, &downstream, scope());
    let good = config_map("good", "1");
    publish_in(
        &hub.client,
        "mixed",
        &[("good.yaml", &good), ("widget.yaml", WIDGET)],
        "apps",
    )
    .await;
    let status = wait_status(&hub.client, "mixed", "the Widget's failure", |s| {
        fleet_api::find_condition(&s.conditions, "Deployed").is_some_and(|c| c.status == "False")
    })
    .await;
    assert!(
        condition(&status, "Deployed")
            .message
            .starts_with("widget.example.com apps/w: "),
        "{status:?}"
    );
    assert_eq!(
        recorded(&downstream.client, "mixed").await,
        ["ConfigMap apps/good"]
    );

    // Entries for objects that cannot exist are pruned as gone: the next deployment is applied.
    let agent = restart_with_impossible_entries(agent, &hub.client, &downstream).await;
    let id = publish_in(&hub.client, "mixed", &[("good.yaml", &good)], "apps").await;
    wait_status(
        &hub.client,
        "mixed",
        "the deployment without the Widget applied",
        |s| s.applied_deployment_id == id && s.ready,
    )
    .await;
    assert_eq!(
        recorded(&downstream.client, "mixed").await,
        ["ConfigMap apps/good"]
    );

    // Uninstall too: the objects go, and the inventory with them.
    let _agent = restart_with_impossible_entries(agent, &hub.client, &downstream).await;
    wait_applied(&hub.client, "mixed", &id, "the agent back").await;
    Api::<BundleDeployment>::namespaced(hub.client.clone(), CLUSTER_NS)
        .delete("mixed", &DeleteParams::default())
        .await
        .unwrap();
    let inventories: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), AGENT_NS);
    let inventory = scope().inventory_name("mixed");
    wait_for("the inventory removed by the uninstall", || {
        let inventories = inventories.clone();
        let inventory = inventory.clone();
        async move {
            inventories
                .get_opt(&inventory)
                .await
                .unwrap()
                .is_none()
                .then_some(())
        }
    })
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "apps");
    assert!(cms.get_opt("good").await.unwrap().is_none());
}

#[tokio::test]
async fn namespaced_objects_without_a_namespace_go_to_the_release_namespace() {
    let hub = hub().await;
    let downstream = fleet_testing::TestCluster::empty();
    start_agent(&hub.client, &downstream, scope());
    let cm = config_map("plain", "1");
    let id = publish(
        &hub.client,
        "plain",
        &[("cm.yaml", &cm)],
        Default::default(),
        |_| {},
    )
    .await;
    wait_status(&hub.client, "plain", "applied", |s| {
        s.applied_deployment_id == id && s.ready
    })
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "default");
    assert_eq!(cms.get("plain").await.unwrap().data.unwrap()["key"], "1");
    assert_eq!(
        recorded(&downstream.client, "plain").await,
        ["ConfigMap default/plain"]
    );
}
