//! The agent deploys every bundle style through the renderer `fleet test` uses: a kustomization and a Helm
//! chart, published on a real embedded hub and applied to a real embedded downstream cluster.

mod common;

use common::*;
use fleet_agent::Scope;
use fleet_api::{BundleDeploymentOptions, HelmOptions, KustomizeOptions};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;

fn scope() -> Scope {
    Scope::new("cattle-fleet-system", "")
}

#[tokio::test]
async fn a_kustomize_bundle_is_built_and_applied() {
    let hub = hub().await;
    let downstream = fleet_testing::TestCluster::empty();
    start_agent(&hub.client, &downstream, scope());
    let options = BundleDeploymentOptions {
        kustomize: Some(KustomizeOptions {
            dir: "overlays/prod".to_string(),
        }),
        ..options_in("shop")
    };
    publish(
        &hub.client,
        "shop",
        &[
            ("base/kustomization.yaml", "resources:\n- cm.yaml\n"),
            ("base/cm.yaml", &config_map("settings", "base")),
            (
                "overlays/prod/kustomization.yaml",
                "resources:\n- ../../base\nnamePrefix: prod-\ncommonLabels:\n  env: prod\n",
            ),
        ],
        options,
        |_| {},
    )
    .await;
    wait_status(&hub.client, "shop", "kustomize bundle ready", |s| s.ready).await;
    let live = Api::<ConfigMap>::namespaced(downstream.client.clone(), "shop")
        .get("prod-settings")
        .await
        .unwrap();
    assert_eq!(live.data.unwrap()["key"], "base");
    assert_eq!(live.metadata.labels.unwrap()["env"], "prod");
}

#[tokio::test]
async fn a_helm_bundle_renders_its_chart_with_values_and_the_bundle_as_release() {
    let hub = hub().await;
    let downstream = fleet_testing::TestCluster::empty();
    start_agent(&hub.client, &downstream, scope());
    let values =
        serde_json::from_value(serde_json::json!({"greeting": "hello from values"})).unwrap();
    let options = BundleDeploymentOptions {
        helm: Some(HelmOptions {
            values: Some(values),
            ..Default::default()
        }),
        ..options_in("web")
    };
    publish(
        &hub.client,
        "web",
        &[
            ("Chart.yaml", "apiVersion: v2\nname: web\nversion: 0.1.0\n"),
            ("values.yaml", "greeting: default\n"),
            (
                "templates/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
            ),
        ],
        options,
        |_| {},
    )
    .await;
    wait_status(&hub.client, "web", "helm bundle ready", |s| s.ready).await;
    let live = Api::<ConfigMap>::namespaced(downstream.client.clone(), "web")
        .get("web-config")
        .await
        .unwrap();
    assert_eq!(live.data.unwrap()["greeting"], "hello from values");
}
