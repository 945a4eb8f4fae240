//! Placement decisions as they are persisted and reported. A placement is its BundleDeployment,
//! annotated with the hash of the policy it was made under ([`POLICY_HASH_ANNOTATION`]) and its score
//! ([`SCORE_ANNOTATION`]); a cluster selected but not deployed yet (waiting for its namespace, or held
//! by the rollout budget) is read from the Bundle's `status.placement.selected`. So a restarted
//! controller sees every earlier decision and keeps it. A decision becomes the Bundle's
//! `status.placement` through [`outcome`].

use std::collections::{BTreeMap, BTreeSet};

use fleet_api::{PlacementScore, PlacementStatus, SelectedCluster, UnselectedCluster};

use crate::error::TargetError;
use crate::model::ClusterKey;
use crate::placement::{
    ClusterScore, Decision, ExistingPlacement, PlacementPolicy, PlacementState, ScheduleResult,
    ScheduledCondition, scheduling_fingerprint,
};

use super::existing::ExistingDeployment;

/// Hash of the policy a BundleDeployment's placement was made under.
pub const POLICY_HASH_ANNOTATION: &str = "placement.fleet.cattle.io/policy-hash";
/// The score (JSON) a BundleDeployment's cluster was selected with.
pub const SCORE_ANNOTATION: &str = "placement.fleet.cattle.io/score";

/// A stable hash (FNV-1a, hex) of the part of `policy` whose change makes placements obsolete.
pub fn policy_hash(policy: &PlacementPolicy) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in scheduling_fingerprint(policy).bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The annotations a BundleDeployment placed by `decision` carries.
pub fn annotations(
    decision: &Decision,
    hash: &str,
) -> Result<BTreeMap<String, String>, TargetError> {
    let mut out = BTreeMap::from([(POLICY_HASH_ANNOTATION.to_string(), hash.to_string())]);
    if let Some(score) = decision.score {
        let score = serde_json::to_string(&score)
            .map_err(|e| TargetError::invalid(SCORE_ANNOTATION, e.to_string()))?;
        out.insert(SCORE_ANNOTATION.to_string(), score);
    }
    Ok(out)
}

/// The existing placements of a Bundle: its BundleDeployments (rolled out once the agent applied
/// one), then the clusters its last status selected that have none yet.
pub fn existing_placements<D: ExistingDeployment>(
    deployments: &BTreeMap<ClusterKey, std::sync::Arc<D>>,
    previous: Option<&PlacementStatus>,
    hash: &str,
) -> Vec<ExistingPlacement> {
    let mut out: Vec<ExistingPlacement> = deployments
        .iter()
        .map(|(cluster, bd)| {
            let applied = bd
                .status()
                .is_some_and(|s| !s.applied_deployment_id.is_empty());
            ExistingPlacement {
                cluster: cluster.clone(),
                state: if applied {
                    PlacementState::Bound
                } else {
                    PlacementState::Scheduled
                },
                obsolete: bd
                    .annotations()
                    .get(POLICY_HASH_ANNOTATION)
                    .map(String::as_str)
                    != Some(hash),
                score: bd
                    .annotations()
                    .get(SCORE_ANNOTATION)
                    .and_then(|s| serde_json::from_str::<ClusterScore>(s).ok()),
            }
        })
        .collect();
    if let Some(previous) = previous {
        let placed: BTreeSet<ClusterKey> = deployments.keys().cloned().collect();
        out.extend(previous.selected.iter().filter_map(|selected| {
            let (namespace, name) = selected.cluster.split_once('/')?;
            let cluster = ClusterKey::new(namespace, name);
            (!placed.contains(&cluster)).then(|| ExistingPlacement {
                cluster,
                state: PlacementState::Scheduled,
                obsolete: previous.policy_hash != hash,
                score: selected.score.as_ref().map(|s| ClusterScore {
                    topology_spread: s.topology_spread,
                    affinity: s.affinity,
                    existing_placement: 0,
                }),
            })
        }));
    }
    out.sort_by(|a, b| a.cluster.cmp(&b.cluster));
    out
}

/// One Bundle's scheduling outcome, as the Bundle reconciler hands it to the status writers.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub status: PlacementStatus,
    pub condition: ScheduledCondition,
}

/// The status of a scheduling decision made under the policy with hash `policy_hash`.
pub fn outcome(result: &ScheduleResult, policy_hash: &str) -> Outcome {
    let condition = result.condition.clone();
    let scheduled = match condition.wanted {
        Some(wanted) => format!("{}/{wanted}", condition.found),
        None => condition.found.to_string(),
    };
    let status = PlacementStatus {
        scheduled,
        policy_hash: policy_hash.to_string(),
        selected: result
            .selected
            .iter()
            .map(|d| SelectedCluster {
                cluster: d.cluster.to_string(),
                score: d.score.map(|s| PlacementScore {
                    affinity: s.affinity,
                    topology_spread: s.topology_spread,
                }),
            })
            .collect(),
        unselected: result
            .unselected
            .iter()
            .map(|u| UnselectedCluster {
                cluster: u.cluster.clone(),
                reason: u.to_string(),
            })
            .collect(),
        unselected_total: i64::try_from(result.unselected_total).unwrap_or(i64::MAX),
    };
    Outcome { status, condition }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::{Origin, PlacementType};
    use fleet_api::{BundleDeployment, BundleDeploymentSpec, BundleDeploymentStatus};
    use std::sync::Arc;

    fn policy(n: u32) -> PlacementPolicy {
        serde_json::from_value(serde_json::json!({"type": "PickN", "numberOfClusters": n})).unwrap()
    }

    #[test]
    fn hash_ignores_the_number_of_clusters_but_not_the_rules() {
        assert_eq!(policy_hash(&policy(2)), policy_hash(&policy(4)));
        let mut other = policy(2);
        other.placement_type = PlacementType::PickAll;
        assert_ne!(policy_hash(&policy(2)), policy_hash(&other));
        assert_eq!(policy_hash(&policy(2)).len(), 16);
    }

    #[test]
    fn deployments_and_status_read_back_as_existing_placements() {
        let hash = policy_hash(&policy(3));
        let decision = Decision {
            cluster: ClusterKey::new("ns", "a"),
            origin: Origin::New,
            score: Some(ClusterScore {
                topology_spread: 0,
                affinity: 20,
                existing_placement: 0,
            }),
        };
        let mut applied = BundleDeployment::new("b", BundleDeploymentSpec::default());
        applied.metadata.annotations = Some(annotations(&decision, &hash).unwrap());
        applied.status = Some(BundleDeploymentStatus {
            applied_deployment_id: "x".into(),
            ..BundleDeploymentStatus::default()
        });
        let old = BundleDeployment::new("b", BundleDeploymentSpec::default());
        let deployments = BTreeMap::from([
            (ClusterKey::new("ns", "a"), Arc::new(applied)),
            (ClusterKey::new("ns", "c"), Arc::new(old)),
        ]);
        let previous = PlacementStatus {
            policy_hash: hash.clone(),
            selected: vec![
                SelectedCluster {
                    cluster: "ns/a".into(),
                    score: None,
                },
                SelectedCluster {
                    cluster: "ns/b".into(),
                    score: Some(PlacementScore {
                        affinity: 5,
                        topology_spread: 0,
                    }),
                },
            ],
            ..PlacementStatus::default()
        };
        let existing = existing_placements(&deployments, Some(&previous), &hash);
        assert_eq!(
            existing
                .iter()
                .map(|e| (
                    e.cluster.name.as_str(),
                    e.state,
                    e.obsolete,
                    e.score.map(|s| s.affinity)
                ))
                .collect::<Vec<_>>(),
            [
                ("a", PlacementState::Bound, false, Some(20)),
                ("b", PlacementState::Scheduled, false, Some(5)),
                ("c", PlacementState::Scheduled, true, None),
            ]
        );
    }
}
