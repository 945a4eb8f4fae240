//! Cluster membership facts for the Cluster's status and the scheduler: `Joined`, `Healthy`,
//! heartbeat age, eligibility, and the automatic `unreachable` `NoSelect` taint — added once the
//! heartbeat is older than the timeout (keeping the time it was first added), removed when the
//! cluster reports again.

use fleet_api::ClusterTaint;

use crate::model::{ClusterInfo, UnixSeconds};

use super::filter::{EligibilityConfig, check_eligibility};
use super::taint::{UNREACHABLE_TAINT_KEY, unreachable_taint};
use super::unfit::Unfit;

/// What the hub knows about a cluster's membership.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MembershipStatus {
    pub joined: bool,
    /// The `Healthy` condition, if reported.
    pub healthy: Option<bool>,
    /// Seconds since the last heartbeat, if any.
    pub heartbeat_age_seconds: Option<i64>,
    /// The heartbeat is within the timeout.
    pub reachable: bool,
    /// Whether new placements may go there, or why not.
    pub eligible: Result<(), Unfit>,
}

/// Membership facts of `cluster` at `now`. A cluster without health data is reported joined,
/// reachable and eligible (offline use).
pub fn membership_status(
    cluster: &ClusterInfo,
    now: UnixSeconds,
    config: &EligibilityConfig,
) -> MembershipStatus {
    let health = cluster.health.as_ref();
    let heartbeat_age_seconds = health
        .and_then(|h| h.last_heartbeat)
        .map(|at| now.saturating_sub(at));
    MembershipStatus {
        joined: health.is_none_or(|h| h.joined && !h.leaving),
        healthy: health.and_then(|h| h.healthy).map(|h| h.status),
        heartbeat_age_seconds,
        reachable: unreachable_taint(cluster, now, config).is_none(),
        eligible: check_eligibility(cluster, now, config),
    }
}

/// The cluster's taints with the automatic `unreachable` taint added or removed as its heartbeat
/// requires. Other taints are kept in order; an existing automatic taint keeps its `timeAdded`.
pub fn with_automatic_taints(
    cluster: &ClusterInfo,
    now: UnixSeconds,
    config: &EligibilityConfig,
) -> Vec<ClusterTaint> {
    let existing = cluster
        .taints
        .iter()
        .find(|t| t.key == UNREACHABLE_TAINT_KEY)
        .cloned();
    let mut taints: Vec<ClusterTaint> = cluster
        .taints
        .iter()
        .filter(|t| t.key != UNREACHABLE_TAINT_KEY)
        .cloned()
        .collect();
    if let Some(fresh) = unreachable_taint(cluster, now, config) {
        taints.push(existing.unwrap_or(fresh));
    }
    taints
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ClusterHealth, HealthCondition, time};
    use fleet_api::TAINT_NO_SCHEDULE;

    fn cluster(last_heartbeat: Option<i64>) -> ClusterInfo {
        let mut c = ClusterInfo::new("ns", "c", []);
        c.taints.push(ClusterTaint {
            key: "maintenance".into(),
            value: String::new(),
            effect: TAINT_NO_SCHEDULE.into(),
            time_added: time(0),
        });
        c.health = Some(ClusterHealth {
            joined: true,
            leaving: false,
            last_heartbeat,
            healthy: Some(HealthCondition {
                status: true,
                last_transition: 0,
            }),
        });
        c
    }

    #[test]
    fn status_reports_age_and_reachability() {
        let config = EligibilityConfig::default();
        let s = membership_status(&cluster(Some(900)), 1000, &config);
        assert_eq!(
            s,
            MembershipStatus {
                joined: true,
                healthy: Some(true),
                heartbeat_age_seconds: Some(100),
                reachable: true,
                eligible: Ok(())
            }
        );
        let s = membership_status(&cluster(Some(600)), 1000, &config);
        assert!(!s.reachable);
        assert_eq!(
            s.eligible,
            Err(Unfit::HeartbeatTimedOut {
                age: 400,
                timeout: 300
            })
        );
        let offline = membership_status(&ClusterInfo::new("ns", "x", []), 1000, &config);
        assert!(offline.joined && offline.reachable && offline.eligible.is_ok());
    }

    #[test]
    fn automatic_taint_is_added_kept_and_removed() {
        let config = EligibilityConfig::default();
        let mut c = cluster(Some(600));
        let taints = with_automatic_taints(&c, 1000, &config);
        assert_eq!(taints.len(), 2);
        assert_eq!(taints[1].key, UNREACHABLE_TAINT_KEY);
        assert_eq!(taints[1].time_added, time(900));
        // Later passes keep the original time.
        c.taints = taints;
        let later = with_automatic_taints(&c, 5000, &config);
        assert_eq!(later[1].time_added, time(900));
        // A fresh heartbeat removes it.
        c.health.as_mut().unwrap().last_heartbeat = Some(4990);
        let back = with_automatic_taints(&c, 5000, &config);
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].key, "maintenance");
    }
}
