//! Releasing the controller's finalizers before the chart is uninstalled (`fleet controller --uninstall`, the
//! `fleet` chart's pre-delete hook): the controller Deployment is scaled to zero, the leader Lease is taken
//! once its last holder stopped renewing it (so no controller can add a finalizer again), then the
//! finalizers this controller puts on Clusters, GitRepos, HelmOps and Bundles are removed. Without this, `helm
//! uninstall` deletes the controller's RBAC and Deployment while Cluster `local` and its workspace still wait
//! on it, and they stay Terminating forever (so would every Fleet object once the CRDs are uninstalled).

use std::time::Duration;

use fleet_api::{Bundle, Cluster, GitRepo, HelmOp};
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
    released += strip::<Cluster>(client, crate::cluster::leave::FINALIZER).await?;
    released += strip::<GitRepo>(client, crate::gitrepo::FINALIZER).await?;
    released += strip::<HelmOp>(client, crate::helmop::FINALIZER).await?;
    released += strip::<Bundle>(client, crate::bundle::FINALIZER).await?;
    tracing::info!(released, "finalizers released");
    Ok(released)
}

/// How many times one object's finalizer removal is retried when its writes race ours (an agent's
/// heartbeat updating Cluster status, a reconcile finishing) before uninstall gives up.
const CONFLICT_ATTEMPTS: usize = 10;

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
        let api: Api<K> = Api::namespaced(client.clone(), &object.namespace().unwrap_or_default());
        if release_one(&api, object, finalizer).await? {
            released += 1;
        }
    }
    Ok(released)
}

/// Removes `finalizer` from one object, starting from a copy that may already be stale: a 409 means someone
/// else wrote the object since it was read, so it is read again and the removal retried on the fresh copy.
/// Returns whether the finalizer was removed by this call.
async fn release_one<K>(api: &Api<K>, mut object: K, finalizer: &str) -> Result<bool>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let name = object.name_any();
    let mut attempt = 0;
    loop {
        attempt += 1;
        let finalizers = object.finalizers();
        if !finalizers.iter().any(|f| f == finalizer) {
            return Ok(false);
        }
        let kept: Vec<&String> = finalizers.iter().filter(|f| *f != finalizer).collect();
        // The resourceVersion makes the write fail rather than drop a finalizer someone added meanwhile.
        let patch =
            json!({"metadata": {"finalizers": kept, "resourceVersion": object.resource_version()}});
        match api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => return Ok(true),
            Err(kube::Error::Api(status)) if status.code == 404 => return Ok(false),
            Err(kube::Error::Api(status)) if status.code == 409 && attempt < CONFLICT_ATTEMPTS => {
                tracing::debug!(name, attempt, "changed since read; reading it again");
                match api.get_opt(&name).await? {
                    Some(fresh) => object = fresh,
                    None => return Ok(false),
                }
            }
            Err(err) => return Err(err.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_testing::TestCluster;
    use kube::api::PostParams;

    #[tokio::test]
    async fn a_cluster_written_after_it_was_listed_is_still_released() {
        let hub = TestCluster::with_fleet_crds().await;
        let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(hub.client.clone());
        let namespace =
            serde_json::from_value(json!({"metadata": {"name": "fleet-local"}})).unwrap();
        namespaces
            .create(&PostParams::default(), &namespace)
            .await
            .unwrap();
        let clusters: Api<Cluster> = Api::namespaced(hub.client.clone(), "fleet-local");
        let mut local: Cluster = serde_json::from_value(json!({
            "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "Cluster",
            "metadata": {"name": "local", "namespace": "fleet-local",
                         "finalizers": [crate::cluster::leave::FINALIZER, "example.com/keep"]},
            "spec": {},
        }))
        .unwrap();
        local = clusters
            .create(&PostParams::default(), &local)
            .await
            .unwrap();
        // An agent's heartbeat lands between the uninstall's list and its patch.
        clusters
            .patch_status(
                "local",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"agent": {"lastSeen": "2026-01-01T00:00:00Z"}}})),
            )
            .await
            .unwrap();

        let released = release_one(&clusters, local, crate::cluster::leave::FINALIZER)
            .await
            .expect("a conflict is retried on a fresh copy");

        assert!(released);
        let after = clusters.get("local").await.unwrap();
        assert_eq!(after.finalizers(), ["example.com/keep".to_string()]);
    }
}
