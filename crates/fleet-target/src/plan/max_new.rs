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
    if !first.outcomes.contains(&Outcome::Deferred) {
        return Ok(first);
    }
    let ids = targeted.ids();
    // What does not change between passes, looked up once.
    let writable: Vec<bool> = ids.iter().map(|(cluster, _)| writable(cluster)).collect();
    let paused: Vec<bool> = ids
        .iter()
        .map(|(cluster, _)| index.is_paused(cluster))
        .collect();
    let held: Vec<bool> = ids
        .iter()
        .map(|(cluster, _)| held.contains(*cluster))
        .collect();
    // Each target's state as the passes so far leave it: the next pass's input.
    let mut states: Vec<Option<DeploymentState>> = ids
        .iter()
        .map(|(cluster, _)| current.get(*cluster).cloned())
        .collect();
    let mut written: Vec<Option<Outcome>> = vec![None; ids.len()];
    let mut plan = first;
    for _ in 0..MAX_NEW_PASSES {
        let deferred = plan.outcomes.contains(&Outcome::Deferred);
        let mut created = false;
        let mut wrote = Vec::new();
        for (i, (state, outcome)) in states.iter_mut().zip(&plan.outcomes).enumerate() {
            if let Outcome::Write {
                created: new,
                staged_deployment_id,
                deployment_id,
                ..
            } = outcome
                && writable[i]
            {
                let state = state.get_or_insert_with(DeploymentState::default);
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
        let mut outcomes: Vec<Option<Outcome>> = plan.outcomes.into_iter().map(Some).collect();
        for i in wrote {
            written[i] = outcomes[i].take();
        }
        let again: Vec<RolloutTarget<'_>> = ids
            .iter()
            .zip(&states)
            .zip(paused.iter().zip(&held))
            .map(
                |((&(cluster, deployment_id), state), (&paused, &hold))| RolloutTarget {
                    cluster,
                    deployment_id,
                    current: state.as_ref(),
                    hold,
                    paused,
                },
            )
            .collect();
        plan = plan_rollout(&again, &targeted.rollout, targeted.paused, index)?;
    }
    for (outcome, write) in plan.outcomes.iter_mut().zip(written) {
        if let Some(write) = write
            && !matches!(outcome, Outcome::Write { .. })
        {
            *outcome = write;
        }
    }
    Ok(plan)
}
