//! A GitRepo's (and a HelmOp's, [`aggregate_base`]) aggregated status over the BundleDeployments of its
//! Bundles (label `repo-name`; a HelmOp's label `fleet-helm-name`): summary,
//! ready and desired clusters, `display`, resource counts (total and per cluster) and the `resources`
//! list ([`crate::index::resources`]), and the Ready condition, which reports a git or read error
//! first, then the errors of its Bundles (a templating or targeting error shows on the Bundle, which has
//! no BundleDeployments then, and on its GitRepo), then Fleet's ready message.

use std::collections::BTreeMap;

use fleet_api::{BundleSummary, GitRepoStatus, StatusBase, StatusDisplay, find_condition};

use crate::index::summary::deployment_message;
use crate::index::tally::RepoTally;
use crate::status::conditions::{self, set_ready};

/// `gitJobStatus` once the current commit has been read into Bundles (Fleet's name: the kstatus of its
/// git job, which reads the commit).
pub const JOB_CURRENT: &str = "Current";
/// `gitJobStatus` when reading the commit failed (fetch, checkout or bundle read).
pub const JOB_FAILED: &str = "Failed";

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
    let git_updating = status.git_job_status != JOB_CURRENT;
    aggregate_base(
        &mut status.base,
        tally,
        bundle_errors,
        &[(GIT_POLLING, "False"), (STALLED, "True")],
        git_updating,
        now,
    );
}

/// [`aggregate`] for any source of Bundles (Fleet's `StatusBase`, shared by GitRepo and HelmOp):
/// `blocking` lists the source's own conditions (type, failing status) whose message, when one fails,
/// becomes the Ready message before the Bundles' errors and the BundleDeployments' state; `git_updating`
/// (a GitRepo whose commit is not read yet) shows as the `GitUpdating` state.
pub fn aggregate_base(
    base: &mut StatusBase,
    tally: Option<&RepoTally>,
    bundle_errors: Option<&BTreeMap<String, String>>,
    blocking: &[(&str, &str)],
    git_updating: bool,
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
    base.display = display(tally, git_updating, &summary);

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
            conditions::set(&mut base.conditions, "Ready", false, "Error", &error, now);
        }
        None => {
            set_ready(&mut base.conditions, &summary, "Bundle", now);
        }
    }
    base.summary = summary;
}

/// `status.display` as Fleet's GitRepo status reconciler sets it (`status.SetFields`, then its
/// `GitUpdating` override): `readyBundleDeployments` is `ready/desiredReady`; `state` is the highest-ranked
/// state of the repository's BundleDeployments, left empty when that is Ready or there are none, and
/// `GitUpdating` whenever the last read of the commit is not `Current`; `message` is the message of a
/// BundleDeployment in that state (empty when Ready) and `error` says whether there is one. Git, read and
/// Bundle errors are not copied here: they are on the Ready condition, as in Fleet.
fn display(
    tally: Option<&RepoTally>,
    git_updating: bool,
    summary: &BundleSummary,
) -> StatusDisplay {
    let (state, message) = tally
        .and_then(|t| t.tally.worst())
        .map(|(state, bd)| (state.to_string(), deployment_message(Some(bd), state)))
        .unwrap_or_default();
    StatusDisplay {
        ready_bundle_deployments: format!("{}/{}", summary.ready, summary.desired_ready),
        state: if git_updating {
            "GitUpdating".to_string()
        } else {
            state
        },
        error: !message.is_empty(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::conditions;

    fn summary(ready: i64, desired: i64) -> BundleSummary {
        BundleSummary {
            ready,
            desired_ready: desired,
            ..BundleSummary::default()
        }
    }

    #[test]
    fn all_ready_leaves_the_state_empty() {
        let shown = display(None, false, &summary(0, 0));
        assert_eq!(shown.state, "");
        assert_eq!(shown.ready_bundle_deployments, "0/0");
        assert!(!shown.error && shown.message.is_empty());
    }

    #[test]
    fn a_commit_not_read_is_git_updating() {
        for job in ["", JOB_FAILED, "InProgress"] {
            let mut status = GitRepoStatus {
                git_job_status: job.to_string(),
                ..GitRepoStatus::default()
            };
            aggregate(&mut status, None, None, &conditions::now());
            assert_eq!(status.base.display.state, "GitUpdating", "{job:?}");
        }
    }

    #[test]
    fn errors_stay_on_the_ready_condition() {
        let mut status = GitRepoStatus {
            git_job_status: JOB_CURRENT.to_string(),
            ..GitRepoStatus::default()
        };
        let errors = BTreeMap::from([("repo-bad".to_string(), "templating failed".to_string())]);
        aggregate(&mut status, None, Some(&errors), &conditions::now());
        let ready = find_condition(&status.base.conditions, "Ready").unwrap();
        assert_eq!(
            (ready.status.as_str(), ready.message.as_str()),
            ("False", "Bundle repo-bad: templating failed")
        );
        assert_eq!(
            status.base.display,
            StatusDisplay {
                ready_bundle_deployments: "0/0".to_string(),
                ..StatusDisplay::default()
            }
        );
    }
}
