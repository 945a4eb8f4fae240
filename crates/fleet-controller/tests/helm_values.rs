//! Helm values leave BundleDeployments as in Fleet: the BundleDeployment carries `valuesHash` and no
//! values, its options Secret (same name, cluster namespace, owned by it) holds them (the agent reads
//! `values` from there), and the deploymentID still covers them.

mod support;

use fleet_testing::GitFixture;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::Api;
use serde_json::json;

use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn helm_values_go_into_the_options_secret() {
    let hub = hub().await;
    let client = hub.client.clone();
    put_cluster(&client, "a", &[("env", "prod")]).await;
    let git = GitFixture::new();
    git.write(
        "app/configmap.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
    );
    git.write(
        "app/fleet.yaml",
        "helm:\n  values:\n    password: s3cret\n    replicas: 2\n",
    );
    git.commit("values");
    follow_app_on_prod(&client, &git.url()).await;
    let controller = RunningController::start(client.clone()).await;
    let bd = eventually("the BundleDeployment", || async {
        deployments(&client).await.into_values().next()
    })
    .await;
    assert!(!bd.spec.values_hash.is_empty());
    let spec = serde_json::to_string(&bd.spec).unwrap();
    assert!(!spec.contains("s3cret"), "values left in the spec: {spec}");
    let namespace = bd.namespace().unwrap();
    let secret = eventually("the options Secret", || async {
        Api::<Secret>::namespaced(client.clone(), &namespace)
            .get_opt(&bd.name_any())
            .await
            .unwrap()
    })
    .await;
    assert_eq!(
        secret.type_.as_deref(),
        Some("fleet.cattle.io/bundle-deployment/v1alpha1")
    );
    let data = secret.data.unwrap();
    let values: serde_json::Value = serde_json::from_slice(&data["values"].0).unwrap();
    assert_eq!(values, json!({"password": "s3cret", "replicas": 2}));
    assert!(data.contains_key("stagedValues"));
    assert_eq!(
        secret.metadata.owner_references.unwrap()[0].uid,
        bd.metadata.uid.clone().unwrap()
    );
    // The deploymentID still covers the values (Fleet hashes the options before moving them).
    let id_before = bd.spec.deployment_id.clone();
    report_ready(&client, &bd).await;
    eventually("ready", || async {
        let repo = gitrepo(&client, "repo").await;
        (repo.status?.base.display.ready_bundle_deployments == "1/1").then_some(())
    })
    .await;
    let after = deployments(&client).await.into_values().next().unwrap();
    assert_eq!(after.spec.deployment_id, id_before);
    assert_eq!(after.spec.values_hash, bd.spec.values_hash);
    controller.stop().await;
}
