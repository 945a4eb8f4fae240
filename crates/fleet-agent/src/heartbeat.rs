//! The check-in: the agent patches its Cluster's `status.agent` (`lastSeen`, `namespace`) on the hub on an
//! interval (Fleet: 15 minutes, first check-in soon after start), which is how the hub tells a live agent
//! from a silent one (`WaitCheckIn`).

use fleet_api::Cluster;
use kube::api::{Api, Patch, PatchParams};

use crate::error::{Error, Result};

/// The Cluster object that represents this agent's cluster on the hub.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterRef {
    pub namespace: String,
    pub name: String,
}

/// Patches `status.agent` of the cluster with the current time.
pub async fn check_in(
    hub: &kube::Client,
    cluster: &ClusterRef,
    agent_namespace: &str,
) -> Result<()> {
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let patch =
        serde_json::json!({"status": {"agent": {"lastSeen": now, "namespace": agent_namespace}}});
    let api: Api<Cluster> = Api::namespaced(hub.clone(), &cluster.namespace);
    api.patch_status(
        &cluster.name,
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map_err(|err| {
        Error::kube(
            format!(
                "checking in on cluster {}/{}",
                cluster.namespace, cluster.name
            ),
            err,
        )
    })?;
    Ok(())
}
