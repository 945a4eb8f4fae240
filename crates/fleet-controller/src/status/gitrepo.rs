//! A GitRepo's aggregated status over the BundleDeployments of its Bundles (label `repo-name`): summary,
//! ready and desired clusters, `display`, and the Ready condition, which reports a git or read error first,
//! then Fleet's ready message.

use fleet_api::{BundleState, GitRepoStatus, find_condition};

use crate::status::tally::RepoTally;
use crate::status::{conditions, deployment_message, ready_message, summary_state};

/// Condition reporting ls-remote failures (Fleet's name).
pub const GIT_POLLING: &str = "GitPolling";
/// Condition reporting that the current commit could not be (fully) read into Bundles.
pub const STALLED: &str = "Stalled";

/// Recomputes the aggregated parts of `status` from the tally of the GitRepo's BundleDeployments.
pub fn aggregate(status: &mut GitRepoStatus, tally: Option<&RepoTally>, now: &str) {
    let summary = tally.map(|t| t.tally.summary()).unwrap_or_default();
    let base = &mut status.base;
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
