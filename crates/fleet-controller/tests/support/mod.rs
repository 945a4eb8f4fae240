//! Shared pieces of the controller's integration tests: a controller running against an embedded API
//! server, a bounded wait for conditions, Fleet objects to create, and a simulated agent that reports a
//! BundleDeployment applied and ready; a Bundle for the clusters labelled `env: edge`, waited for downstream.

#![allow(dead_code)] // each test binary uses a different subset

use std::sync::Arc;
use std::time::Duration;

use fleet_api::{Bundle, BundleDeployment, Cluster, GitRepo};
use fleet_controller::metrics::{ControllerLabel, Metrics};
use fleet_controller::{Context, Settings};
use fleet_testing::TestCluster;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;
use tokio::sync::oneshot;

pub const NS: &str = "fleet-default";

pub use fleet_testing::eventually;

/// A controller running in this process until stopped.
pub struct RunningController {
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
    pub context: Arc<Context>,
    _cache: tempfile::TempDir,
}

impl RunningController {
    pub async fn start(client: Client) -> Self {
        Self::start_with(client, |_| {}).await
    }

    /// Starts a controller, running `configure` on its context before any reconcile (e.g. to set
    /// placement settings).
    pub async fn start_with(
        client: Client,
        configure: impl FnOnce(&Context) + Send + 'static,
    ) -> Self {
        Self::start_with_settings(client, |_| {}, configure).await
    }

    /// Starts a controller whose settings `adjust` changes first (e.g. the ssh program).
    pub async fn start_with_settings(
        client: Client,
        adjust: impl FnOnce(&mut Settings),
        configure: impl FnOnce(&Context) + Send + 'static,
    ) -> Self {
        let cache = tempfile::tempdir().expect("temp dir");
        let mut settings = Settings {
            git_cache_dir: cache.path().to_path_buf(),
            default_polling_interval: Duration::from_millis(300),
            ..Settings::default()
        };
        adjust(&mut settings);
        let (stop, stopped) = oneshot::channel::<()>();
        let (started_tx, started_rx) = oneshot::channel();
        let task = tokio::spawn(fleet_controller::run(
            client,
            settings,
            Arc::new(Metrics::new()),
            async move {
                let _ = stopped.await;
            },
            move |ctx| {
                configure(&ctx);
                let _ = started_tx.send(ctx);
            },
        ));
        let context = started_rx.await.expect("controller started");
        RunningController {
            stop: Some(stop),
            task,
            context,
            _cache: cache,
        }
    }

    /// How many reconciles of `controller` (e.g. "bundle") finished, failed or not.
    pub fn reconciles(&self, controller: &str) -> u64 {
        self.context
            .metrics
            .reconciles
            .get_or_create(&ControllerLabel {
                controller: controller.to_string(),
            })
            .get()
    }

    /// How many reconciles of `controller` failed, of any kind (as `/metrics` shows them).
    pub fn failures(&self, controller: &str) -> u64 {
        let prefix =
            format!("fleet_controller_reconcile_errors_total{{controller=\"{controller}\",");
        self.context
            .metrics
            .encode()
            .lines()
            .filter(|line| line.starts_with(&prefix))
            .filter_map(|line| line.rsplit(' ').next()?.parse::<u64>().ok())
            .sum()
    }

    /// Stops the controller and waits for its in-flight reconciles to finish.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        tokio::time::timeout(Duration::from_secs(30), &mut self.task)
            .await
            .expect("controller stops")
            .expect("controller task");
    }
}

/// A hub that refuses requests without a valid bearer token (the admin client carries the admin token),
/// with Fleet's CRDs and the workspace namespace.
pub async fn authenticated_hub() -> TestCluster {
    let server = fleet_apiserver::ApiServer::new(fleet_apiserver::Config {
        require_auth: true,
        ..fleet_apiserver::Config::default()
    })
    .expect("api server");
    let hub = TestCluster {
        client: server.client(),
        server,
    };
    hub.install_crds(fleet_api::crds()).await;
    create_namespace(&hub.client, NS).await;
    hub
}

/// A hub with Fleet's CRDs and the workspace namespace.
pub async fn hub() -> TestCluster {
    let hub = TestCluster::with_fleet_crds().await;
    create_namespace(&hub.client, NS).await;
    hub
}

pub async fn create_namespace(client: &Client, name: &str) {
    let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let ns = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
    api.create(&PostParams::default(), &ns)
        .await
        .expect("create namespace");
}

/// Creates (or relabels) Cluster `name` in [`NS`].
pub async fn put_cluster(client: &Client, name: &str, labels: &[(&str, &str)]) {
    let api: Api<Cluster> = Api::namespaced(client.clone(), NS);
    let labels: serde_json::Map<String, serde_json::Value> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    let cluster = json!({
        "apiVersion": "fleet.cattle.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": NS, "labels": labels},
        "spec": {},
    });
    api.patch(
        name,
        &PatchParams::apply("test").force(),
        &Patch::Apply(&cluster),
    )
    .await
    .expect("apply cluster");
}

/// Creates a GitRepo from its spec (JSON).
pub async fn create_gitrepo(client: &Client, name: &str, spec: serde_json::Value) {
    let api: Api<GitRepo> = Api::namespaced(client.clone(), NS);
    let repo = serde_json::from_value(json!({
        "apiVersion": "fleet.cattle.io/v1alpha1",
        "kind": "GitRepo",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }))
    .unwrap();
    api.create(&PostParams::default(), &repo)
        .await
        .expect("create gitrepo");
}

/// Creates the GitRepo `repo` following `main` of `url` at path `app`, targeting clusters labelled env=prod.
pub async fn follow_app_on_prod(client: &Client, url: &str) {
    create_gitrepo(
        client,
        "repo",
        json!({"repo": url, "branch": "main", "paths": ["app"],
               "targets": [{"clusterSelector": {"matchLabels": {"env": "prod"}}}]}),
    )
    .await;
}

pub async fn gitrepo(client: &Client, name: &str) -> GitRepo {
    Api::<GitRepo>::namespaced(client.clone(), NS)
        .get(name)
        .await
        .expect("get gitrepo")
}

/// Every BundleDeployment on the hub, keyed by (cluster, name).
#[allow(unused_imports)] // each test binary uses a different subset
pub use fleet_testing::bundle_deployments as deployments;

/// What an agent reports after applying the BundleDeployment's current deploymentID successfully.
pub async fn report_ready(client: &Client, bd: &BundleDeployment) {
    fleet_testing::report_ready(client, bd)
        .await
        .expect("report status");
}

/// Creates the Bundle `edge-config` deploying the ConfigMap `apps/edge` (`key: <value>`) to the clusters
/// labelled `env: edge`, and waits until the ConfigMap is on `downstream`; the ConfigMap found there.
pub async fn deploy_edge_config(hub: &Client, downstream: &Client, value: &str) -> ConfigMap {
    let bundle: Bundle = serde_json::from_value(json!({
        "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "Bundle",
        "metadata": {"name": "edge-config", "namespace": NS},
        "spec": {
            "defaultNamespace": "apps",
            "resources": [{"name": "cm.yaml",
                "content": format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: edge\ndata:\n  key: {value}\n")}],
            "targets": [{"clusterSelector": {"matchLabels": {"env": "edge"}}}],
        },
    }))
    .unwrap();
    Api::<Bundle>::namespaced(hub.clone(), NS)
        .create(&PostParams::default(), &bundle)
        .await
        .unwrap();
    let deployed: Api<ConfigMap> = Api::namespaced(downstream.clone(), "apps");
    eventually("the bundle's ConfigMap deployed downstream", || async {
        deployed.get_opt("edge").await.ok().flatten()
    })
    .await
}

/// Condition `type_` of a GitRepo, as (status, message).
pub fn condition(repo: &GitRepo, type_: &str) -> Option<(String, String)> {
    repo.status
        .as_ref()
        .and_then(|s| s.base.conditions.iter().find(|c| c.type_ == type_))
        .map(|c| (c.status.clone(), c.message.clone()))
}

/// Waits for the Event with `reason` about the object `name` in `namespace`, as the controller records them.
pub async fn event_about(
    client: &Client,
    namespace: &str,
    reason: &str,
    name: &str,
) -> k8s_openapi::api::events::v1::Event {
    let events: Api<k8s_openapi::api::events::v1::Event> =
        Api::namespaced(client.clone(), namespace);
    eventually(&format!("the {reason} event about {name}"), || async {
        events
            .list(&Default::default())
            .await
            .ok()?
            .items
            .into_iter()
            .find(|e| {
                e.reason.as_deref() == Some(reason)
                    && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name)
            })
    })
    .await
}
