//! Releasing the controller's finalizers before the chart is uninstalled (`fleet controller --uninstall`, the
//! `fleet` chart's pre-delete hook): the controller Deployment is scaled to zero, the leader Lease is taken
//! once its last holder stopped renewing it (so no controller can add a finalizer again), then the
//! finalizers this controller puts on Clusters, GitRepos and Bundles are removed. Without this, `helm
//! uninstall` deletes the controller's RBAC and Deployment while Cluster `local` and its workspace still wait
//! on it, and they stay Terminating forever (so would every Fleet object once the CRDs are uninstalled).

use std::time::Duration;

use fleet_api::{Bundle, Cluster, GitRepo};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::error::Result;
use crate::leader::{LEASE_NAME, LeaderElection};

/// The controller Deployment the chart installs.
pub const DEPLOYMENT: &str = "fleet-controller";

/// Stops the controller and removes its finalizers; returns how many objects were released.
pub async fn release_finalizers(
    client: &Client,
    system_namespace: &str,
    identity: &str,
) -> Result<usize> {
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), system_namespace);
    if deployments.get_opt(DEPLOYMENT).await?.is_some() {
        deployments
            .patch(
                DEPLOYMENT,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"replicas": 0}})),
            )
            .await?;
        tracing::info!(
            namespace = system_namespace,
            deployment = DEPLOYMENT,
            "scaled to zero"
        );
    }
    LeaderElection::new(
        client.clone(),
        system_namespace,
        LEASE_NAME,
        identity,
        Duration::from_secs(15),
    )
    .acquire()
    .await?;
    let mut released = 0;
    released += strip::<Cluster>(client, crate::placement::leave::FINALIZER).await?;
    released += strip::<GitRepo>(client, crate::gitrepo::FINALIZER).await?;
    released += strip::<Bundle>(client, crate::bundle::FINALIZER).await?;
    tracing::info!(released, "finalizers released");
    Ok(released)
}

async fn strip<K>(client: &Client, finalizer: &str) -> Result<usize>
where
    K: Resource<Scope = kube::core::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    let all: Api<K> = Api::all(client.clone());
    let mut released = 0;
    for object in all.list(&ListParams::default()).await? {
        let finalizers = object.finalizers();
        if !finalizers.iter().any(|f| f == finalizer) {
            continue;
        }
        let kept: Vec<&String> = finalizers.iter().filter(|f| *f != finalizer).collect();
        // The resourceVersion makes the write fail rather than drop a finalizer someone added meanwhile.
        let patch =
            json!({"metadata": {"finalizers": kept, "resourceVersion": object.resource_version()}});
        let api: Api<K> = Api::namespaced(client.clone(), &object.namespace().unwrap_or_default());
        match api
            .patch(
                &object.name_any(),
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
        {
            Ok(_) => released += 1,
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(err) => return Err(err.into()),
        }
    }
    Ok(released)
}
