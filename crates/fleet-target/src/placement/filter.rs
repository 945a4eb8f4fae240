//! Filter stages before scoring: cluster eligibility (joined, not leaving, heartbeat within the
//! timeout, healthy or only recently unhealthy) and required cluster affinity (label selectors
//! and property selectors compared as quantities). Also the property lookup shared with scoring.

use crate::model::{ClusterInfo, UnixSeconds, unix};
use crate::quantity::parse_quantity;
use crate::selector::SelectorExt;

use super::policy::{ClusterSelectorTerm, PropertyOperator, PropertyRequirement};
use super::unfit::Unfit;

/// Properties named `resources.kubernetes-fleet.io/<kind>-<resource>` read resource usage.
pub const RESOURCE_PROPERTY_PREFIX: &str = "resources.kubernetes-fleet.io/";

/// Time limits of the eligibility check (KubeFleet's defaults: 5 minutes each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EligibilityConfig {
    /// A heartbeat older than this makes the cluster ineligible.
    pub heartbeat_timeout_seconds: i64,
    /// An unhealthy cluster stays eligible for this long after turning unhealthy.
    pub unhealthy_grace_seconds: i64,
}

impl Default for EligibilityConfig {
    fn default() -> Self {
        EligibilityConfig {
            heartbeat_timeout_seconds: 300,
            unhealthy_grace_seconds: 300,
        }
    }
}

/// Why a cluster may not receive new placements, or `Ok` when it may. A cluster without health
/// data (offline use) is eligible.
pub fn check_eligibility(
    cluster: &ClusterInfo,
    now: UnixSeconds,
    config: &EligibilityConfig,
) -> Result<(), Unfit> {
    let Some(health) = &cluster.health else {
        return Ok(());
    };
    if health.leaving {
        return Err(Unfit::Left);
    }
    if !health.joined {
        return Err(Unfit::NotJoined);
    }
    match health.last_heartbeat {
        None => return Err(Unfit::NoHeartbeat),
        Some(at) if now.saturating_sub(at) > config.heartbeat_timeout_seconds => {
            return Err(Unfit::HeartbeatTimedOut {
                age: now.saturating_sub(at),
                timeout: config.heartbeat_timeout_seconds,
            });
        }
        _ => {}
    }
    match health.healthy {
        None => Err(Unfit::NoHealth),
        Some(h)
            if !h.status
                && now.saturating_sub(h.last_transition) > config.unhealthy_grace_seconds =>
        {
            Err(Unfit::Unhealthy(now.saturating_sub(h.last_transition)))
        }
        _ => Ok(()),
    }
}

/// Reads a named property as a number: resource usage, then `properties`, then unexpired custom
/// scores. `None` when the cluster does not have it or its value is not a quantity.
pub fn property_value(cluster: &ClusterInfo, name: &str, now: UnixSeconds) -> Option<f64> {
    if let Some(rest) = name.strip_prefix(RESOURCE_PROPERTY_PREFIX) {
        let usage = &cluster.resource_usage;
        let (map, resource) = if let Some(r) = rest.strip_prefix("total-") {
            (&usage.capacity, r)
        } else if let Some(r) = rest.strip_prefix("allocatable-") {
            (&usage.allocatable, r)
        } else if let Some(r) = rest.strip_prefix("available-") {
            (&usage.available, r)
        } else {
            return None;
        };
        return map.get(resource).and_then(|v| parse_quantity(v));
    }
    if let Some(v) = cluster.properties.get(name) {
        return parse_quantity(v);
    }
    cluster
        .scores
        .iter()
        .find(|s| {
            s.name == name
                && s.valid_until
                    .as_ref()
                    .is_none_or(|until| now <= unix(until))
        })
        .map(|s| s.value as f64)
}

/// Whether one property requirement holds (a missing property does not match).
pub fn requirement_matches(
    cluster: &ClusterInfo,
    req: &PropertyRequirement,
    now: UnixSeconds,
) -> bool {
    let (Some(actual), Some(wanted)) = (
        property_value(cluster, &req.name, now),
        req.values.first().and_then(|v| parse_quantity(v)),
    ) else {
        return false;
    };
    match req.operator {
        PropertyOperator::Gt => actual > wanted,
        PropertyOperator::Ge => actual >= wanted,
        PropertyOperator::Eq => actual == wanted,
        PropertyOperator::Ne => actual != wanted,
        PropertyOperator::Lt => actual < wanted,
        PropertyOperator::Le => actual <= wanted,
    }
}

/// Whether a term's label selector and property requirements all hold.
pub fn term_matches(cluster: &ClusterInfo, term: &ClusterSelectorTerm, now: UnixSeconds) -> bool {
    term.label_selector
        .as_ref()
        .is_none_or(|s| s.matches(&cluster.labels))
        && term
            .property_selector
            .iter()
            .flat_map(|p| p.match_expressions.iter())
            .all(|r| requirement_matches(cluster, r, now))
}

/// The required-affinity filter: passes without terms, or when any term matches.
pub fn check_required_affinity(
    cluster: &ClusterInfo,
    terms: Option<&[ClusterSelectorTerm]>,
    now: UnixSeconds,
) -> Result<(), Unfit> {
    match terms {
        Some(terms) if !terms.iter().any(|t| term_matches(cluster, t, now)) => {
            Err(Unfit::NoRequiredAffinity)
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ClusterHealth, HealthCondition, time};
    use crate::placement::policy::PropertySelector;
    use fleet_api::ClusterScore;

    const MIN: i64 = 60;

    fn cluster_with(health: ClusterHealth) -> ClusterInfo {
        let mut c = ClusterInfo::new("ns", "c", []);
        c.health = Some(health);
        c
    }

    fn healthy(now: i64) -> ClusterHealth {
        ClusterHealth {
            joined: true,
            leaving: false,
            last_heartbeat: Some(now - 10),
            healthy: Some(HealthCondition {
                status: true,
                last_transition: now - 1000,
            }),
        }
    }

    /// S19 (timeouts of 15 minutes, as in KubeFleet's checker test).
    #[test]
    fn s19_eligibility() {
        let now = 100_000;
        let config = EligibilityConfig {
            heartbeat_timeout_seconds: 15 * MIN,
            unhealthy_grace_seconds: 15 * MIN,
        };
        let check = |h: ClusterHealth| {
            check_eligibility(&cluster_with(h), now, &config).map_err(|e| e.to_string())
        };
        assert_eq!(check(healthy(now)), Ok(()));
        assert_eq!(
            check(ClusterHealth {
                last_heartbeat: Some(now - 20 * MIN),
                ..healthy(now)
            }),
            Err("cluster's last heartbeat was 1200s ago (timeout 900s)".into())
        );
        assert_eq!(
            check(ClusterHealth {
                joined: false,
                ..healthy(now)
            }),
            Err("cluster has not joined the fleet yet".into())
        );
        assert_eq!(
            check(ClusterHealth {
                healthy: Some(HealthCondition {
                    status: false,
                    last_transition: now - MIN
                }),
                ..healthy(now)
            }),
            Ok(())
        );
        assert_eq!(
            check(ClusterHealth {
                healthy: Some(HealthCondition {
                    status: false,
                    last_transition: now - 20 * MIN
                }),
                ..healthy(now)
            }),
            Err("cluster has been unhealthy for 1200s".into())
        );
        assert_eq!(
            check(ClusterHealth {
                healthy: None,
                ..healthy(now)
            }),
            Err("cluster has not reported its health yet".into())
        );
        assert_eq!(
            check(ClusterHealth {
                leaving: true,
                ..healthy(now)
            }),
            Err("cluster has left the fleet".into())
        );
        assert_eq!(
            check_eligibility(&ClusterInfo::new("ns", "offline", []), now, &config),
            Ok(())
        );
    }

    /// S11: property requirements on node-count = 4 and allocatable cpu.
    #[test]
    fn s11_property_requirements() {
        let mut c = ClusterInfo::new("ns", "c1", []);
        c.properties
            .insert("kubernetes-fleet.io/node-count".into(), "4".into());
        c.resource_usage
            .allocatable
            .insert("cpu".into(), "3".into());
        let req = |name: &str, op: PropertyOperator, v: &str| PropertyRequirement {
            name: name.into(),
            operator: op,
            values: vec![v.into()],
        };
        let nc = "kubernetes-fleet.io/node-count";
        assert!(requirement_matches(
            &c,
            &req(nc, PropertyOperator::Ge, "4"),
            0
        ));
        assert!(!requirement_matches(
            &c,
            &req(nc, PropertyOperator::Gt, "4"),
            0
        ));
        assert!(requirement_matches(
            &c,
            &req(nc, PropertyOperator::Eq, "4"),
            0
        ));
        assert!(!requirement_matches(
            &c,
            &req("missing", PropertyOperator::Ge, "1"),
            0
        ));
        assert!(requirement_matches(
            &c,
            &req(
                "resources.kubernetes-fleet.io/allocatable-cpu",
                PropertyOperator::Ge,
                "3"
            ),
            0
        ));
        assert!(!requirement_matches(
            &c,
            &req(
                "resources.kubernetes-fleet.io/total-cpu",
                PropertyOperator::Ge,
                "3"
            ),
            0
        ));
        // "Two values is an error": rejected by policy validation (see policy tests); here the
        // affinity filter reports no match rather than guessing.
        let term = ClusterSelectorTerm {
            label_selector: None,
            property_selector: Some(PropertySelector {
                match_expressions: vec![req(nc, PropertyOperator::Le, "4")],
            }),
            property_sorter: None,
        };
        assert_eq!(
            check_required_affinity(&c, Some(std::slice::from_ref(&term)), 0),
            Ok(())
        );
        let miss = ClusterSelectorTerm {
            property_selector: Some(PropertySelector {
                match_expressions: vec![req(nc, PropertyOperator::Lt, "4")],
            }),
            ..term.clone()
        };
        assert_eq!(
            check_required_affinity(&c, Some(std::slice::from_ref(&miss)), 0)
                .map_err(|e| e.to_string()),
            Err("cluster does not match with any of the required cluster affinity terms".into())
        );
        // Terms are ORed.
        assert_eq!(check_required_affinity(&c, Some(&[miss, term]), 0), Ok(()));
    }

    #[test]
    fn custom_scores_expire() {
        let mut c = ClusterInfo::new("ns", "c1", []);
        c.scores.push(ClusterScore {
            name: "demo".into(),
            value: 30,
            valid_until: time(100),
        });
        assert_eq!(property_value(&c, "demo", 100), Some(30.0));
        assert_eq!(property_value(&c, "demo", 101), None);
    }
}
