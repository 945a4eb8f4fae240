//! Placement status: a scheduling decision becomes the Bundle's `status.placement` (selected clusters
//! with scores, up to 20 unselected with the reason, `"<found>/<wanted>"` for the printer column) and
//! its `Scheduled` condition; the GitRepo's `status.placement` lists its Bundles' decisions and its
//! `Scheduled` condition is fulfilled when every one of them is. The Bundle reconciler records each
//! Bundle's decisions in [`super::decisions::Decisions`], which the GitRepo reconciler reads.

use fleet_api::labels;
use fleet_api::{Bundle, BundlePlacementStatus, BundleStatus, Condition, GitRepoStatus};
use kube::ResourceExt;

use crate::context::Context;
use crate::status::conditions;

/// The condition type.
pub const SCHEDULED: &str = "Scheduled";

pub use super::decisions::Decisions;
pub use fleet_target::plan::placement::{Outcome, outcome};

/// Sets (or, without a placement, removes) the Bundle's placement status and `Scheduled` condition.
pub fn apply_to_bundle(status: &mut BundleStatus, outcome: Option<&Outcome>, now: &str) {
    match outcome {
        Some(outcome) => {
            let c = &outcome.condition;
            conditions::set(
                &mut status.conditions,
                SCHEDULED,
                c.fulfilled,
                &c.reason,
                &c.message,
                now,
            );
            status.placement = Some(outcome.status.clone());
        }
        None => {
            status.conditions.retain(|c| c.type_ != SCHEDULED);
            status.placement = None;
        }
    }
}

/// Sets the Bundle's placement status ([`apply_to_bundle`]) and records the outcome for its GitRepo,
/// waking the GitRepo when it changed.
pub fn record_bundle(
    ctx: &Context,
    bundle: &Bundle,
    status: &mut BundleStatus,
    outcome: Option<&Outcome>,
    now: &str,
) {
    apply_to_bundle(status, outcome, now);
    let namespace = bundle.namespace().unwrap_or_default();
    let repo = bundle.labels().get(labels::REPO_NAME).map(String::as_str);
    let key = (namespace.clone(), bundle.name_any());
    if ctx.placement_decisions.record(&key, repo, outcome)
        && let Some(repo) = repo
    {
        ctx.triggers.gitrepo(&namespace, repo);
    }
}

/// Sets the GitRepo's placement list and `Scheduled` condition from its Bundles' outcomes (removed when
/// none of its Bundles has a placement block).
pub fn apply_to_gitrepo(status: &mut GitRepoStatus, outcomes: &[(String, Outcome)], now: &str) {
    let conditions: &mut Vec<Condition> = &mut status.base.conditions;
    if outcomes.is_empty() {
        conditions.retain(|c| c.type_ != SCHEDULED);
        status.placement.clear();
        return;
    }
    status.placement = outcomes
        .iter()
        .map(|(bundle, o)| BundlePlacementStatus {
            bundle: bundle.clone(),
            status: o.status.clone(),
        })
        .collect();
    let unfulfilled: Vec<String> = outcomes
        .iter()
        .filter(|(_, o)| !o.condition.fulfilled)
        .map(|(bundle, o)| format!("{bundle}: {}", o.condition.message))
        .collect();
    let (reason, message) = if unfulfilled.is_empty() {
        (
            "SchedulingPolicyFulfilled",
            format!(
                "every placement is fulfilled ({} bundle(s))",
                outcomes.len()
            ),
        )
    } else {
        ("SchedulingPolicyUnfulfilled", unfulfilled.join("; "))
    };
    conditions::set(
        conditions,
        SCHEDULED,
        unfulfilled.is_empty(),
        reason,
        &message,
        now,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_target::model::{ClusterInfo, ClusterKey};
    use fleet_target::placement::ScheduleResult;
    use fleet_target::placement::status::{Stage, Unselected, UnselectedReason};
    use fleet_target::placement::{ClusterScore, Decision, Origin};

    fn result(found: usize, wanted: usize) -> ScheduleResult {
        ScheduleResult {
            selected: (0..found)
                .map(|i| Decision {
                    cluster: ClusterKey::new("ns", format!("c{i}")),
                    origin: Origin::New,
                    score: Some(ClusterScore {
                        topology_spread: 0,
                        affinity: 10,
                        existing_placement: 0,
                    }),
                })
                .collect(),
            removed: Vec::new(),
            unselected: vec![Unselected {
                cluster: "ns/x".into(),
                reason: UnselectedReason::Filtered {
                    stage: Stage::TaintToleration,
                    message: "taint maintenance:NoSelect is not tolerated".into(),
                },
            }],
            unselected_total: 1,
            condition: fleet_target::placement::status::condition(Some(wanted), found),
            requeue_at: None,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn bundle_status_shows_counts_scores_and_reasons() {
        let o = outcome(&result(2, 3), "h");
        let mut status = BundleStatus::default();
        apply_to_bundle(&mut status, Some(&o), "t1");
        let placement = status.placement.clone().unwrap();
        assert_eq!(placement.scheduled, "2/3");
        assert_eq!(placement.selected[0].cluster, "ns/c0");
        assert_eq!(placement.selected[0].score.as_ref().unwrap().affinity, 10);
        assert_eq!(
            placement.unselected[0].reason,
            "cluster \"ns/x\" filtered by TaintToleration: taint maintenance:NoSelect is not tolerated"
        );
        let c = &status.conditions[0];
        assert_eq!(
            (c.type_.as_str(), c.status.as_str(), c.reason.as_str()),
            ("Scheduled", "False", "SchedulingPolicyUnfulfilled")
        );
        apply_to_bundle(&mut status, None, "t2");
        assert!(status.conditions.is_empty() && status.placement.is_none());
    }

    #[test]
    fn gitrepo_condition_names_the_unfulfilled_bundles() {
        let mut status = GitRepoStatus::default();
        let outcomes = vec![
            ("repo-a".to_string(), outcome(&result(3, 3), "h")),
            ("repo-b".to_string(), outcome(&result(1, 2), "h")),
        ];
        apply_to_gitrepo(&mut status, &outcomes, "t");
        assert_eq!(status.placement.len(), 2);
        let c = &status.base.conditions[0];
        assert_eq!(c.status, "False");
        assert!(
            c.message.starts_with("repo-b: could not find all clusters"),
            "{}",
            c.message
        );
        apply_to_gitrepo(&mut status, &outcomes[..1], "t");
        assert_eq!(status.base.conditions[0].status, "True");
        apply_to_gitrepo(&mut status, &[], "t");
        assert!(status.base.conditions.is_empty() && status.placement.is_empty());
    }

    #[test]
    fn decisions_report_changes() {
        let decisions = Decisions::default();
        let key = ("ns".to_string(), "repo-a".to_string());
        let o = outcome(&result(1, 1), "h");
        assert!(decisions.record(&key, Some("repo"), Some(&o)));
        assert!(!decisions.record(&key, Some("repo"), Some(&o)));
        assert_eq!(decisions.of_repo("ns", "repo").len(), 1);
        assert!(decisions.of_repo("ns", "other").is_empty());
        let cluster = ClusterKey::new("ns", "c");
        let mut info = ClusterInfo::new("ns", "c", []);
        info.health = Some(Default::default());
        assert_eq!(
            decisions.cluster_seen(&cluster, Some(&info)),
            std::slice::from_ref(&key)
        );
        info.health.as_mut().unwrap().last_heartbeat = Some(5);
        assert!(decisions.cluster_seen(&cluster, Some(&info)).is_empty());
        info.labels.insert("env".into(), "prod".into());
        assert_eq!(
            decisions.cluster_seen(&cluster, Some(&info)),
            std::slice::from_ref(&key)
        );
        assert!(decisions.record(&key, Some("repo"), None));
    }

    #[test]
    fn a_cluster_change_wakes_a_placed_bundle_still_planning_its_first_outcome() {
        let decisions = Decisions::default();
        let first = ("ns".to_string(), "repo-first".to_string());
        let unplaced = ("ns".to_string(), "repo-unplaced".to_string());
        decisions.planning(&first, true);
        decisions.planning(&unplaced, false);
        let cluster = ClusterKey::new("ns", "c");
        let info = ClusterInfo::new("ns", "c", [("env", "prod")]);
        assert_eq!(
            decisions.cluster_seen(&cluster, Some(&info)),
            std::slice::from_ref(&first)
        );
        decisions.planning(&first, false);
        assert!(decisions.cluster_seen(&cluster, None).is_empty());
    }
}
