//! One bundle through every stage, as the controller calls it: Fleet targeting → (optional)
//! placement scheduling among the targeted clusters → (with placement) the rolling-update budget
//! → Fleet's rollout partitions over the chosen clusters, plus the BundleDeployments that are no
//! longer wanted (orphans to delete). The deploymentID of a target is computed by the caller (it
//! hashes options with Go-JSON rules that live in the bundle crate), passed in as a function.
//!
//! The budget and the partitions combine: the budget (KubeFleet's `maxUnavailable`/`maxSurge`
//! over the placement's target count) decides which new BundleDeployments may be created, which
//! out-of-date ones may be updated and which orphans may be deleted now; what it holds back is
//! neither created nor promoted (only staged) and orphans wait; Fleet's partitions then apply to
//! the rest as usual.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::TargetError;
use crate::index::ClusterIndex;
use crate::model::{ClusterInfo, ClusterKey, UnixSeconds};
use crate::placement::budget::{PlacedDeployment, Readiness, RollPlan, plan_roll};
use crate::placement::{
    EligibilityConfig, ExistingPlacement, PlacementPolicy, PlacementState, PlacementType,
    ScheduleInput, ScheduleResult, schedule,
};
use crate::rollout::{DeploymentState, RolloutPlan, RolloutStrategy, RolloutTarget, plan_rollout};
use crate::targeting::{Target, Targeting, TargetingBundle, TargetingContext, compute_targets};

/// The placement stage's input.
#[derive(Debug, Clone)]
pub struct PlacementStage<'a> {
    pub policy: &'a PlacementPolicy,
    pub existing: &'a [ExistingPlacement],
    pub now: UnixSeconds,
    pub eligibility: EligibilityConfig,
}

impl<'a> PlacementStage<'a> {
    /// A stage with the default eligibility timeouts.
    pub fn new(
        policy: &'a PlacementPolicy,
        existing: &'a [ExistingPlacement],
        now: UnixSeconds,
    ) -> Self {
        PlacementStage {
            policy,
            existing,
            now,
            eligibility: EligibilityConfig::default(),
        }
    }
}

/// Everything needed to plan one bundle.
#[derive(Debug, Clone)]
pub struct BundlePlanInput<'a> {
    pub bundle: &'a TargetingBundle,
    /// Candidate namespaces ([`crate::mapping::bundle_namespaces`]).
    pub namespaces: &'a [String],
    pub context: &'a TargetingContext,
    /// `None`: no placement block, exactly Fleet's behaviour.
    pub placement: Option<PlacementStage<'a>>,
    pub rollout: &'a RolloutStrategy,
    /// The bundle's `paused`.
    pub paused: bool,
    /// The bundle's current BundleDeployments, by cluster.
    pub deployments: &'a BTreeMap<ClusterKey, DeploymentState>,
}

/// The plan for one bundle.
#[derive(Debug, Clone, PartialEq)]
pub struct BundlePlan {
    /// What Fleet targeting decided (all matching clusters, and the doNotDeploy skips).
    pub targeting: Targeting,
    /// The placement decision, when there is a placement block.
    pub schedule: Option<ScheduleResult>,
    /// The targets that get a BundleDeployment (targeting's, narrowed by placement), sorted by
    /// cluster name, aligned with `rollout.outcomes`.
    pub targets: Vec<Target>,
    pub rollout: RolloutPlan,
    /// The rolling-update budget's decisions, when there is a placement block.
    pub budget: Option<RollPlan>,
    /// Clusters holding a BundleDeployment of this bundle that is no longer wanted and may be
    /// deleted now, sorted.
    pub orphaned: Vec<ClusterKey>,
    /// Unwanted BundleDeployments the budget keeps for now, sorted.
    pub orphans_held: Vec<ClusterKey>,
}

/// Plans one bundle. `deployment_id` gives a target's deploymentID (manifest ID + options hash).
pub fn plan_bundle(
    index: &ClusterIndex,
    input: &BundlePlanInput<'_>,
    deployment_id: &dyn Fn(&Target) -> String,
) -> Result<BundlePlan, TargetError> {
    let targeting = compute_targets(index, input.bundle, input.namespaces, input.context)?;
    let (targets, schedule_result) = match &input.placement {
        None => (targeting.targets.clone(), None),
        Some(stage) => {
            let candidates: Vec<&ClusterInfo> = targeting
                .targets
                .iter()
                .filter_map(|t| index.get(&t.cluster).map(|c| &c.cluster))
                .collect();
            let result = schedule(&ScheduleInput {
                policy: stage.policy,
                candidates: &candidates,
                existing: stage.existing,
                now: stage.now,
                eligibility: stage.eligibility,
            })?;
            let chosen: BTreeSet<&ClusterKey> =
                result.selected.iter().map(|d| &d.cluster).collect();
            let targets = targeting
                .targets
                .iter()
                .filter(|t| chosen.contains(&t.cluster))
                .cloned()
                .collect();
            (targets, Some(result))
        }
    };
    let ids: Vec<String> = targets.iter().map(deployment_id).collect();
    let mut orphaned = orphans(targets.iter().map(|t| &t.cluster), input.deployments);
    let mut orphans_held = Vec::new();
    let mut held = BTreeSet::new();
    let budget = match (&input.placement, &schedule_result) {
        (Some(stage), Some(result)) => {
            let plan = budget(stage, result, &targets, &ids, &orphaned, input.deployments)?;
            held.extend(plan.stale.iter().cloned());
            let removable: BTreeSet<&ClusterKey> = plan.remove.iter().collect();
            (orphaned, orphans_held) = orphaned.into_iter().partition(|k| removable.contains(k));
            Some(plan)
        }
        _ => None,
    };
    let rollout_targets = rollout_targets(
        targets
            .iter()
            .zip(&ids)
            .map(|(t, id)| (&t.cluster, id.as_str())),
        input.deployments,
        &held,
        index,
    );
    let rollout = plan_rollout(&rollout_targets, input.rollout, input.paused, index)?;
    Ok(BundlePlan {
        targeting,
        schedule: schedule_result,
        targets,
        rollout,
        budget,
        orphaned,
        orphans_held,
    })
}

/// What [`plan_bundle`] does after targeting for a bundle without a placement block, from targets
/// already computed (a caller that keeps targeting between plans, as it changes only with the
/// bundle or the clusters): Fleet's rollout over `targets` (each cluster with its deploymentID, in
/// targeting's order) and the clusters holding a BundleDeployment no longer wanted, sorted.
pub fn plan_targeted(
    index: &ClusterIndex,
    targets: &[(&ClusterKey, &str)],
    rollout: &RolloutStrategy,
    paused: bool,
    deployments: &BTreeMap<ClusterKey, DeploymentState>,
) -> Result<(RolloutPlan, Vec<ClusterKey>), TargetError> {
    let orphaned = orphans(targets.iter().map(|(cluster, _)| *cluster), deployments);
    let rollout_targets = rollout_targets(
        targets.iter().copied(),
        deployments,
        &BTreeSet::new(),
        index,
    );
    let plan = plan_rollout(&rollout_targets, rollout, paused, index)?;
    Ok((plan, orphaned))
}

/// The clusters of `deployments` not among `wanted`, sorted.
fn orphans<'a>(
    wanted: impl Iterator<Item = &'a ClusterKey>,
    deployments: &BTreeMap<ClusterKey, DeploymentState>,
) -> Vec<ClusterKey> {
    let wanted: BTreeSet<&ClusterKey> = wanted.collect();
    deployments
        .keys()
        .filter(|k| !wanted.contains(k))
        .cloned()
        .collect()
}

/// The rollout's input: each target (cluster, deploymentID) with its current BundleDeployment, held
/// when in `held`, paused when its Cluster in `index` is.
fn rollout_targets<'a>(
    targets: impl Iterator<Item = (&'a ClusterKey, &'a str)>,
    deployments: &'a BTreeMap<ClusterKey, DeploymentState>,
    held: &BTreeSet<ClusterKey>,
    index: &ClusterIndex,
) -> Vec<RolloutTarget<'a>> {
    targets
        .map(|(cluster, deployment_id)| RolloutTarget {
            cluster,
            deployment_id,
            current: deployments.get(cluster),
            hold: held.contains(cluster),
            paused: index.is_paused(cluster),
        })
        .collect()
}

/// Runs the placement's rolling-update budget over the chosen targets and the orphans.
fn budget(
    stage: &PlacementStage<'_>,
    result: &ScheduleResult,
    targets: &[Target],
    ids: &[String],
    orphaned: &[ClusterKey],
    deployments: &BTreeMap<ClusterKey, DeploymentState>,
) -> Result<RollPlan, TargetError> {
    let placed_now =
        |cluster: &ClusterKey, state: PlacementState, d: &DeploymentState, up_to_date: bool| {
            PlacedDeployment {
                cluster: cluster.clone(),
                state,
                deleting: false,
                readiness: if d.ready && d.applied_deployment_id == d.deployment_id {
                    Readiness::Ready
                } else {
                    Readiness::NotReady
                },
                failed: d.failed,
                up_to_date,
            }
        };
    let mut placed: Vec<PlacedDeployment> = targets
        .iter()
        .zip(ids)
        .map(|(t, id)| match deployments.get(&t.cluster) {
            Some(d) => placed_now(&t.cluster, PlacementState::Bound, d, &d.deployment_id == id),
            None => placed_now(
                &t.cluster,
                PlacementState::Scheduled,
                &DeploymentState::default(),
                false,
            ),
        })
        .collect();
    placed.extend(orphaned.iter().filter_map(|k| {
        deployments
            .get(k)
            .map(|d| placed_now(k, PlacementState::Unscheduled, d, true))
    }));
    let policy = stage.policy;
    let target = match policy.placement_type {
        PlacementType::PickAll => result.selected.len(),
        PlacementType::PickFixed => policy.cluster_names.len(),
        PlacementType::PickN => policy.number_of_clusters.unwrap_or(0) as usize,
    };
    plan_roll(
        &placed,
        &policy.strategy.clone().unwrap_or_default(),
        target,
        stage.now,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ClusterGroupInfo;
    use crate::placement::{ExistingPlacement, PlacementState};
    use crate::rollout::Outcome;
    use serde_json::json;

    const NS: &str = "fleet-default";

    fn index() -> ClusterIndex {
        ClusterIndex::new(
            ["a", "b", "c", "d"]
                .map(|n| ClusterInfo::new(NS, n, [("env", if n == "d" { "dev" } else { "prod" })])),
            Vec::<ClusterGroupInfo>::new(),
        )
    }

    fn bundle() -> TargetingBundle {
        serde_json::from_value(json!({
            "name": "app",
            "namespace": NS,
            "targets": [{"name": "prod", "clusterSelector": {"matchLabels": {"env": "prod"}}}],
            "targetRestrictions": [{"name": "prod", "clusterSelector": {"matchLabels": {"env": "prod"}}}]
        }))
        .unwrap()
    }

    fn id(t: &Target) -> String {
        format!("s-manifest:{}", serde_json::to_string(&t.options).unwrap())
    }

    fn plan_for(
        placement: Option<PlacementStage<'_>>,
        deployments: &BTreeMap<ClusterKey, DeploymentState>,
    ) -> BundlePlan {
        let ns = [NS.to_string()];
        let input = BundlePlanInput {
            bundle: &bundle(),
            namespaces: &ns,
            context: &TargetingContext::default(),
            placement,
            rollout: &RolloutStrategy::default(),
            paused: false,
            deployments,
        };
        plan_bundle(&index(), &input, &id).unwrap()
    }

    /// A deployment applied and ready at `id`.
    fn ready_at(id: &str) -> DeploymentState {
        DeploymentState {
            deployment_id: id.into(),
            staged_deployment_id: id.into(),
            applied_deployment_id: id.into(),
            ready: true,
            failed: false,
        }
    }

    fn names(keys: impl IntoIterator<Item = ClusterKey>) -> Vec<String> {
        keys.into_iter().map(|k| k.name).collect()
    }

    #[test]
    fn without_placement_every_target_rolls_out_and_stale_deployments_are_orphans() {
        let deployments = BTreeMap::from([(ClusterKey::new(NS, "d"), DeploymentState::default())]);
        let plan = plan_for(None, &deployments);
        assert_eq!(
            names(plan.targets.iter().map(|t| t.cluster.clone())),
            ["a", "b", "c"]
        );
        assert!(
            plan.rollout
                .outcomes
                .iter()
                .all(|o| matches!(o, Outcome::Write { created: true, .. }))
        );
        assert_eq!(names(plan.orphaned), ["d"]);
        assert!(plan.schedule.is_none());
    }

    #[test]
    fn planning_from_kept_targets_gives_the_same_rollout_and_orphans() {
        let old = ready_at("old");
        let deployments = BTreeMap::from([
            (ClusterKey::new(NS, "b"), old),
            (ClusterKey::new(NS, "d"), DeploymentState::default()),
        ]);
        let full = plan_for(None, &deployments);
        let ids: Vec<String> = full.targets.iter().map(id).collect();
        let kept: Vec<(&ClusterKey, &str)> = full
            .targets
            .iter()
            .zip(&ids)
            .map(|(t, id)| (&t.cluster, id.as_str()))
            .collect();
        let (rollout, orphaned) = plan_targeted(
            &index(),
            &kept,
            &RolloutStrategy::default(),
            false,
            &deployments,
        )
        .unwrap();
        assert_eq!(rollout, full.rollout);
        assert_eq!(orphaned, full.orphaned);
        assert_eq!(names(orphaned), ["d"]);
        // b is promoted to its new ID, a and c are created.
        assert!(matches!(
            &rollout.outcomes[1],
            Outcome::Write {
                created: false,
                promoted: true,
                ..
            }
        ));
    }

    #[test]
    fn placement_narrows_the_targets_before_rollout() {
        let policy: PlacementPolicy =
            serde_json::from_value(json!({"type": "PickN", "numberOfClusters": 2})).unwrap();
        let deployments = BTreeMap::from([(ClusterKey::new(NS, "a"), DeploymentState::default())]);
        let plan = plan_for(Some(PlacementStage::new(&policy, &[], 0)), &deployments);
        // Targeting allows a, b, c (d is dev); PickN 2 takes the largest names.
        assert_eq!(
            names(plan.targets.iter().map(|t| t.cluster.clone())),
            ["b", "c"]
        );
        assert_eq!(plan.rollout.outcomes.len(), 2);
        // a lost its placement; the budget (maxUnavailable 25% of 2 → 1) deletes it only once
        // enough of the new placements are ready: make before break.
        assert!(plan.orphaned.is_empty());
        assert_eq!(names(plan.orphans_held), ["a"]);
        assert!(plan.schedule.as_ref().unwrap().condition.fulfilled);

        // Next pass: b and c report ready at their IDs, so a may go.
        let mut deployments = deployments.clone();
        for (target, outcome) in plan.targets.iter().zip(&plan.rollout.outcomes) {
            if let Outcome::Write { deployment_id, .. } = outcome {
                deployments.insert(target.cluster.clone(), ready_at(deployment_id));
            }
        }
        let existing: Vec<ExistingPlacement> = plan
            .schedule
            .unwrap()
            .selected
            .iter()
            .map(|d| d.to_existing(PlacementState::Bound))
            .collect();
        let plan = plan_for(
            Some(PlacementStage::new(&policy, &existing, 0)),
            &deployments,
        );
        assert_eq!(names(plan.orphaned), ["a"]);
        assert!(plan.orphans_held.is_empty());
    }

    /// The budget gates the partitions: with maxUnavailable 0 and maxSurge 1, a scale-out adds one
    /// cluster per pass, and out-of-date deployments are staged but not promoted.
    #[test]
    fn placement_budget_combines_with_partitions() {
        let policy: PlacementPolicy = serde_json::from_value(json!({
            "type": "PickN", "numberOfClusters": 3,
            "strategy": {"maxUnavailable": 0, "maxSurge": 1}
        }))
        .unwrap();
        // c already runs an old version, ready.
        let old = ready_at("old");
        let deployments = BTreeMap::from([
            (ClusterKey::new(NS, "c"), old),
            (ClusterKey::new(NS, "d"), DeploymentState::default()),
        ]);
        let existing = [ExistingPlacement {
            cluster: ClusterKey::new(NS, "c"),
            state: PlacementState::Bound,
            obsolete: false,
            score: None,
        }];
        let plan = plan_for(
            Some(PlacementStage::new(&policy, &existing, 0)),
            &deployments,
        );
        assert_eq!(
            names(plan.targets.iter().map(|t| t.cluster.clone())),
            ["a", "b", "c"]
        );
        let budget = plan.budget.as_ref().unwrap();
        // target 3, canBeReady 2 (c and the orphan d) → maxToAdd = 3 + 1 − 2 = 2 (a and b);
        // ready 1 → maxToRemove = 1 − (3 − 0) < 0: c stays old, d waits.
        assert_eq!(names(budget.roll_out.clone()), ["a", "b"]);
        assert_eq!(names(budget.stale.clone()), ["c"]);
        assert!(plan.orphaned.is_empty());
        assert_eq!(names(plan.orphans_held), ["d"]);
        let outcomes: Vec<(String, bool)> = plan
            .targets
            .iter()
            .zip(&plan.rollout.outcomes)
            .map(|(target, outcome)| {
                (
                    target.cluster.name.clone(),
                    matches!(outcome, Outcome::Write { promoted: true, .. }),
                )
            })
            .collect();
        assert_eq!(
            outcomes,
            [("a".into(), true), ("b".into(), true), ("c".into(), false)]
        );
    }
}
