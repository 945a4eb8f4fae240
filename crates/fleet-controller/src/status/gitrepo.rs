//! A GitRepo's aggregated status over the BundleDeployments of its Bundles (label `repo-name`): summary,
//! ready and desired clusters, `display`, and the Ready condition, which reports a git or read error first,
//! then Fleet's ready message.

use std::collections::BTreeMap;
use std::sync::Arc;

use fleet_api::{
    BundleDeployment, BundleState, BundleSummary, GitRepoStatus, find_condition, labels,
};
use kube::ResourceExt;

use crate::status::{conditions, deployment_state, increment, ready_message, summary_state};

/// Condition reporting ls-remote failures (Fleet's name).
pub const GIT_POLLING: &str = "GitPolling";
/// Condition reporting that the current commit could not be (fully) read into Bundles.
pub const STALLED: &str = "Stalled";

/// Recomputes the aggregated parts of `status` from `deployments` (any order).
pub fn aggregate(status: &mut GitRepoStatus, deployments: &[Arc<BundleDeployment>], now: &str) {
    let mut sorted: Vec<&Arc<BundleDeployment>> = deployments.iter().collect();
    sorted.sort_by_key(|bd| (bd.namespace(), bd.name_any()));
    let mut summary = BundleSummary::default();
    let mut clusters: BTreeMap<(String, String), bool> = BTreeMap::new();
    let mut worst: Option<(BundleState, String)> = None;
    for bd in sorted {
        let state = deployment_state(Some(bd));
        let name = format!("{}/{}", bd.namespace().unwrap_or_default(), bd.name_any());
        increment(&mut summary, &name, &state, Some(bd));
        let cluster = (
            bd.labels()
                .get(labels::CLUSTER_NAMESPACE)
                .cloned()
                .unwrap_or_default(),
            bd.labels()
                .get(labels::CLUSTER)
                .cloned()
                .unwrap_or_default(),
        );
        let ready = clusters.entry(cluster).or_insert(true);
        *ready &= state == BundleState::Ready;
        if worst.as_ref().is_none_or(|(w, _)| state.rank() > w.rank()) {
            let message = crate::status::deployment_message(Some(bd), &state);
            worst = Some((state, message));
        }
    }
    let base = &mut status.base;
    base.desired_ready_clusters = clusters.len() as i64;
    base.ready_clusters = clusters.values().filter(|ready| **ready).count() as i64;
    base.display.ready_bundle_deployments = format!("{}/{}", summary.ready, summary.desired_ready);
    base.display.state = summary_state(&summary);
    let (worst_state, worst_message) = worst.unwrap_or((BundleState::Ready, String::new()));
    base.display.error = worst_state == BundleState::ErrApplied;
    base.display.message = worst_message;

    let failing = |type_: &str, bad: &str| {
        find_condition(&base.conditions, type_)
            .filter(|c| c.status == bad && !c.message.is_empty())
            .map(|c| c.message.clone())
    };
    let blocking = failing(GIT_POLLING, "False").or_else(|| failing(STALLED, "True"));
    match blocking {
        Some(error) => {
            base.display.error = true;
            base.display.message = error.clone();
            conditions::set(&mut base.conditions, "Ready", false, "Error", &error, now);
        }
        None => {
            let message = ready_message(&summary, "Bundle");
            conditions::set(
                &mut base.conditions,
                "Ready",
                message.is_empty(),
                "",
                &message,
                now,
            );
        }
    }
    base.summary = summary;
}
