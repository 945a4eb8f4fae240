//! `maxNew` across passes: the rollout continued as Fleet's requeues continue it while `maxNew` holds
//! creations back, in memory, so that creating a thousand BundleDeployments costs one plan.

use std::collections::{BTreeMap, BTreeSet};

use crate::TargetError;
use crate::index::ClusterIndex;
use crate::model::ClusterKey;
use crate::rollout::{DeploymentState, Outcome, RolloutPlan, RolloutTarget, plan_rollout};

use super::cache::Targeted;

/// Passes [`through_max_new`] runs at most.
const MAX_NEW_PASSES: usize = 1000;

/// The rollout `first` continued as Fleet's requeues continue it while `maxNew` holds creations back:
/// each further pass sees what the earlier ones write (to `writable` targets: a cluster without a
/// namespace gets nothing yet) and creates up to `maxNew` more, until a pass creates nothing or nothing
/// is deferred. A target keeps its last write; the status is the last pass's. Only the rollout is
/// planned again (targeting and deploymentIDs stay), so creating a thousand BundleDeployments costs one
/// plan, not one per `maxNew` of them. Targets in `held` (by a placement's rolling-update budget) stay
/// held in every pass.
pub fn through_max_new(
    targeted: &Targeted,
    first: RolloutPlan,
    current: &BTreeMap<ClusterKey, DeploymentState>,
    index: &ClusterIndex,
    writable: impl Fn(&ClusterKey) -> bool,
    held: &BTreeSet<ClusterKey>,
) -> Result<RolloutPlan, TargetError> {
    // Nothing held back (every BundleDeployment exists, the usual case): the first pass is the plan.
    if !first
        .deployments
        .iter()
        .any(|d| d.outcome == Outcome::Deferred)
    {
        return Ok(first);
    }
    // The next pass's input: each target's state as the passes so far leave it.
    let mut again: Vec<RolloutTarget> = targeted
        .ids()
        .into_iter()
        .map(|(cluster, id)| RolloutTarget {
            cluster: cluster.clone(),
            deployment_id: id.to_string(),
            current: current.get(cluster).cloned(),
            hold: held.contains(cluster),
        })
        .collect();
    let mut written: Vec<Option<Outcome>> = vec![None; again.len()];
    let mut plan = first;
    for _ in 0..MAX_NEW_PASSES {
        let deferred = plan
            .deployments
            .iter()
            .any(|d| d.outcome == Outcome::Deferred);
        let mut created = false;
        let mut wrote = Vec::new();
        for (i, (target, planned)) in again.iter_mut().zip(&plan.deployments).enumerate() {
            if let Outcome::Write {
                created: new,
                staged_deployment_id,
                deployment_id,
                ..
            } = &planned.outcome
                && writable(&planned.cluster)
            {
                let state = target.current.get_or_insert_with(DeploymentState::default);
                state.staged_deployment_id.clone_from(staged_deployment_id);
                state.deployment_id.clone_from(deployment_id);
                created |= *new;
                wrote.push(i);
            }
        }
        if !deferred || !created {
            break;
        }
        // This pass's writes stand unless a later pass writes the target again.
        let mut outcomes: Vec<Option<Outcome>> = plan
            .deployments
            .into_iter()
            .map(|d| Some(d.outcome))
            .collect();
        for i in wrote {
            written[i] = outcomes[i].take();
        }
        plan = plan_rollout(&again, &targeted.rollout, targeted.paused, index)?;
    }
    for (planned, write) in plan.deployments.iter_mut().zip(written) {
        if let Some(write) = write
            && !matches!(planned.outcome, Outcome::Write { .. })
        {
            planned.outcome = write;
        }
    }
    Ok(plan)
}
