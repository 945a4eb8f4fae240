//! A Cluster as the targeting and placement core sees it ([`ClusterInfo`]): labels, annotations,
//! template values and `paused` for Fleet targeting; taints, custom scores, the agent's properties and
//! resource usage, and membership (joined once the agent has checked in, leaving once deleted, the
//! heartbeat from `status.agent.lastSeen`) for placement.

use fleet_api::Cluster;
use fleet_target::model::{ClusterHealth, ClusterInfo, HealthCondition, unix};
use kube::ResourceExt;

/// The targeting view of `cluster`.
pub fn cluster_info(cluster: &Cluster) -> ClusterInfo {
    let status = cluster.status.as_ref();
    let last_seen = status
        .and_then(|s| s.agent.as_ref())
        .and_then(|a| a.last_seen.as_ref())
        .map(unix);
    ClusterInfo {
        name: cluster.name_any(),
        namespace: cluster.namespace().unwrap_or_default(),
        labels: cluster.labels().clone(),
        annotations: cluster.annotations().clone(),
        template_values: cluster
            .spec
            .template_values
            .as_ref()
            .map(|values| values.0.clone())
            .unwrap_or_default(),
        paused: cluster.spec.paused,
        taints: cluster.spec.taints.clone(),
        properties: status
            .and_then(|s| s.properties.as_ref())
            .map(|p| {
                p.iter()
                    .map(|(k, v)| (k.clone(), v.value.clone()))
                    .collect()
            })
            .unwrap_or_default(),
        resource_usage: status
            .and_then(|s| s.resource_usage.clone())
            .unwrap_or_default(),
        scores: status.map(|s| s.scores.clone()).unwrap_or_default(),
        health: Some(ClusterHealth {
            joined: last_seen.is_some(),
            leaving: cluster.metadata.deletion_timestamp.is_some(),
            last_heartbeat: last_seen,
            // The hub's view of health is the heartbeat: healthy since the agent last reported (a stale
            // heartbeat is caught by the heartbeat timeout).
            healthy: last_seen.map(|at| HealthCondition {
                status: true,
                last_transition: at,
            }),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_api::{AgentStatus, ClusterStatus, ClusterTaint, TAINT_NO_SELECT};
    use fleet_target::model::{TaintEffect, time};
    use fleet_target::plan::state::same_but_health;

    #[test]
    fn membership_and_taints_come_from_the_cluster() {
        let mut cluster = Cluster::new("c", Default::default());
        cluster.metadata.namespace = Some("ns".into());
        cluster.spec.taints = vec![ClusterTaint {
            key: "maintenance".into(),
            value: String::new(),
            effect: TAINT_NO_SELECT.into(),
            time_added: time(100),
        }];
        let info = cluster_info(&cluster);
        assert_eq!(TaintEffect::of(&info.taints[0]), Ok(TaintEffect::NoSelect));
        assert_eq!(info.taints[0], cluster.spec.taints[0]);
        let health = info.health.clone().unwrap();
        assert!(!health.joined && health.last_heartbeat.is_none());

        cluster.status = Some(ClusterStatus {
            agent: Some(AgentStatus {
                last_seen: time(500),
                namespace: String::new(),
            }),
            ..ClusterStatus::default()
        });
        let joined = cluster_info(&cluster);
        let health = joined.health.clone().unwrap();
        assert!(health.joined && !health.leaving);
        assert_eq!(health.last_heartbeat, Some(500));
        assert!(same_but_health(&info, &joined));
        cluster.metadata.labels = Some([("env".to_string(), "prod".to_string())].into());
        assert!(!same_but_health(&info, &cluster_info(&cluster)));
    }
}
