//! Shared pieces of the end-to-end tests: dev mode with three clusters following a real git repository
//! made in a temp dir (or with any clusters and repositories), fast timings, bounded waits on conditions,
//! reads from the downstream clusters, and Secrets written on the hub.

#![allow(dead_code)] // each test binary uses a different subset

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use fleet_api::GitRepo;
use fleet_dev::cluster::AgentTiming;
use fleet_dev::{Dev, DevOptions, RepoRequest, RepoSource, Tuning};
use fleet_testing::GitFixture;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::ResourceExt;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

/// The GitRepo every test follows.
pub const REPO: &str = "app";
pub const WORKSPACE: &str = "fleet-default";

/// Fast timings; polling is slow on purpose, so that only the watched refs make a commit deploy.
pub fn fast() -> Tuning {
    Tuning {
        default_polling_interval: Duration::from_secs(600),
        agent: AgentTiming {
            monitor_interval: Duration::from_millis(500),
            checkin_interval: Duration::from_millis(500),
        },
        not_seen_after: Duration::from_secs(3),
        debounce: Duration::from_millis(50),
    }
}

/// Dev mode with three clusters (dev, staging, prod) and the GitRepo [`REPO`] following `repo`, with
/// `spec` merged into its spec.
pub struct Running {
    pub dev: Dev,
    _state: tempfile::TempDir,
}

pub async fn start(repo: &GitFixture, spec: Value) -> Running {
    let state = tempfile::tempdir().expect("temp dir");
    let request = RepoRequest {
        source: RepoSource::Git(repo.path().to_path_buf()),
        name: Some(REPO.to_string()),
        spec: spec.as_object().cloned().unwrap_or_default(),
    };
    let dev = dev_mode(3, vec![request], state.path()).await;
    Running { dev, _state: state }
}

/// Dev mode with `clusters` clusters following `repos`, [`fast`] timings, its state under `state/dev`.
pub async fn dev_mode(clusters: usize, repos: Vec<RepoRequest>, state: &Path) -> Dev {
    Dev::start(DevOptions {
        clusters,
        repos,
        data_dir: state.join("dev"),
        tuning: fast(),
    })
    .await
    .expect("dev mode starts")
}

pub use fleet_testing::eventually;

/// Waits until the GitRepo has read `commit` and is Ready on every cluster it targets.
pub async fn deployed(dev: &Dev, commit: &str) {
    eventually(&format!("commit {commit} deployed and Ready"), || async {
        let repo = gitrepo(dev).await;
        let status = repo.status.clone().unwrap_or_default();
        (status.commit == commit).then_some(())?;
        match dev.readiness().await.ok()? {
            fleet_dev::ready::Readiness::Ready => Some(()),
            fleet_dev::ready::Readiness::Waiting(_) => None,
        }
    })
    .await;
}

pub async fn gitrepo(dev: &Dev) -> GitRepo {
    Api::<GitRepo>::namespaced(dev.hub_client(), WORKSPACE)
        .get(REPO)
        .await
        .expect("get gitrepo")
}

/// A ConfigMap on a downstream cluster.
pub async fn configmap(dev: &Dev, cluster: &str, namespace: &str, name: &str) -> Option<ConfigMap> {
    Api::<ConfigMap>::namespaced(dev.cluster(cluster).unwrap().client(), namespace)
        .get_opt(name)
        .await
        .expect("get configmap")
}

/// `data[key]` of a ConfigMap on a downstream cluster.
pub async fn configmap_value(
    dev: &Dev,
    cluster: &str,
    namespace: &str,
    name: &str,
    key: &str,
) -> Option<String> {
    configmap(dev, cluster, namespace, name)
        .await
        .and_then(|cm| cm.data.unwrap_or_default().get(key).cloned())
}

/// The resourceVersion of a ConfigMap on each of `clusters`.
pub async fn resource_versions(
    dev: &Dev,
    clusters: &[&str],
    namespace: &str,
    name: &str,
) -> BTreeMap<String, String> {
    let mut versions = BTreeMap::new();
    for cluster in clusters {
        let cm = configmap(dev, cluster, namespace, name)
            .await
            .unwrap_or_else(|| panic!("{namespace}/{name} on {cluster}"));
        versions.insert(
            cluster.to_string(),
            cm.resource_version().unwrap_or_default(),
        );
    }
    versions
}

/// deploymentID of every BundleDeployment, keyed by `cluster/bundle`.
pub async fn deployment_ids(dev: &Dev) -> BTreeMap<String, String> {
    fleet_testing::bundle_deployments(&dev.hub_client())
        .await
        .into_iter()
        .map(|((cluster, name), bd)| (format!("{cluster}/{name}"), bd.spec.deployment_id))
        .collect()
}

/// A ConfigMap manifest.
pub fn configmap_yaml(name: &str, key: &str, value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  {key}: \"{value}\"\n"
    )
}

/// GitRepo targets selecting clusters whose `env` is one of `envs`.
pub fn targets(envs: &[&str]) -> Value {
    json!([{"clusterSelector": {"matchExpressions": [{"key": "env", "operator": "In", "values": envs}]}}])
}

/// The three simulated clusters, in `env` order dev, staging, prod.
pub const ALL_CLUSTERS: [&str; 3] = ["cluster-1", "cluster-2", "cluster-3"];

/// A repository whose bundle `app` (namespace `demo`) holds one ConfigMap `name`, followed by dev mode on
/// every cluster and deployed: the starting point of the tests that then change or break something.
pub struct Deployed {
    pub repo: GitFixture,
    pub running: Running,
    /// The first commit, deployed and Ready everywhere.
    pub commit: String,
}

pub async fn deploy_configmap(name: &str) -> Deployed {
    let repo = GitFixture::new();
    repo.write("app/fleet.yaml", "defaultNamespace: demo\n")
        .write("app/cm.yaml", &configmap_yaml(name, "k", "v"));
    let commit = repo.commit("first");
    let running = start(
        &repo,
        json!({"targets": targets(&["dev", "staging", "prod"])}),
    )
    .await;
    deployed(&running.dev, &commit).await;
    Deployed {
        repo,
        running,
        commit,
    }
}

/// The Cluster `name` in a fetched dev-mode state.
pub fn cluster_in<'a>(
    state: &'a fleet_dev::view::FleetState,
    name: &str,
) -> Option<&'a fleet_api::Cluster> {
    state
        .clusters
        .iter()
        .find(|c| c.metadata.name.as_deref() == Some(name))
}

/// Creates the Secret `name` in [`WORKSPACE`] on the hub with `data` as its `stringData`, of `type_` when given.
pub async fn create_secret(dev: &Dev, name: &str, type_: Option<&str>, data: Value) {
    let mut secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": WORKSPACE},
        "stringData": data,
    });
    if let Some(type_) = type_ {
        secret["type"] = json!(type_);
    }
    let secret: Secret = serde_json::from_value(secret).unwrap();
    Api::<Secret>::namespaced(dev.hub_client(), WORKSPACE)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
}
