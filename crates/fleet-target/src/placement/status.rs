//! Status output of a scheduling decision: the `Scheduled` condition (fulfilled or unfulfilled,
//! with counts), the unselected clusters with readable reasons — for PickN first the clusters
//! that did not score high enough (best first), then the filtered ones by name; for PickAll the
//! filtered ones; for PickFixed the names not found or not eligible — capped at 20, and warnings
//! about expired custom scores a policy refers to.

use std::collections::BTreeSet;
use std::fmt;

use crate::model::ClusterKey;

use super::input::ScheduleInput;
use super::score::ClusterScore;

/// At most this many unselected clusters are reported.
pub const MAX_UNSELECTED: usize = 20;

/// The filter stage that rejected a cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    ClusterAffinity,
    Eligibility,
    TaintToleration,
    TopologySpread,
}

/// Why a cluster was not selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnselectedReason {
    /// Rejected by a filter stage.
    Filtered { stage: Stage, message: String },
    /// Passed the filters but others scored higher.
    ScoreTooLow(ClusterScore),
    /// PickFixed: no candidate cluster has this name.
    NotFound,
    /// PickFixed: the cluster exists but cannot receive placements.
    NotEligible(String),
}

/// One unselected cluster (`namespace/name`, or the bare name PickFixed asked for).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unselected {
    pub cluster: String,
    pub reason: UnselectedReason,
}

impl fmt::Display for Unselected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.cluster;
        match &self.reason {
            UnselectedReason::Filtered { stage, message } => {
                write!(f, "cluster {c:?} filtered by {stage:?}: {message}")
            }
            UnselectedReason::ScoreTooLow(s) => write!(
                f,
                "cluster {c:?} does not score high enough (affinity score: {}, topology spread score: {})",
                s.affinity, s.topology_spread
            ),
            UnselectedReason::NotFound => write!(f, "specified cluster {c:?} is not found"),
            UnselectedReason::NotEligible(m) => {
                write!(f, "cluster {c:?} is not eligible for placement yet: {m}")
            }
        }
    }
}

/// The `Scheduled` condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduledCondition {
    pub fulfilled: bool,
    /// `SchedulingPolicyFulfilled` or `SchedulingPolicyUnfulfilled`.
    pub reason: String,
    pub message: String,
    /// How many clusters the policy asks for (`None` for PickAll).
    pub wanted: Option<usize>,
    pub found: usize,
}

pub(super) fn filtered(key: &ClusterKey, stage: Stage, message: String) -> Unselected {
    Unselected {
        cluster: key.to_string(),
        reason: UnselectedReason::Filtered { stage, message },
    }
}

pub(super) fn cap(mut list: Vec<Unselected>) -> Vec<Unselected> {
    list.truncate(MAX_UNSELECTED);
    list
}

pub fn condition(wanted: Option<usize>, found: usize) -> ScheduledCondition {
    let fulfilled = wanted.is_none_or(|w| found >= w);
    ScheduledCondition {
        fulfilled,
        reason: if fulfilled {
            "SchedulingPolicyFulfilled"
        } else {
            "SchedulingPolicyUnfulfilled"
        }
        .into(),
        message: if fulfilled {
            format!(
                "found all clusters needed as specified by the placement policy, found {found} cluster(s)"
            )
        } else {
            format!(
                "could not find all clusters needed as specified by the placement policy, found {found} of {} cluster(s)",
                wanted.unwrap_or(found)
            )
        },
        wanted,
        found,
    }
}

/// Warnings for custom scores that a sorter or property selector names but that have expired.
pub(super) fn expired_score_warnings(input: &ScheduleInput<'_>) -> Vec<String> {
    let policy = input.policy;
    let mut names: BTreeSet<&str> = policy
        .preferred_terms()
        .iter()
        .filter_map(|t| t.preference.property_sorter.as_ref())
        .map(|s| s.name.as_str())
        .collect();
    names.extend(
        policy
            .required_terms()
            .into_iter()
            .flatten()
            .flat_map(|t| t.property_selector.iter())
            .flat_map(|p| p.match_expressions.iter())
            .map(|r| r.name.as_str()),
    );
    let mut warnings: Vec<String> = input
        .candidates
        .iter()
        .flat_map(|c| {
            c.scores
                .iter()
                .filter(|s| names.contains(s.name.as_str()))
                .filter(|s| {
                    s.valid_until
                        .as_ref()
                        .is_some_and(|until| input.now > crate::model::unix(until))
                })
                .map(|s| format!("custom score {}/{} expired", c.key(), s.name))
        })
        .collect();
    warnings.sort();
    warnings
}
