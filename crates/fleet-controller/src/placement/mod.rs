//! Placement wiring and cluster membership in the controller (our addition to Fleet): Bundles with a
//! `placement` block are scheduled by `fleet_target::placement` among the clusters Fleet targeting
//! allows, with their existing placements fed back in; without one nothing here runs.
//!
//! - what is persisted per placement (policy hash and score on each BundleDeployment, the decisions in
//!   the Bundle's status) and how it is read back as existing placements is planning's
//!   (`fleet_target::plan::placement`), so a restart moves nothing;
//! - [`status`]: the `Scheduled` condition and per-cluster decisions on Bundle and GitRepo status;
//! - [`membership`]: the Cluster's `Joined` and `Healthy` conditions from `status.agent.lastSeen`, and
//!   the automatic `NoSelect` taint [`UNREACHABLE_TAINT_KEY`] after the heartbeat timeout;
//! - [`leave`]: a deleted Cluster leaves the fleet — its BundleDeployments go first (annotated orphan
//!   when the Cluster says so), then its namespace and registration credentials.

pub mod leave;
pub mod membership;
pub mod status;
pub mod view;

use std::time::Duration;

use fleet_api::{Bundle, GitRepo};
use fleet_target::model::UnixSeconds;
use fleet_target::placement::EligibilityConfig;

use crate::context::Context;

pub use fleet_target::placement::taint::UNREACHABLE_TAINT_KEY;

/// Time limits of membership and placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlacementSettings {
    /// A Cluster whose agent has not reported for this long is unhealthy, gets the
    /// [`UNREACHABLE_TAINT_KEY`] `NoSelect` taint and receives no new placements (KubeFleet: 5 min).
    pub heartbeat_timeout: Duration,
    /// An unhealthy cluster stays eligible for new placements this long.
    pub unhealthy_grace: Duration,
    /// How long a leaving Cluster waits for its BundleDeployments to go before its namespace is deleted
    /// anyway.
    pub leave_timeout: Duration,
}

impl Default for PlacementSettings {
    fn default() -> Self {
        PlacementSettings {
            heartbeat_timeout: Duration::from_secs(300),
            unhealthy_grace: Duration::from_secs(300),
            leave_timeout: Duration::from_secs(300),
        }
    }
}

impl PlacementSettings {
    /// The scheduler's eligibility limits.
    pub fn eligibility(&self) -> EligibilityConfig {
        EligibilityConfig {
            heartbeat_timeout_seconds: seconds(self.heartbeat_timeout),
            unhealthy_grace_seconds: seconds(self.unhealthy_grace),
        }
    }
}

fn seconds(duration: Duration) -> i64 {
    i64::try_from(duration.as_secs()).unwrap_or(i64::MAX)
}

/// The controller's placement settings (the defaults unless set before it started).
pub fn settings(ctx: &Context) -> PlacementSettings {
    ctx.placement_settings.get().copied().unwrap_or_default()
}

/// The current time in Unix seconds (the scheduler is pure and takes the time from here).
pub fn unix_now() -> UnixSeconds {
    chrono::Utc::now().timestamp()
}

/// A GitRepo's `placement` block applies to each of its Bundles whose fleet.yaml has none (the
/// bundle's own block wins). Called by the GitRepo reader for every Bundle it writes.
pub fn inherit_gitrepo_placement(bundle: &mut Bundle, repo: &GitRepo) {
    if bundle.spec.placement.is_none() {
        bundle.spec.placement = repo.spec.placement.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_api::{BundleSpec, GitRepoSpec, PlacementPolicy};

    #[test]
    fn a_bundle_inherits_the_gitrepo_placement_only_without_its_own() {
        let repo = GitRepo::new(
            "repo",
            GitRepoSpec {
                placement: Some(PlacementPolicy {
                    placement_type: "PickN".into(),
                    number_of_clusters: Some(3),
                    ..PlacementPolicy::default()
                }),
                ..GitRepoSpec::default()
            },
        );
        let mut plain = Bundle::new("b", BundleSpec::default());
        inherit_gitrepo_placement(&mut plain, &repo);
        assert_eq!(plain.spec.placement, repo.spec.placement);
        let own = PlacementPolicy {
            placement_type: "PickAll".into(),
            ..PlacementPolicy::default()
        };
        let mut with_own = Bundle::new(
            "c",
            BundleSpec {
                placement: Some(own.clone()),
                ..BundleSpec::default()
            },
        );
        inherit_gitrepo_placement(&mut with_own, &repo);
        assert_eq!(with_own.spec.placement, Some(own));
    }

    #[test]
    fn settings_map_to_eligibility_seconds() {
        let settings = PlacementSettings {
            heartbeat_timeout: Duration::from_secs(2),
            ..PlacementSettings::default()
        };
        assert_eq!(settings.eligibility().heartbeat_timeout_seconds, 2);
        assert_eq!(settings.eligibility().unhealthy_grace_seconds, 300);
    }
}
