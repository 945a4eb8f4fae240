//! `downstreamResources`: Secrets and ConfigMaps in the cluster namespace on the hub are copied into the
//! BundleDeployment's target namespace downstream, copied again when `downstreamResourcesGeneration` changes,
//! and removed with the BundleDeployment.

mod common;

use common::*;
use fleet_api::{BundleDeployment, BundleDeploymentOptions, DownstreamResource};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

fn listed(kind: &str, name: &str) -> DownstreamResource {
    DownstreamResource {
        kind: kind.into(),
        name: name.into(),
    }
}

async fn put_secret(hub: &kube::Client, password: &str) {
    let body = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db-credentials"},
        "type": "Opaque", "stringData": {"password": password}});
    Api::<Secret>::namespaced(hub.clone(), CLUSTER_NS)
        .patch(
            "db-credentials",
            &PatchParams::apply("test").force(),
            &Patch::Apply(body),
        )
        .await
        .unwrap();
}

fn password(secret: Secret) -> String {
    String::from_utf8(secret.data.unwrap()["password"].0.clone()).unwrap()
}

#[tokio::test]
async fn listed_secrets_and_config_maps_are_copied_downstream_and_follow_their_generation() {
    let (hub, downstream) = hub_with_agent().await;
    put_secret(&hub.client, "first").await;
    let shared: ConfigMap = serde_json::from_value(
        json!({"metadata": {"name": "shared"}, "data": {"region": "eu-west"}}),
    )
    .unwrap();
    Api::<ConfigMap>::namespaced(hub.client.clone(), CLUSTER_NS)
        .create(&PostParams::default(), &shared)
        .await
        .unwrap();
    let options = BundleDeploymentOptions {
        downstream_resources: vec![
            listed("Secret", "db-credentials"),
            listed("ConfigMap", "shared"),
        ],
        ..options_in("app")
    };
    let files = [("cm.yaml", config_map("own", "1"))];
    let borrowed: Vec<(&str, &str)> = files.iter().map(|(n, c)| (*n, c.as_str())).collect();
    let id = publish(&hub.client, "copying", &borrowed, options.clone(), |_| {}).await;
    wait_status(&hub.client, "copying", "deployed", |s| {
        s.applied_deployment_id == id && s.ready
    })
    .await;
    let secrets: Api<Secret> = Api::namespaced(downstream.client.clone(), "app");
    let config_maps: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "app");
    let copy = secrets.get("db-credentials").await.unwrap();
    assert_eq!(copy.type_.as_deref(), Some("Opaque"));
    assert_eq!(password(copy), "first");
    let copy = config_maps.get("shared").await.unwrap();
    assert_eq!(copy.data.unwrap()["region"], "eu-west");

    // The hub's copy changes and the controller bumps the generation: the agent copies again.
    put_secret(&hub.client, "second").await;
    publish(&hub.client, "copying", &borrowed, options, |spec| {
        spec.downstream_resources_generation = 1
    })
    .await;
    wait_status(&hub.client, "copying", "copied again", |s| {
        s.downstream_resources_generation == 1
    })
    .await;
    assert_eq!(
        password(secrets.get("db-credentials").await.unwrap()),
        "second"
    );

    Api::<BundleDeployment>::namespaced(hub.client.clone(), CLUSTER_NS)
        .delete("copying", &DeleteParams::default())
        .await
        .unwrap();
    // The uninstall deletes the copies one after the other: wait for both.
    fleet_testing::gone(
        "the copied Secret removed with the bundle",
        &secrets,
        "db-credentials",
    )
    .await;
    fleet_testing::gone(
        "the copied ConfigMap removed with the bundle",
        &config_maps,
        "shared",
    )
    .await;
}

#[tokio::test]
async fn a_missing_or_unsupported_downstream_resource_is_reported() {
    let (hub, _downstream) = hub_with_agent().await;
    let deployed_message = |name: &'static str, resource: DownstreamResource| {
        let hub = hub.client.clone();
        async move {
            let files = [("cm.yaml", config_map("own", "1"))];
            let borrowed: Vec<(&str, &str)> = files.iter().map(|(n, c)| (*n, c.as_str())).collect();
            let options = BundleDeploymentOptions {
                downstream_resources: vec![resource],
                ..options_in("app")
            };
            publish(&hub, name, &borrowed, options, |_| {}).await;
            let status = wait_status(&hub, name, "reported", |s| {
                s.conditions.iter().any(|c| c.type_ == "Deployed")
            })
            .await;
            condition(&status, "Deployed").message.clone()
        }
    };
    assert_eq!(
        deployed_message("missing", listed("ConfigMap", "nowhere")).await,
        format!(
            "downstreamResources ConfigMap nowhere: not found in namespace {CLUSTER_NS} on the hub"
        )
    );
    assert_eq!(
        deployed_message("unsupported", listed("ServiceAccount", "robot")).await,
        "downstreamResources ServiceAccount robot: only Secret and ConfigMap can be copied"
    );
}
