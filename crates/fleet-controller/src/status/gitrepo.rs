//! A GitRepo's (and a HelmOp's, [`aggregate_base`]) aggregated status over the BundleDeployments of its
//! Bundles (label `repo-name`; a HelmOp's label `fleet-helm-name`): summary,
//! ready and desired clusters, `display`, resource counts (total and per cluster) and the `resources`
//! list ([`crate::status::resources`]), and the Ready condition, which reports a git or read error
//! first, then the errors of its Bundles (a templating or targeting error shows on the Bundle, which has
//! no BundleDeployments then, and on its GitRepo), then Fleet's ready message.

use std::collections::BTreeMap;

use fleet_api::{BundleState, GitRepoStatus, StatusBase, find_condition};

use crate::status::tally::RepoTally;
use crate::status::{conditions, deployment_message, ready_message, summary_state};

/// Condition reporting ls-remote failures (Fleet's name).
pub const GIT_POLLING: &str = "GitPolling";
/// Condition reporting that the current commit could not be (fully) read into Bundles.
pub const STALLED: &str = "Stalled";

/// Recomputes the aggregated parts of `status` from the tally of the GitRepo's BundleDeployments and
/// the errors of its Bundles (Bundle name → message). A failing `GitPolling` or `Stalled` condition is
/// reported first.
pub fn aggregate(
    status: &mut GitRepoStatus,
    tally: Option<&RepoTally>,
    bundle_errors: Option<&BTreeMap<String, String>>,
    now: &str,
) {
    aggregate_base(
        &mut status.base,
        tally,
        bundle_errors,
        &[(GIT_POLLING, "False"), (STALLED, "True")],
        now,
    );
}

/// [`aggregate`] for any source of Bundles (Fleet's `StatusBase`, shared by GitRepo and HelmOp):
/// `blocking` lists the source's own conditions (type, failing status) whose message, when one fails,
/// becomes the Ready message before the Bundles' errors and the BundleDeployments' state.
pub fn aggregate_base(
    base: &mut StatusBase,
    tally: Option<&RepoTally>,
    bundle_errors: Option<&BTreeMap<String, String>>,
    blocking: &[(&str, &str)],
    now: &str,
) {
    let summary = tally.map(|t| t.tally.summary()).unwrap_or_default();
    base.resource_counts = tally
        .map(|t| t.tally.resource_counts().clone())
        .unwrap_or_default();
    base.per_cluster_resource_counts = tally
        .map(RepoTally::per_cluster_resource_counts)
        .unwrap_or_default();
    base.resources = tally.map(|t| t.resources.list()).unwrap_or_default();
    base.desired_ready_clusters = tally.map_or(0, RepoTally::desired_clusters);
    base.ready_clusters = tally.map_or(0, RepoTally::ready_clusters);
    base.display.ready_bundle_deployments = format!("{}/{}", summary.ready, summary.desired_ready);
    base.display.state = summary_state(&summary);
    let (worst_state, worst_message) = tally
        .and_then(|t| t.tally.worst())
        .map(|(state, bd)| (state.clone(), deployment_message(Some(bd), state)))
        .unwrap_or((BundleState::Ready, String::new()));
    base.display.error = worst_state == BundleState::ErrApplied;
    base.display.message = worst_message;

    let failing = |type_: &str, bad: &str| {
        find_condition(&base.conditions, type_)
            .filter(|c| c.status == bad && !c.message.is_empty())
            .map(|c| c.message.clone())
    };
    // Fleet copies the Ready condition of a Bundle that is not ready onto its GitRepo (its status
    // reconciler's `setReadyStatusFromBundle`), so that an error no BundleDeployment carries is seen; the
    // status documentation (ref-status-fields) lists "an error from the Bundle (e.g. when templating
    // failed)" among what the GitRepo's Ready message holds. Every erroring Bundle is named here, not
    // only the first.
    let bundle_error = bundle_errors.filter(|e| !e.is_empty()).map(|errors| {
        errors
            .iter()
            .map(|(bundle, error)| format!("Bundle {bundle}: {error}"))
            .collect::<Vec<_>>()
            .join("; ")
    });
    let blocking = blocking
        .iter()
        .find_map(|(type_, bad)| failing(type_, bad))
        .or(bundle_error);
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
