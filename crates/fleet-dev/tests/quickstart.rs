//! Fleet's quickstart in dev mode: a repository laid out as the quickstart's (a directory `simple` with a
//! plain Deployment and Service, no fleet.yaml, no namespace anywhere) deploys to Ready, its objects in
//! namespace `default` (Fleet's release namespace when a bundle sets no `defaultNamespace`); and this
//! repository's own `examples/gitrepos/simple`, run as the README tells a user to run it, does the same.

mod support;

use std::path::Path;

use fleet_dev::{RepoRequest, RepoSource};
use fleet_testing::GitFixture;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use kube::api::Api;
use serde_json::json;
use support::*;

fn deployment_yaml(name: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  labels:\n    app: {name}\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: {name}\n  template:\n    metadata:\n      labels:\n        app: {name}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n        ports:\n        - containerPort: 80\n"
    )
}

fn service_yaml(name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\nspec:\n  selector:\n    app: {name}\n  ports:\n  - port: 80\n    targetPort: 80\n"
    )
}

/// Whether Deployment and Service `name` exist in namespace `default` of the cluster `client` reaches.
async fn in_default(client: kube::Client, name: &str) -> bool {
    let deployment = Api::<Deployment>::namespaced(client.clone(), "default")
        .get_opt(name)
        .await
        .expect("get deployment");
    let service = Api::<Service>::namespaced(client, "default")
        .get_opt(name)
        .await
        .expect("get service");
    deployment.is_some() && service.is_some()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quickstart_layout_deploys_into_the_default_namespace() {
    let repo = GitFixture::new();
    repo.write(
        "simple/frontend-deployment.yaml",
        &deployment_yaml("frontend"),
    )
    .write("simple/frontend-service.yaml", &service_yaml("frontend"));
    let commit = repo.commit("quickstart layout");
    let running = start(
        &repo,
        json!({"paths": ["simple"], "targets": targets(&["dev", "staging", "prod"])}),
    )
    .await;
    let dev = &running.dev;
    deployed(dev, &commit).await;
    for cluster in ALL_CLUSTERS {
        let client = dev.cluster(cluster).unwrap().client();
        assert!(
            in_default(client, "frontend").await,
            "frontend in default on {cluster}"
        );
    }
    running.dev.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simple_example_deploys_to_ready() {
    let state = tempfile::tempdir().expect("temp dir");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/gitrepos/simple");
    let dev = dev_mode(
        3,
        vec![RepoRequest {
            source: RepoSource::Example(example.canonicalize().expect("the example exists")),
            name: None,
            spec: Default::default(),
        }],
        state.path(),
    )
    .await;
    eventually("examples/gitrepos/simple Ready", || async {
        // The example's GitRepo is in fleet-local: the local agent deploys it to the hub's own cluster.
        in_default(dev.hub_client(), "hello").await.then_some(())?;
        matches!(
            dev.readiness().await.ok()?,
            fleet_dev::ready::Readiness::Ready
        )
        .then_some(())
    })
    .await;
    dev.shutdown().await;
}
