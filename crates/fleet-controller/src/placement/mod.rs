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
//! - [`decisions`]: the latest decisions of the placed Bundles and the placement view of each Cluster;
//! - [`limits`]: the time limits of membership and placement ([`PlacementSettings`]).
//!
//! A deleted Cluster's leave is the Cluster reconciler's ([`crate::cluster::leave`]).

pub mod decisions;
pub mod limits;
pub mod membership;
pub mod status;
pub mod view;

use fleet_api::{Bundle, GitRepo};
use fleet_target::model::UnixSeconds;

use crate::context::Context;

pub use fleet_target::placement::taint::UNREACHABLE_TAINT_KEY;
pub use limits::PlacementSettings;

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
    use std::time::Duration;

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
