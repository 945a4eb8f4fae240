//! Cluster membership as the Cluster reconciler writes it: the `Joined` condition (the agent has
//! checked in; false while leaving), the `Healthy` condition (the heartbeat `status.agent.lastSeen` is
//! within the timeout; its age is what the `Last-Seen` column shows), and the automatic `NoSelect`
//! taint [`UNREACHABLE_TAINT_KEY`] on a joined cluster whose heartbeat is older than the
//! timeout, removed when the agent reports again. Taints a user adds without `timeAdded` get the
//! current time, so `tolerationSeconds` count from when the taint was noticed.

use std::time::Duration;

use fleet_api::{Cluster, ClusterTaint, Condition};
use fleet_target::model::{UnixSeconds, time};
use fleet_target::placement::membership::{membership_status, with_automatic_taints};

use fleet_target::placement::taint::UNREACHABLE_TAINT_KEY;

use super::limits::PlacementSettings;
use super::view::cluster_info;
use crate::status::conditions;

/// Condition: the cluster's agent has joined.
pub const JOINED: &str = "Joined";
/// Condition: the cluster's agent reports within the heartbeat timeout.
pub const HEALTHY: &str = "Healthy";

/// What the Cluster reconciler writes for membership.
#[derive(Debug, Clone, PartialEq)]
pub struct Membership {
    /// The Cluster's conditions with `Joined` and `Healthy` set.
    pub conditions: Vec<Condition>,
    /// The new `spec.taints`, when they must change.
    pub taints: Option<Vec<ClusterTaint>>,
    /// Look again then (the heartbeat runs out).
    pub requeue_after: Option<Duration>,
}

/// Membership of `cluster` at `now` (`now_text`: the same time for condition timestamps).
pub fn evaluate(
    cluster: &Cluster,
    settings: &PlacementSettings,
    now: UnixSeconds,
    now_text: &str,
) -> Membership {
    let info = cluster_info(cluster);
    let config = settings.eligibility();
    let facts = membership_status(&info, now, &config);
    let leaving = cluster.metadata.deletion_timestamp.is_some();
    let mut list = cluster
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    let (joined, reason, message) = if leaving {
        (false, "Leaving", "the cluster is leaving the fleet")
    } else if facts.heartbeat_age_seconds.is_some() {
        (true, "AgentCheckedIn", "")
    } else {
        (false, "WaitCheckIn", "waiting for the agent to check in")
    };
    conditions::set(&mut list, JOINED, joined, reason, message, now_text);
    let timeout = config.heartbeat_timeout_seconds;
    let (healthy, reason, message) = match facts.heartbeat_age_seconds {
        None => (
            false,
            "NoHeartbeat",
            "the agent has not reported yet".to_string(),
        ),
        Some(_) if facts.reachable => (
            true,
            "HeartbeatReceived",
            format!("the agent reports within the {timeout}s heartbeat timeout"),
        ),
        Some(_) => (
            false,
            "HeartbeatTimeout",
            format!(
                "no heartbeat for more than {timeout}s: the cluster is tainted {}:NoSelect",
                UNREACHABLE_TAINT_KEY
            ),
        ),
    };
    conditions::set(&mut list, HEALTHY, healthy, reason, &message, now_text);

    // Only a cluster that has joined can become unreachable.
    let mut taints: Vec<ClusterTaint> = if facts.heartbeat_age_seconds.is_some() {
        with_automatic_taints(&info, now, &config)
    } else {
        info.taints.clone()
    };
    for taint in taints.iter_mut().filter(|t| t.time_added.is_none()) {
        taint.time_added = time(now);
    }
    let taints = (taints != info.taints).then_some(taints);
    let requeue_after = info
        .health
        .and_then(|h| h.last_heartbeat)
        .map(|at| at.saturating_add(timeout).saturating_add(1) - now)
        .filter(|left| *left > 0)
        .map(|left| Duration::from_secs(left.unsigned_abs()));
    Membership {
        conditions: list,
        taints,
        requeue_after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_api::{AgentStatus, ClusterStatus, TAINT_NO_SCHEDULE};
    use fleet_target::model::time;

    fn cluster(last_seen: Option<i64>) -> Cluster {
        let mut c = Cluster::new("c", Default::default());
        c.metadata.namespace = Some("ns".into());
        c.status = Some(ClusterStatus {
            agent: Some(AgentStatus {
                last_seen: last_seen.and_then(time),
                namespace: String::new(),
            }),
            ..ClusterStatus::default()
        });
        c
    }

    fn condition<'a>(m: &'a Membership, type_: &str) -> (&'a str, &'a str) {
        let c = m.conditions.iter().find(|c| c.type_ == type_).unwrap();
        (c.status.as_str(), c.reason.as_str())
    }

    #[test]
    fn a_fresh_heartbeat_is_joined_and_healthy_until_the_timeout() {
        let settings = PlacementSettings::default();
        let m = evaluate(&cluster(Some(1000)), &settings, 1100, "t");
        assert_eq!(condition(&m, JOINED), ("True", "AgentCheckedIn"));
        assert_eq!(condition(&m, HEALTHY), ("True", "HeartbeatReceived"));
        assert_eq!(m.taints, None);
        assert_eq!(m.requeue_after, Some(Duration::from_secs(201)));
    }

    #[test]
    fn a_stale_heartbeat_taints_and_a_new_one_untaints() {
        let settings = PlacementSettings::default();
        let mut c = cluster(Some(1000));
        let m = evaluate(&c, &settings, 1400, "t");
        assert_eq!(condition(&m, HEALTHY), ("False", "HeartbeatTimeout"));
        let taints = m.taints.unwrap();
        assert_eq!(taints.len(), 1);
        assert_eq!(
            (taints[0].key.as_str(), taints[0].effect.as_str()),
            (super::super::UNREACHABLE_TAINT_KEY, "NoSelect")
        );
        assert_eq!(taints[0].time_added, time(1300));
        c.spec.taints = taints;
        assert_eq!(evaluate(&c, &settings, 1500, "t").taints, None);
        c.status.as_mut().unwrap().agent.as_mut().unwrap().last_seen = time(1490);
        assert_eq!(evaluate(&c, &settings, 1500, "t").taints, Some(Vec::new()));
    }

    #[test]
    fn a_cluster_without_agent_waits_and_user_taints_get_a_time() {
        let mut c = cluster(None);
        c.spec.taints = vec![ClusterTaint {
            key: "maintenance".into(),
            effect: TAINT_NO_SCHEDULE.into(),
            ..ClusterTaint::default()
        }];
        let m = evaluate(&c, &PlacementSettings::default(), 50, "t");
        assert_eq!(condition(&m, JOINED), ("False", "WaitCheckIn"));
        assert_eq!(condition(&m, HEALTHY), ("False", "NoHeartbeat"));
        let taints = m.taints.unwrap();
        assert_eq!(taints.len(), 1);
        assert_eq!(taints[0].time_added, time(50));
    }
}
