//! Fleet's rollout by partitions (`UpdatePartitions`): a pure function from the targets of a
//! bundle (each with its new deploymentID and its current BundleDeployment, if any) to what to
//! write: which BundleDeployments to create, which to stage (`stagedDeploymentID`), which to
//! promote (`deploymentID = stagedDeploymentID`), and the bundle's rollout status.
//!
//! Rules (defaults: `maxUnavailable` 100%, `maxUnavailablePartitions` 0, `autoPartitionSize`
//! 25%, `autoPartitionThreshold` 200, `maxNew` 50):
//! - **Partitions**: manual `partitions[]` when given — each takes the targets its criteria match
//!   (a target may be in several; a target in none never gets a BundleDeployment). Otherwise one
//!   partition `All` below the threshold (or with an integer `autoPartitionSize ≤ 0`), else chunks
//!   of `limit(n, autoPartitionSize)` named `Partition <from> - <to>`.
//! - Partitions are processed in order: new BundleDeployments are created while fewer than
//!   `maxNew` were created; every BundleDeployment is staged with the target's ID; one is promoted
//!   unless paused, when staged ≠ deployed and both the bundle's and the partition's unavailable
//!   counts are under their limits (or it is already unavailable — so new ones always are).
//! - A partition is unavailable when more of its targets than its `maxUnavailable` are not up to
//!   date (staged = deployed = applied = target ID) or not ready; processing stops once more
//!   partitions than `maxUnavailablePartitions` are unavailable. Later partitions are untouched.
//!
//! Deviation (DECISIONS 1): Fleet matches manual partitions only through a cluster's groups, so a
//! cluster in no ClusterGroup can never be in a partition; we match partitions exactly like
//! targets (a cluster without groups is tried with no group), as Fleet's documentation describes.
//!
//! When staged = deployed, the caller still copies the options Fleet leaves out of the
//! deploymentID hash (`diff`, `namespaceLabels`, `namespaceAnnotations`) from staged to current.

use std::borrow::Cow;

pub use fleet_api::{Partition as PartitionSpec, RolloutStrategy};
use serde::{Deserialize, Serialize};

use crate::error::TargetError;
use crate::index::ClusterIndex;
use crate::intstr::{IntOrPercent, IntOrPercentExt};
use crate::matcher::Criteria;
use crate::model::ClusterKey;

const DEFAULT_MAX_NEW: i64 = 50;
const DEFAULT_AUTO_PARTITION_THRESHOLD: i64 = 200;

/// The deployment-ID fields of an existing BundleDeployment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentState {
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub deployment_id: String,
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub staged_deployment_id: String,
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub applied_deployment_id: String,
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub ready: bool,
    /// The last apply failed (the `Deployed` condition is False).
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub failed: bool,
}

impl DeploymentState {
    /// Fleet's `isUnavailable`: not applied at the current ID, or not ready.
    pub fn is_unavailable(&self) -> bool {
        self.applied_deployment_id != self.deployment_id || !self.ready
    }
}

/// One target of the bundle for the rollout, borrowed from the plan's inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RolloutTarget<'a> {
    pub cluster: &'a ClusterKey,
    /// The deploymentID targeting computed (manifest ID + options hash).
    pub deployment_id: &'a str,
    /// The cluster's BundleDeployment of this bundle, if it exists.
    pub current: Option<&'a DeploymentState>,
    /// Held back by an outer budget (the placement rolling update): not created, and staged
    /// without promotion.
    pub hold: bool,
    /// The cluster is paused (its Cluster's `paused`): staged without promotion.
    pub paused: bool,
}

/// What to do with one target's BundleDeployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// No BundleDeployment exists and none is created in this pass.
    Deferred,
    /// The existing BundleDeployment is left exactly as it is.
    Untouched,
    /// Write these IDs (creating the BundleDeployment when `created`).
    Write {
        created: bool,
        staged_deployment_id: String,
        deployment_id: String,
        /// `deploymentID` moved to the staged ID in this pass.
        promoted: bool,
    },
}

/// A partition's status (Fleet's `PartitionStatus` counters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionStatus {
    pub name: String,
    pub count: usize,
    pub max_unavailable: i64,
    pub unavailable: i64,
    /// The partition's targets, as indices into the rollout's targets in target order (for the
    /// partition's `summary`, which Fleet counts over the partition's targets as `status.summary`
    /// counts over all of them).
    pub members: Vec<usize>,
}

/// The bundle's rollout status counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RolloutStatus {
    pub max_unavailable: i64,
    pub unavailable: i64,
    pub max_unavailable_partitions: i64,
    pub unavailable_partitions: i64,
    pub newly_created: i64,
    pub partitions: Vec<PartitionStatus>,
}

/// The result of [`plan_rollout`]: one outcome per target, in input order, and the status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RolloutPlan {
    pub outcomes: Vec<Outcome>,
    pub status: RolloutStatus,
}

/// A target's state as this plan changes it (copied only when it changes).
struct Working<'a> {
    state: Option<Cow<'a, DeploymentState>>,
    created: bool,
    staged: bool,
    promoted: bool,
}

/// Plans the rollout of one bundle. `paused` is the bundle's `paused`, a cluster's own is its target's;
/// manual partitions match the clusters of `index`.
pub fn plan_rollout(
    targets: &[RolloutTarget<'_>],
    strategy: &RolloutStrategy,
    paused: bool,
    index: &ClusterIndex,
) -> Result<RolloutPlan, TargetError> {
    let max_new = strategy.max_new.unwrap_or(DEFAULT_MAX_NEW);
    let mut partitions = partition(targets, strategy, index)?;
    let mut status = RolloutStatus {
        max_unavailable: limit(
            targets.len(),
            &[&strategy.max_unavailable],
            "rolloutStrategy.maxUnavailable",
        )?,
        unavailable: targets
            .iter()
            .filter(|t| t.current.is_some_and(DeploymentState::is_unavailable))
            .count() as i64,
        max_unavailable_partitions: limit(
            partitions.len(),
            &[
                &strategy.max_unavailable_partitions,
                &Some(IntOrPercent::Int(0)),
            ],
            "rolloutStrategy.maxUnavailablePartitions",
        )?,
        ..RolloutStatus::default()
    };
    let mut work: Vec<Working> = targets
        .iter()
        .map(|t| Working {
            state: t.current.map(Cow::Borrowed),
            created: false,
            staged: false,
            promoted: false,
        })
        .collect();

    for partition in &mut partitions {
        for &i in &partition.members {
            let w = &mut work[i];
            if w.state.is_none() && !targets[i].hold && status.newly_created < max_new {
                status.newly_created += 1;
                w.state = Some(Cow::Owned(DeploymentState::default()));
                w.created = true;
            }
            if let Some(state) = &mut w.state {
                if state.staged_deployment_id != targets[i].deployment_id {
                    state.to_mut().staged_deployment_id = targets[i].deployment_id.to_string();
                }
                w.staged = true;
            }
        }
        for &i in &partition.members {
            let target_paused = paused || targets[i].hold || targets[i].paused;
            promote(
                &mut work[i],
                target_paused,
                &mut status,
                (&mut partition.unavailable, partition.max_unavailable),
            );
        }
        let unavailable = partition
            .members
            .iter()
            .filter(|&&i| {
                let state = work[i].state.as_deref();
                !up_to_date(state, targets[i].deployment_id)
                    || state.is_some_and(DeploymentState::is_unavailable)
            })
            .count() as i64;
        partition.unavailable = unavailable;
        if unavailable > partition.max_unavailable {
            status.unavailable_partitions += 1;
        }
        if status.unavailable_partitions > status.max_unavailable_partitions {
            break;
        }
    }

    status.partitions = partitions;
    let outcomes = work
        .into_iter()
        .map(|w| match (w.state, w.staged) {
            (None, _) => Outcome::Deferred,
            (Some(_), false) => Outcome::Untouched,
            (Some(state), true) => {
                let (staged_deployment_id, deployment_id) = match state {
                    Cow::Owned(state) => (state.staged_deployment_id, state.deployment_id),
                    Cow::Borrowed(state) => (
                        state.staged_deployment_id.clone(),
                        state.deployment_id.clone(),
                    ),
                };
                Outcome::Write {
                    created: w.created,
                    staged_deployment_id,
                    deployment_id,
                    promoted: w.promoted,
                }
            }
        })
        .collect();
    Ok(RolloutPlan { outcomes, status })
}

/// Promotes `w` (deployed ID = staged ID) when neither the bundle's nor its partition's (unavailable
/// count, maxUnavailable) is used up, or when it is unavailable anyway.
fn promote(
    w: &mut Working,
    paused: bool,
    bundle: &mut RolloutStatus,
    (partition_unavailable, partition_max_unavailable): (&mut i64, i64),
) {
    let Some(state) = &mut w.state else {
        return;
    };
    let unavailable = state.is_unavailable();
    if paused
        || state.staged_deployment_id.is_empty()
        || state.deployment_id == state.staged_deployment_id
        || !(bundle.unavailable < bundle.max_unavailable || unavailable)
        || !(*partition_unavailable < partition_max_unavailable || unavailable)
    {
        return;
    }
    if !unavailable {
        bundle.unavailable += 1;
        *partition_unavailable += 1;
    }
    let staged = state.staged_deployment_id.clone();
    state.to_mut().deployment_id = staged;
    w.promoted = true;
}

fn up_to_date(state: Option<&DeploymentState>, target_id: &str) -> bool {
    state.is_some_and(|s| {
        s.staged_deployment_id == target_id
            && s.deployment_id == target_id
            && s.applied_deployment_id == target_id
    })
}

/// Fleet's `limit` over the first set value (default 100%).
fn limit(count: usize, values: &[&Option<IntOrPercent>], field: &str) -> Result<i64, TargetError> {
    let value = values
        .iter()
        .find_map(|v| v.as_ref())
        .cloned()
        .unwrap_or(IntOrPercent::percent(100));
    value.fleet_limit(count, field)
}

fn new_partition(
    name: String,
    members: Vec<usize>,
    targets: &[RolloutTarget<'_>],
    max_unavailable: &[&Option<IntOrPercent>],
    field: &str,
) -> Result<PartitionStatus, TargetError> {
    Ok(PartitionStatus {
        name,
        count: members.len(),
        max_unavailable: limit(members.len(), max_unavailable, field)?,
        unavailable: members
            .iter()
            .filter(|&&i| {
                targets[i]
                    .current
                    .is_some_and(DeploymentState::is_unavailable)
            })
            .count() as i64,
        members,
    })
}

fn partition(
    targets: &[RolloutTarget<'_>],
    strategy: &RolloutStrategy,
    index: &ClusterIndex,
) -> Result<Vec<PartitionStatus>, TargetError> {
    if !strategy.partitions.is_empty() {
        return strategy
            .partitions
            .iter()
            .enumerate()
            .map(|(p, spec)| {
                let field = format!("rolloutStrategy.partitions[{p}]");
                spec.matcher().validate(&field)?;
                let members = targets
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| {
                        index
                            .get(t.cluster)
                            .is_some_and(|c| spec.matcher().matches(c))
                    })
                    .map(|(i, _)| i)
                    .collect();
                new_partition(
                    spec.name.clone(),
                    members,
                    targets,
                    &[&spec.max_unavailable, &strategy.max_unavailable],
                    &format!("{field}.maxUnavailable"),
                )
            })
            .collect();
    }
    let all = || -> Result<Vec<PartitionStatus>, TargetError> {
        Ok(vec![new_partition(
            "All".into(),
            (0..targets.len()).collect(),
            targets,
            &[&strategy.max_unavailable],
            "rolloutStrategy.maxUnavailable",
        )?])
    };
    let threshold = strategy
        .auto_partition_threshold
        .unwrap_or(DEFAULT_AUTO_PARTITION_THRESHOLD);
    let disabled = matches!(strategy.auto_partition_size, Some(IntOrPercent::Int(n)) if n <= 0);
    if disabled || threshold <= 0 || (targets.len() as i64) < threshold {
        return all();
    }
    let size = limit(
        targets.len(),
        &[
            &strategy.auto_partition_size,
            &Some(IntOrPercent::percent(25)),
        ],
        "rolloutStrategy.autoPartitionSize",
    )?
    .max(1) as usize;
    let mut partitions = Vec::new();
    let mut offset = 0;
    while offset < targets.len() {
        let end = (offset + size).min(targets.len());
        partitions.push(new_partition(
            format!("Partition {offset} - {end}"),
            (offset..end).collect(),
            targets,
            &[&strategy.max_unavailable],
            "rolloutStrategy.maxUnavailable",
        )?);
        offset = end;
    }
    Ok(partitions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ClusterGroupInfo, ClusterInfo};
    use crate::selector::{LabelSelector, SelectorExt};

    const NS: &str = "fleet-default";

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("c{i:03}")).collect()
    }

    fn index_of(n: usize) -> ClusterIndex {
        ClusterIndex::new(
            names(n).iter().enumerate().map(|(i, name)| {
                let env = if i % 2 == 0 { "even" } else { "odd" };
                ClusterInfo::new(NS, name, [("parity", env)])
            }),
            Vec::<ClusterGroupInfo>::new(),
        )
    }

    fn ready(id: &str) -> Option<DeploymentState> {
        Some(DeploymentState {
            deployment_id: id.into(),
            staged_deployment_id: id.into(),
            applied_deployment_id: id.into(),
            ready: true,
            failed: false,
        })
    }

    /// What [`RolloutTarget`]s borrow: clusters c000.. sharing one deploymentID, each with its state.
    struct Targets {
        clusters: Vec<ClusterKey>,
        deployment_id: String,
        current: Vec<Option<DeploymentState>>,
    }

    impl Targets {
        fn rollout(&self) -> Vec<RolloutTarget<'_>> {
            self.clusters
                .iter()
                .zip(&self.current)
                .map(|(cluster, current)| RolloutTarget {
                    cluster,
                    deployment_id: &self.deployment_id,
                    current: current.as_ref(),
                    hold: false,
                    paused: false,
                })
                .collect()
        }
    }

    fn targets(n: usize, id: &str, current: impl Fn(usize) -> Option<DeploymentState>) -> Targets {
        Targets {
            clusters: names(n)
                .iter()
                .map(|name| ClusterKey::new(NS, name))
                .collect(),
            deployment_id: id.into(),
            current: (0..n).map(current).collect(),
        }
    }

    fn count(plan: &RolloutPlan, pred: impl Fn(&Outcome) -> bool) -> usize {
        plan.outcomes.iter().filter(|o| pred(o)).count()
    }

    fn promoted(o: &Outcome) -> bool {
        matches!(o, Outcome::Write { promoted: true, .. })
    }

    /// Each partition of the plan as (clusters in it, its maxUnavailable).
    fn partition_sizes(plan: &RolloutPlan) -> Vec<(usize, i64)> {
        plan.status
            .partitions
            .iter()
            .map(|p| (p.count, p.max_unavailable))
            .collect()
    }

    /// A partition of the clusters labelled `key=value`, with no maxUnavailable of its own.
    fn labelled(name: &str, key: &str, value: &str) -> PartitionSpec {
        PartitionSpec {
            name: name.into(),
            max_unavailable: None,
            cluster_selector: Some(LabelSelector::from_labels([(key, value)])),
            ..Default::default()
        }
    }

    fn pct(p: u32) -> Option<IntOrPercent> {
        Some(IntOrPercent::percent(p))
    }

    /// Partition names (sizes and limits are in `fleet_auto_partition_cases`).
    #[test]
    fn auto_partition_names() {
        let names = |n: usize, s: RolloutStrategy| -> Vec<String> {
            plan_rollout(
                &targets(n, "id", |_| ready("id")).rollout(),
                &s,
                false,
                &index_of(n),
            )
            .unwrap()
            .status
            .partitions
            .into_iter()
            .map(|p| p.name)
            .collect()
        };
        assert_eq!(names(10, RolloutStrategy::default()), ["All"]);
        assert_eq!(
            names(230, RolloutStrategy::default()),
            [
                "Partition 0 - 57",
                "Partition 57 - 114",
                "Partition 114 - 171",
                "Partition 171 - 228",
                "Partition 228 - 230"
            ]
        );
        let disabled = RolloutStrategy {
            auto_partition_size: Some(IntOrPercent::Int(0)),
            ..Default::default()
        };
        assert_eq!(names(200, disabled), ["All"]);
    }

    /// Each partition lists its targets (the controller counts its `summary` over them): automatic
    /// partitions take consecutive targets.
    #[test]
    fn partitions_list_their_targets() {
        let strategy = RolloutStrategy {
            auto_partition_threshold: Some(4),
            auto_partition_size: Some(IntOrPercent::Int(3)),
            ..Default::default()
        };
        let plan = plan_rollout(
            &targets(5, "id", |_| ready("id")).rollout(),
            &strategy,
            false,
            &index_of(5),
        )
        .unwrap();
        let members: Vec<&[usize]> = plan
            .status
            .partitions
            .iter()
            .map(|p| p.members.as_slice())
            .collect();
        assert_eq!(members, [&[0, 1, 2][..], &[3, 4]]);
    }

    /// Fleet's `Test_autoPartition`: sizes and each partition's maxUnavailable.
    #[test]
    fn fleet_auto_partition_cases() {
        let int = |i: i32| Some(IntOrPercent::Int(i));
        // autoPartitionSize, maxUnavailable, autoPartitionThreshold; the rest Fleet's defaults.
        let auto = |size, max_unavailable, threshold| RolloutStrategy {
            auto_partition_size: size,
            max_unavailable,
            auto_partition_threshold: threshold,
            ..Default::default()
        };
        type Case = (&'static str, usize, RolloutStrategy, Vec<(usize, i64)>);
        let cases: Vec<Case> = vec![
            (
                "fixed autoPartitionSize 100",
                200,
                auto(int(100), None, None),
                vec![(100, 100), (100, 100)],
            ),
            (
                "below 200: one partition",
                199,
                auto(pct(25), int(1), None),
                vec![(199, 1)],
            ),
            (
                "200: four partitions of 25%",
                200,
                RolloutStrategy::default(),
                vec![(50, 50); 4],
            ),
            (
                "rest in its own partition",
                1000,
                auto(pct(49), None, None),
                vec![(490, 490), (490, 490), (20, 20)],
            ),
            (
                "maxUnavailable per partition",
                1000,
                auto(pct(10), pct(10), None),
                vec![(100, 10); 10],
            ),
            (
                "threshold 50 with 50",
                50,
                auto(pct(50), None, Some(50)),
                vec![(25, 25), (25, 25)],
            ),
            (
                "threshold 50 with 49",
                49,
                auto(pct(50), None, Some(50)),
                vec![(49, 49)],
            ),
            (
                "threshold 0 disables",
                500,
                auto(pct(25), None, Some(0)),
                vec![(500, 500)],
            ),
        ];
        for (name, n, strategy, want) in cases {
            let plan = plan_rollout(
                &targets(n, "id", |_| ready("id")).rollout(),
                &strategy,
                false,
                &index_of(n),
            )
            .unwrap();
            assert_eq!(partition_sizes(&plan), want, "{name}");
        }
    }

    /// Fleet's `Test_manualPartition`: overlapping selectors put a target in several partitions.
    #[test]
    fn overlapping_manual_partitions() {
        let index = ClusterIndex::new(
            (0..100).map(|i| {
                let name = format!("c{i:03}");
                let mut c = ClusterInfo::new(NS, &name, []);
                if i < 60 {
                    c.labels.insert("env".into(), "testing".into());
                }
                if i >= 40 {
                    c.labels.insert("group".into(), "a".into());
                }
                c
            }),
            Vec::<ClusterGroupInfo>::new(),
        );
        let by_label = |k: &str, v: &str| labelled(&format!("{k}={v}"), k, v);
        let s = RolloutStrategy {
            partitions: vec![by_label("env", "testing"), by_label("group", "a")],
            ..Default::default()
        };
        let plan = plan_rollout(
            &targets(100, "id", |_| ready("id")).rollout(),
            &s,
            false,
            &index,
        )
        .unwrap();
        assert_eq!(partition_sizes(&plan), [(60, 60), (60, 60)]);
    }

    #[test]
    fn new_deployments_are_created_up_to_max_new_and_promoted() {
        let t = targets(60, "id-1", |_| None);
        let plan = plan_rollout(
            &t.rollout(),
            &RolloutStrategy::default(),
            false,
            &index_of(60),
        )
        .unwrap();
        assert_eq!(plan.status.newly_created, 50);
        assert_eq!(
            count(&plan, |o| matches!(
                o,
                Outcome::Write {
                    created: true,
                    promoted: true,
                    ..
                }
            )),
            50
        );
        assert_eq!(count(&plan, |o| *o == Outcome::Deferred), 10);
        assert_eq!(
            plan.outcomes[0],
            Outcome::Write {
                created: true,
                staged_deployment_id: "id-1".into(),
                deployment_id: "id-1".into(),
                promoted: true
            }
        );
        let none = RolloutStrategy {
            max_new: Some(0),
            ..Default::default()
        };
        let plan = plan_rollout(&t.rollout(), &none, false, &index_of(60)).unwrap();
        assert_eq!(count(&plan, |o| *o == Outcome::Deferred), 60);
    }

    #[test]
    fn max_unavailable_limits_in_place_updates() {
        let t = targets(10, "id-2", |_| ready("id-1"));
        let cases = [
            (None, 10),
            (Some(IntOrPercent::Int(2)), 2),
            (pct(30), 3),
            (Some(IntOrPercent::Int(0)), 0),
        ];
        for (max_unavailable, want) in cases {
            let s = RolloutStrategy {
                max_unavailable: max_unavailable.clone(),
                ..Default::default()
            };
            let plan = plan_rollout(&t.rollout(), &s, false, &index_of(10)).unwrap();
            assert_eq!(count(&plan, promoted), want, "{max_unavailable:?}");
            // Everything is staged with the new ID either way.
            assert_eq!(
                count(
                    &plan,
                    |o| matches!(o, Outcome::Write { staged_deployment_id, .. } if staged_deployment_id == "id-2")
                ),
                10
            );
            assert_eq!(plan.status.unavailable, want as i64);
        }
    }

    #[test]
    fn already_unavailable_deployments_are_promoted_beyond_the_budget() {
        let t = targets(4, "id-2", |i| {
            let mut s = ready("id-1");
            if i < 2 {
                s.as_mut().unwrap().ready = false;
            }
            s
        });
        let s = RolloutStrategy {
            max_unavailable: Some(IntOrPercent::Int(1)),
            ..Default::default()
        };
        let plan = plan_rollout(&t.rollout(), &s, false, &index_of(4)).unwrap();
        // Two unavailable ones are promoted; the budget (1) is already used up by them.
        let promoted_names: Vec<&str> = plan
            .outcomes
            .iter()
            .zip(&t.clusters)
            .filter(|(outcome, _)| promoted(outcome))
            .map(|(_, cluster)| cluster.name.as_str())
            .collect();
        assert_eq!(promoted_names, ["c000", "c001"]);
    }

    #[test]
    fn paused_bundle_or_cluster_stages_without_promoting() {
        let t = targets(3, "id-2", |_| ready("id-1"));
        let plan = plan_rollout(
            &t.rollout(),
            &RolloutStrategy::default(),
            true,
            &index_of(3),
        )
        .unwrap();
        assert_eq!(count(&plan, promoted), 0);
        assert_eq!(
            plan.outcomes[0],
            Outcome::Write {
                created: false,
                staged_deployment_id: "id-2".into(),
                deployment_id: "id-1".into(),
                promoted: false
            }
        );
        let mut one_paused = t.rollout();
        one_paused[1].paused = true;
        let plan = plan_rollout(
            &one_paused,
            &RolloutStrategy::default(),
            false,
            &index_of(3),
        )
        .unwrap();
        let flags: Vec<bool> = plan.outcomes.iter().map(promoted).collect();
        assert_eq!(flags, [true, false, true]);
    }

    #[test]
    fn manual_partitions_stop_at_an_unavailable_partition() {
        let index = index_of(6);
        let t = targets(6, "id-2", |_| ready("id-1"));
        let s = RolloutStrategy {
            partitions: vec![
                PartitionSpec {
                    name: "canary".into(),
                    max_unavailable: Some(IntOrPercent::Int(1)),
                    cluster_name: "c000".into(),
                    ..Default::default()
                },
                labelled("even", "parity", "even"),
                labelled("odd", "parity", "odd"),
            ],
            ..Default::default()
        };
        let plan = plan_rollout(&t.rollout(), &s, false, &index).unwrap();
        // canary: c000 promoted, now unavailable (1 ≤ maxUnavailable 1 → available partition);
        // even: the rest promoted, 3 unavailable > 100%? no: limit(3, 100%) = 3 → available;
        // odd: promoted too.
        assert_eq!(count(&plan, promoted), 6);
        assert_eq!(plan.status.unavailable_partitions, 0);

        // With canary maxUnavailable 0 the canary is not promoted, counts as not up to date,
        // is unavailable (1 > 0), and later partitions are neither staged nor promoted.
        let mut strict = s.clone();
        strict.partitions[0].max_unavailable = Some(IntOrPercent::Int(0));
        let plan = plan_rollout(&t.rollout(), &strict, false, &index).unwrap();
        assert_eq!(count(&plan, promoted), 0);
        assert_eq!(plan.status.unavailable_partitions, 1);
        assert_eq!(plan.status.max_unavailable_partitions, 0);
        assert_eq!(count(&plan, |o| *o == Outcome::Untouched), 5);
        let p: Vec<(String, i64, i64)> = plan
            .status
            .partitions
            .iter()
            .map(|p| (p.name.clone(), p.max_unavailable, p.unavailable))
            .collect();
        assert_eq!(
            p,
            [
                ("canary".into(), 0, 1),
                ("even".into(), 3, 0),
                ("odd".into(), 3, 0)
            ]
        );
    }

    #[test]
    fn clusters_outside_manual_partitions_get_nothing() {
        let index = index_of(4);
        let t = targets(4, "id-1", |_| None);
        let s = RolloutStrategy {
            partitions: vec![labelled("only-even", "parity", "even")],
            ..Default::default()
        };
        let plan = plan_rollout(&t.rollout(), &s, false, &index).unwrap();
        let outcomes: Vec<bool> = plan
            .outcomes
            .iter()
            .map(|o| *o == Outcome::Deferred)
            .collect();
        assert_eq!(outcomes, [false, true, false, true]);
    }

    #[test]
    fn up_to_date_and_unavailable_rules() {
        let s = ready("a").unwrap();
        assert!(!s.is_unavailable());
        assert!(up_to_date(Some(&s), "a"));
        assert!(!up_to_date(Some(&s), "b"));
        assert!(!up_to_date(None, "a"));
        let not_applied = DeploymentState {
            applied_deployment_id: "old".into(),
            ..s.clone()
        };
        assert!(not_applied.is_unavailable());
        assert!(!up_to_date(Some(&not_applied), "a"));
        let not_ready = DeploymentState { ready: false, ..s };
        assert!(not_ready.is_unavailable());
        assert!(DeploymentState::default().is_unavailable());
    }

    #[test]
    fn invalid_values_name_the_field() {
        let s = RolloutStrategy {
            max_unavailable: Some(IntOrPercent::String("lots".into())),
            ..Default::default()
        };
        let err = plan_rollout(
            &targets(2, "x", |_| None).rollout(),
            &s,
            false,
            &index_of(2),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "rolloutStrategy.maxUnavailable: \"lots\" is neither an integer nor a percentage such as \"25%\""
        );
    }
}
