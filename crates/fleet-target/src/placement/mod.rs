//! The placement scheduler: optional policy-based selection among the clusters Fleet targeting
//! already allows (KubeFleet's PickAll / PickFixed / PickN with affinity, topology spread, taints
//! and tolerations; OCM's `NoSelect` taints with `tolerationSeconds`). Without a placement block,
//! behaviour is exactly Fleet's: this module is not called.
//!
//! [`schedule`] is one pure scheduling decision: from the policy, the candidate clusters, the
//! existing placements and the time, it returns the clusters to place on (with scores and why),
//! the existing placements to remove (with why), up to 20 unselected clusters with reasons, the
//! `Scheduled` condition, and when to look again (a toleration running out). Stages, in order:
//! [`filter`] (required affinity, eligibility), [`taint`], [`spread`], [`score`], [`pick`],
//! [`status`]. The rollout budget for placed bundles is in [`budget`]; cluster membership facts
//! and the automatic unreachable taint in [`membership`].
//!
//! Stability: placements made under the current policy stay when labels, taints, health or
//! scores change ("IgnoredDuringExecution"), unless a `NoSelect` taint is no longer tolerated;
//! scale-out only adds; scale-in removes not-yet-rolled-out placements first, then the lowest
//! scores; after a policy change, existing placements win ties (the existing-placement bonus).

pub mod budget;
pub mod filter;
pub mod from_api;
pub mod input;
pub mod membership;
pub mod pick;
pub mod policy;
pub mod score;
pub mod spread;
pub mod status;
pub mod taint;
pub mod unfit;

use crate::error::TargetError;
use crate::model::{ClusterKey, UnixSeconds};

pub use filter::EligibilityConfig;
pub use input::{ExistingPlacement, PlacementState, ScheduleInput};
pub use policy::{PlacementPolicy, PlacementType};
pub use score::ClusterScore;
pub use status::{ScheduledCondition, Unselected, UnselectedReason};
pub use unfit::Unfit;

/// How a selected cluster came to be selected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A new placement.
    New,
    /// An existing placement under the current policy, kept.
    Kept,
    /// An existing placement (older policy, or unscheduled) picked again; it keeps its state
    /// (an unscheduled one goes back to the state it had before).
    Reselected(PlacementState),
}

/// A selected cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub cluster: ClusterKey,
    pub origin: Origin,
    /// The score it was picked with (recorded score for kept placements; `None` when unknown
    /// or for PickFixed).
    pub score: Option<ClusterScore>,
}

impl Decision {
    /// The placement this decision leaves behind, to pass as existing to the next decision.
    pub fn to_existing(&self, state: PlacementState) -> ExistingPlacement {
        ExistingPlacement {
            cluster: self.cluster.clone(),
            state,
            obsolete: false,
            score: self.score,
        }
    }
}

/// An existing placement to remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    pub cluster: ClusterKey,
    pub state: PlacementState,
    pub reason: String,
}

/// The result of one scheduling decision. Lists are deterministic: `selected` and `removed`
/// sorted by cluster key, `unselected` in the order described in [`status`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleResult {
    pub selected: Vec<Decision>,
    pub removed: Vec<Removal>,
    pub unselected: Vec<Unselected>,
    /// How many clusters were not selected (`unselected` lists at most 20 of them).
    pub unselected_total: usize,
    pub condition: ScheduledCondition,
    /// Schedule again at this time (a toleration stops covering a `NoSelect` taint).
    pub requeue_at: Option<UnixSeconds>,
    /// E.g. expired custom scores that a sorter or selector refers to.
    pub warnings: Vec<String>,
}

/// The part of a policy whose change makes existing placements obsolete: everything except
/// `numberOfClusters` and `strategy` (changing N rescales without re-placing, as in KubeFleet).
/// Callers store it (or a hash of it) with each placement.
pub fn scheduling_fingerprint(policy: &PlacementPolicy) -> String {
    let mut p = policy.clone();
    p.number_of_clusters = None;
    p.strategy = None;
    serde_json::to_string(&p).unwrap_or_default()
}

/// Runs one scheduling decision.
pub fn schedule(input: &ScheduleInput<'_>) -> Result<ScheduleResult, TargetError> {
    input.policy.validate()?;
    let mut result = pick::run(input);
    result.selected.sort_by(|a, b| a.cluster.cmp(&b.cluster));
    result.removed.sort_by(|a, b| a.cluster.cmp(&b.cluster));
    result.warnings = status::expired_score_warnings(input);
    Ok(result)
}

#[cfg(test)]
mod scenarios;
