//! Status writing, BundleDeployment → Bundle → GitRepo and Cluster: the status of Bundles ([`bundle`]),
//! GitRepos ([`gitrepo`]) and ClusterGroups ([`group`]), conditions that keep their transition time while
//! their status does not change ([`conditions`]), and the server-side apply of a status ([`apply_status`]).
//! The summaries they are made of (the state of one BundleDeployment, the tallies, Fleet's ready message)
//! are the index's ([`crate::index::summary`], [`crate::index::tally`]), kept up to date from watch deltas.

pub mod bundle;
pub mod conditions;
pub mod gitrepo;
pub mod group;

use std::fmt::Debug;

use kube::Resource;
use kube::api::{Api, Patch, PatchParams};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::context::FIELD_MANAGER;
use crate::error::Result;
pub use crate::index::summary::{
    MAX_NON_READY, deployment_message, deployment_state, increment, non_ready_entry, ready_message,
    summary_state,
};
pub use crate::index::{resources, tally};

/// Writes `status` as the status of `name` (server-side apply of the status subresource, so fields the
/// controller no longer sets are removed). Callers write only when the status changed.
pub async fn apply_status<K>(api: &Api<K>, name: &str, status: &impl Serialize) -> Result<()>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
{
    let patch = json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "status": status,
    });
    api.patch_status(
        name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&patch),
    )
    .await?;
    Ok(())
}

/// The `Ready` condition Fleet derives from a summary: true when nothing is non-ready, else false with
/// [`ready_message`] naming the non-ready `kind`s.
pub fn set_ready(
    conditions: &mut Vec<fleet_api::Condition>,
    summary: &fleet_api::BundleSummary,
    kind: &str,
    now: &str,
) {
    let message = ready_message(summary, kind);
    conditions::set(conditions, "Ready", message.is_empty(), "", &message, now);
}
