//! The hub's starting state, as installing Fleet's charts leaves it: Fleet's CRDs, the workspace
//! `fleet-default`, the controller's namespace with the `fleet-controller` ConfigMap telling agents where
//! the hub is, the `fleet-local` bootstrap (workspace, `local` Cluster, `default` group), and a `default` group of
//! every cluster in `fleet-default` for GitRepos without targets.

use fleet_api::ClusterGroup;
use fleet_controller::cluster::bootstrap::{LOCAL_WORKSPACE, bootstrap};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::error::{Error, Result};

/// The workspace dev mode's downstream clusters and GitRepos live in.
pub const WORKSPACE: &str = "fleet-default";
/// The controller's namespace.
pub const SYSTEM_NAMESPACE: &str = "cattle-fleet-system";
/// The local agent's namespace (and scope) on the hub.
pub const LOCAL_AGENT_NAMESPACE: &str = "cattle-fleet-local-system";
/// The field manager of everything dev mode writes.
pub const FIELD_MANAGER: &str = "fleet-dev";

/// Installs the CRDs and creates the namespaces, the agent config and the `fleet-local` bootstrap.
pub async fn prepare(hub: &kube::Client, hub_url: &str, hub_ca_pem: &str) -> Result<()> {
    let crds: Api<CustomResourceDefinition> = Api::all(hub.clone());
    for crd in fleet_api::crds() {
        let name = crd.metadata.name.clone().unwrap_or_default();
        create_or_keep(crds.create(&PostParams::default(), &crd).await)
            .map_err(|e| Error::kube(format!("installing CRD {name}"), e))?;
    }
    for namespace in [WORKSPACE, SYSTEM_NAMESPACE, LOCAL_AGENT_NAMESPACE] {
        ensure_namespace(hub, namespace).await?;
    }
    default_group(hub).await?;
    // Where agents reach the hub: the token controller copies it into every registration's values.
    let config = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "fleet-controller", "namespace": SYSTEM_NAMESPACE},
        "data": {"config": json!({"apiServerURL": hub_url, "apiServerCA": hub_ca_pem}).to_string()},
    });
    Api::<ConfigMap>::namespaced(hub.clone(), SYSTEM_NAMESPACE)
        .patch(
            "fleet-controller",
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&config),
        )
        .await
        .map_err(|e| Error::kube("writing the fleet-controller ConfigMap", e))?;
    bootstrap(hub).await.map_err(|e| Error::Cluster {
        cluster: format!("{LOCAL_WORKSPACE}/local"),
        message: format!("bootstrapping the fleet-local workspace: {e}"),
    })
}

/// The ClusterGroup `default` of the dev workspace, holding every cluster (an empty selector matches all). A
/// GitRepo or fleet.yaml without targets gets Fleet's default target, `clusterGroup: default`, and Fleet's
/// documentation (gitrepo-targets, "Default Target") says to create a group of that name to give such GitRepos a
/// home; dev mode does, so that `fleet dev --repo .` on a repository without targets deploys to its clusters.
/// Created only when missing: a `default` group of an example's `gitrepo.yaml` replaces it.
pub const DEFAULT_GROUP: &str = "default";

async fn default_group(hub: &kube::Client) -> Result<()> {
    let group: ClusterGroup = serde_json::from_value(json!({
        "apiVersion": fleet_api::API_VERSION, "kind": "ClusterGroup",
        "metadata": {"name": DEFAULT_GROUP, "namespace": WORKSPACE},
        "spec": {"selector": {}},
    }))
    .expect("a valid ClusterGroup");
    create_or_keep(
        Api::<ClusterGroup>::namespaced(hub.clone(), WORKSPACE)
            .create(&PostParams::default(), &group)
            .await,
    )
    .map_err(|e| {
        Error::kube(
            format!("creating ClusterGroup {WORKSPACE}/{DEFAULT_GROUP}"),
            e,
        )
    })
}

/// Creates a namespace unless it exists.
pub async fn ensure_namespace(client: &kube::Client, name: &str) -> Result<()> {
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": name}})).expect("a valid Namespace");
    create_or_keep(
        Api::<Namespace>::all(client.clone())
            .create(&PostParams::default(), &namespace)
            .await,
    )
    .map_err(|e| Error::kube(format!("creating namespace {name}"), e))
}

/// A create whose "already exists" is success.
pub(crate) fn create_or_keep<T>(result: kube::Result<T>) -> kube::Result<()> {
    match result {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(err) => Err(err),
    }
}
