//! What one scheduling decision reads: the policy, the candidate clusters, the placements that
//! exist before it (with their lifecycle state), the time and the eligibility settings.

use serde::{Deserialize, Serialize};

use crate::model::{ClusterInfo, ClusterKey, UnixSeconds};

use super::filter::EligibilityConfig;
use super::policy::PlacementPolicy;
use super::score::ClusterScore;

/// The lifecycle state of an existing placement (a BundleDeployment the scheduler made).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum PlacementState {
    /// Chosen but not rolled out yet.
    Scheduled,
    /// Rolled out.
    Bound,
    /// Marked for removal but not removed yet; picking its cluster again restores it.
    Unscheduled,
}

/// A placement that exists before this scheduling decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExistingPlacement {
    pub cluster: ClusterKey,
    pub state: PlacementState,
    /// Made under an older policy (its scheduling fingerprint differs).
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub obsolete: bool,
    /// The score recorded when it was made.
    #[serde(default)]
    pub score: Option<ClusterScore>,
}

/// Everything one scheduling decision reads.
#[derive(Debug, Clone)]
pub struct ScheduleInput<'a> {
    pub policy: &'a PlacementPolicy,
    /// The clusters Fleet targeting allows (their properties define sorter ranges and spread
    /// domains, ineligible ones included).
    pub candidates: &'a [&'a ClusterInfo],
    pub existing: &'a [ExistingPlacement],
    pub now: UnixSeconds,
    pub eligibility: EligibilityConfig,
}
