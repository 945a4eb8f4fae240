//! One bundle through every stage, as the controller calls it: Fleet targeting → (optional)
//! placement scheduling among the targeted clusters → rollout planning over the chosen ones, plus
//! the BundleDeployments that are no longer wanted (orphans to delete). The deploymentID of a
//! target is computed by the caller (it hashes options with Go-JSON rules that live in the bundle
//! crate), passed in as a function.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::TargetError;
use crate::index::ClusterIndex;
use crate::model::{ClusterInfo, ClusterKey, UnixSeconds};
use crate::placement::{
    EligibilityConfig, ExistingPlacement, PlacementPolicy, ScheduleInput, ScheduleResult, schedule,
};
use crate::rollout::{DeploymentState, RolloutPlan, RolloutStrategy, RolloutTarget, plan_rollout};
use crate::targeting::{Target, Targeting, TargetingBundle, TargetingContext, compute_targets};
use crate::template_engine::ValuesTemplater;

/// The placement stage's input.
#[derive(Debug, Clone)]
pub struct PlacementStage<'a> {
    pub policy: &'a PlacementPolicy,
    pub existing: &'a [ExistingPlacement],
    pub now: UnixSeconds,
    pub eligibility: EligibilityConfig,
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
    /// cluster name, aligned with `rollout.deployments`.
    pub targets: Vec<Target>,
    pub rollout: RolloutPlan,
    /// Clusters holding a BundleDeployment of this bundle that is no longer wanted, sorted.
    pub orphaned: Vec<ClusterKey>,
}

/// Plans one bundle. `deployment_id` gives a target's deploymentID (manifest ID + options hash).
pub fn plan_bundle(
    index: &ClusterIndex,
    input: &BundlePlanInput<'_>,
    templater: &dyn ValuesTemplater,
    deployment_id: &dyn Fn(&Target) -> Result<String, TargetError>,
) -> Result<BundlePlan, TargetError> {
    let targeting = compute_targets(
        index,
        input.bundle,
        input.namespaces,
        input.context,
        templater,
    )?;
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
    let rollout_targets = targets
        .iter()
        .map(|t| {
            Ok(RolloutTarget {
                cluster: t.cluster.clone(),
                deployment_id: deployment_id(t)?,
                current: input.deployments.get(&t.cluster).cloned(),
            })
        })
        .collect::<Result<Vec<_>, TargetError>>()?;
    let rollout = plan_rollout(&rollout_targets, input.rollout, input.paused, index)?;
    let wanted: BTreeSet<&ClusterKey> = targets.iter().map(|t| &t.cluster).collect();
    let orphaned = input
        .deployments
        .keys()
        .filter(|k| !wanted.contains(k))
        .cloned()
        .collect();
    Ok(BundlePlan {
        targeting,
        schedule: schedule_result,
        targets,
        rollout,
        orphaned,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ClusterGroupInfo;
    use crate::rollout::Outcome;
    use crate::template_engine::BuiltinTemplater;
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

    fn id(t: &Target) -> Result<String, TargetError> {
        Ok(format!(
            "s-manifest:{}",
            serde_json::Value::Object(t.options.clone())
        ))
    }

    fn names(keys: impl IntoIterator<Item = ClusterKey>) -> Vec<String> {
        keys.into_iter().map(|k| k.name).collect()
    }

    #[test]
    fn without_placement_every_target_rolls_out_and_stale_deployments_are_orphans() {
        let deployments = BTreeMap::from([(ClusterKey::new(NS, "d"), DeploymentState::default())]);
        let ns = [NS.to_string()];
        let input = BundlePlanInput {
            bundle: &bundle(),
            namespaces: &ns,
            context: &TargetingContext::default(),
            placement: None,
            rollout: &RolloutStrategy::default(),
            paused: false,
            deployments: &deployments,
        };
        let plan = plan_bundle(&index(), &input, &BuiltinTemplater, &id).unwrap();
        assert_eq!(
            names(plan.targets.iter().map(|t| t.cluster.clone())),
            ["a", "b", "c"]
        );
        assert!(
            plan.rollout
                .deployments
                .iter()
                .all(|d| matches!(d.outcome, Outcome::Write { created: true, .. }))
        );
        assert_eq!(names(plan.orphaned), ["d"]);
        assert!(plan.schedule.is_none());
    }

    #[test]
    fn placement_narrows_the_targets_before_rollout() {
        let policy: PlacementPolicy =
            serde_json::from_value(json!({"type": "PickN", "numberOfClusters": 2})).unwrap();
        let deployments = BTreeMap::from([(ClusterKey::new(NS, "a"), DeploymentState::default())]);
        let ns = [NS.to_string()];
        let input = BundlePlanInput {
            bundle: &bundle(),
            namespaces: &ns,
            context: &TargetingContext::default(),
            placement: Some(PlacementStage {
                policy: &policy,
                existing: &[],
                now: 0,
                eligibility: EligibilityConfig::default(),
            }),
            rollout: &RolloutStrategy::default(),
            paused: false,
            deployments: &deployments,
        };
        let plan = plan_bundle(&index(), &input, &BuiltinTemplater, &id).unwrap();
        // Targeting allows a, b, c (d is dev); PickN 2 takes the largest names.
        assert_eq!(
            names(plan.targets.iter().map(|t| t.cluster.clone())),
            ["b", "c"]
        );
        assert_eq!(plan.rollout.deployments.len(), 2);
        assert_eq!(names(plan.orphaned), ["a"]);
        assert!(plan.schedule.unwrap().condition.fulfilled);
    }
}
