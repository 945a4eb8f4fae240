//! Planning one Bundle: from the Bundle, the fleet's state ([`FleetState`]) and the Bundle's existing
//! BundleDeployments to the BundleDeployments to write and delete ([`plan`], the one entry point).
//!
//! Fleet targeting runs first ([`Targeted`], kept between plans by [`TargetingCache`] while nothing it
//! reads changes); a Bundle with a `placement` block is then scheduled among the targeted clusters with
//! its existing placements fed back in ([`placement`]), under the placement's rolling-update budget
//! ([`crate::pipeline::plan_bundle`]). Fleet's rollout ([`crate::rollout::plan_rollout`]: partitions,
//! `maxUnavailable`, `maxNew`) then decides what to create, stage and promote; while `maxNew` holds
//! creations back, the rollout is continued as Fleet's requeues would continue it ([`max_new`]). Each
//! target's BundleDeployment is built ([`desired`]) and written only when it differs from the one that
//! exists; a Cluster that is leaving gets no BundleDeployment and loses the ones it has; a paused
//! Bundle gets no new BundleDeployment; BundleDeployments no longer wanted are deleted.
//!
//! Hashes (manifest ID, deploymentID) follow Go's JSON encoding, which the bundle crate implements: the
//! caller passes them in ([`Hashes`]).

pub mod cache;
pub mod desired;
pub mod existing;
pub mod max_new;
pub mod options;
pub mod placement;
pub mod state;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use fleet_api::{Bundle, BundleDeployment};

use crate::TargetError;
use crate::index::IndexedCluster;
use crate::model::{ClusterKey, UnixSeconds};
use crate::pipeline::{BundlePlanInput, PlacementStage, plan_bundle, plan_targeted};
use crate::placement::{EligibilityConfig, ScheduleResult};
use crate::rollout::{DeploymentState, Outcome, RolloutPlan, RolloutStatus};
use crate::selector::LabelSelector;
use crate::targeting::Target;

pub use cache::TargetingCache;
pub use desired::{DesiredSpec, PlannedWrite};
pub use existing::{ExistingDeployment, deployment_state};
pub use options::{Hashes, OptionSets, TypedOptions};
pub use placement::Outcome as PlacementOutcome;
pub use state::{BundleKey, ClusterChange, FleetState};

use cache::{Targeted, context_with, parts_of};
use desired::WriteTemplate;
use max_new::through_max_new;

/// Everything one plan reads.
pub struct PlanInput<'a, D> {
    pub bundle: &'a Bundle,
    pub fleet: &'a FleetState,
    /// The Bundle's BundleDeployments, by cluster.
    pub deployments: &'a BTreeMap<ClusterKey, Arc<D>>,
    /// Its namespace's GitRepoRestriction `allowedTargetNamespaceSelector`, set on every target's
    /// options as Fleet's targeting sets it.
    pub namespace_selector: Option<&'a LabelSelector>,
    /// When and with which limits a placement is scheduled.
    pub now: UnixSeconds,
    pub eligibility: EligibilityConfig,
    pub hashes: Hashes,
}

/// What to write for one Bundle.
#[derive(Debug)]
pub struct BundleWork<D> {
    pub manifest_id: String,
    /// BundleDeployments to create or update (server-side apply), each built by [`BundleWork::build`]
    /// when it is written.
    pub writes: Vec<PlannedWrite>,
    /// BundleDeployments to delete: (namespace, name).
    pub deletes: Vec<(String, String)>,
    /// Every target, with its current BundleDeployment, sorted by cluster.
    pub targets: Vec<(ClusterKey, Option<Arc<D>>)>,
    /// The rollout's status; each partition's members are indices into `targets`.
    pub rollout: RolloutStatus,
    /// Targets not deployable yet because their Cluster has no namespace assigned.
    pub waiting_for_namespace: usize,
    /// Targets the rollout holds back for a later pass (`maxNew`).
    pub deferred: usize,
    /// The scheduling decision, when the Bundle has a placement block.
    pub placement: Option<PlacementOutcome>,
    /// Plan again after this long (a toleration or the rollout budget's wait runs out).
    pub requeue_after: Option<Duration>,
    template: WriteTemplate,
}

impl<D: ExistingDeployment> BundleWork<D> {
    /// The BundleDeployment `write` (one of `writes`) asks for.
    pub fn build(&self, write: &PlannedWrite) -> BundleDeployment {
        let (cluster, existing) = &self.targets[write.target];
        self.template.build(write, cluster, existing.as_deref())
    }
}

/// A plan before it is compared with the BundleDeployments that exist.
struct Planned {
    targeted: Arc<Targeted>,
    /// One entry per chosen cluster.
    rollout: RolloutPlan,
    orphaned: Vec<ClusterKey>,
    placement: Option<Placed>,
}

/// The placement stage's part of a plan.
struct Placed {
    schedule: ScheduleResult,
    policy_hash: String,
    requeue_at: Option<i64>,
}

/// Plans one Bundle: the BundleDeployments to write and delete. Its targeting comes from `cache` when
/// nothing it reads changed; a placement is scheduled at `input.now` (and not cached: it reads cluster
/// health).
pub fn plan<D: ExistingDeployment>(
    input: &PlanInput<'_, D>,
    cache: &TargetingCache,
) -> Result<BundleWork<D>, TargetError> {
    let PlanInput {
        bundle,
        fleet: state,
        deployments: existing,
        namespace_selector,
        now,
        eligibility,
        hashes,
    } = *input;
    let current: BTreeMap<ClusterKey, DeploymentState> = existing
        .iter()
        .map(|(k, bd)| (k.clone(), deployment_state(&**bd)))
        .collect();
    let is_leaving = |info: Option<&IndexedCluster>| {
        info.and_then(|c| c.cluster.health.as_ref())
            .is_some_and(|h| h.leaving)
    };
    let leaving = |cluster: &ClusterKey| is_leaving(state.clusters.get(cluster));
    let writable =
        |cluster: &ClusterKey| state.cluster_namespaces.contains_key(cluster) && !leaving(cluster);
    let planned = if bundle.spec.placement.is_some() {
        let (mut planned, held) = plan_placed(
            bundle,
            namespace_selector,
            state,
            (now, eligibility),
            hashes,
            existing,
            &current,
        )?;
        planned.rollout = through_max_new(
            &planned.targeted,
            planned.rollout,
            &current,
            &state.clusters,
            writable,
            &held,
        )?;
        planned
    } else {
        let targeted = cache.targeted(bundle, namespace_selector, state, hashes)?;
        let (first, orphaned) = plan_targeted(
            &state.clusters,
            &targeted.ids(),
            &targeted.rollout,
            targeted.paused,
            &current,
        )?;
        let rollout = through_max_new(
            &targeted,
            first,
            &current,
            &state.clusters,
            writable,
            &BTreeSet::new(),
        )?;
        Planned {
            targeted,
            rollout,
            orphaned,
            placement: None,
        }
    };
    let targeted = &planned.targeted;
    let decisions: BTreeMap<&ClusterKey, &crate::placement::Decision> = planned
        .placement
        .iter()
        .flat_map(|p| &p.schedule.selected)
        .map(|d| (&d.cluster, d))
        .collect();
    let policy_hash = planned.placement.as_ref().map(|p| &p.policy_hash);
    let mut work = BundleWork {
        writes: Vec::new(),
        deletes: Vec::new(),
        targets: Vec::new(),
        waiting_for_namespace: 0,
        deferred: 0,
        manifest_id: targeted.manifest_id.clone(),
        rollout: planned.rollout.status.clone(),
        placement: planned
            .placement
            .as_ref()
            .map(|p| placement::outcome(&p.schedule, &p.policy_hash)),
        requeue_after: planned
            .placement
            .as_ref()
            .and_then(|p| p.requeue_at)
            .map(|at| Duration::from_secs(u64::try_from(at - now).unwrap_or(0).max(1))),
        template: WriteTemplate::new(bundle, Arc::clone(targeted)),
    };
    // Each chosen cluster's index in `work.targets` (a leaving cluster is not a target).
    let mut target_of: Vec<Option<usize>> = Vec::with_capacity(targeted.chosen.len());
    for ((cluster, set), outcome) in targeted.chosen.iter().zip(&planned.rollout.outcomes) {
        let bd = existing.get(cluster);
        let info = state.clusters.get(cluster);
        if is_leaving(info) {
            if let Some(bd) = bd {
                work.deletes
                    .push((bd.namespace().to_string(), bd.name().to_string()));
            }
            target_of.push(None);
            continue;
        }
        let target = work.targets.len();
        target_of.push(Some(target));
        work.targets.push((cluster.clone(), bd.cloned()));
        let Outcome::Write {
            staged_deployment_id,
            deployment_id,
            created,
            ..
        } = outcome
        else {
            if *outcome == Outcome::Deferred {
                work.deferred += 1;
            }
            continue;
        };
        // A paused Bundle (its own `paused`, or its GitRepo's) gets no new BundleDeployment: Fleet's
        // documentation (gitrepo-add, "Pausing") says a BundleDeployment deleted while its GitRepo is
        // paused is not re-created until the GitRepo is unpaused. Fleet's code re-creates it holding only
        // the staged deploymentID, which deploys nothing either; we follow the documentation. The target
        // stays Pending, as the status documentation describes a paused rollout with nothing applied.
        if *created && targeted.paused {
            work.rollout.newly_created -= 1;
            continue;
        }
        let Some(cluster_namespace) = state.cluster_namespaces.get(cluster) else {
            work.waiting_for_namespace += 1;
            continue;
        };
        let paused = targeted.paused || info.is_some_and(|c| c.cluster.paused);
        let annotations = match (decisions.get(cluster), policy_hash) {
            (Some(decision), Some(hash)) => placement::annotations(decision, hash)?,
            _ => BTreeMap::new(),
        };
        let desired = work.template.desired(
            *set,
            (staged_deployment_id, deployment_id),
            paused,
            bd.map(|b| b.spec()),
        );
        if bd.is_some_and(|b| {
            work.template
                .unchanged(&**b, cluster, &desired, cluster_namespace, &annotations)
        }) {
            continue;
        }
        let deployed_values_unknown = deployment_id != staged_deployment_id
            && bd.is_some_and(|b| !b.spec().values_hash.is_empty());
        work.writes.push(PlannedWrite {
            target,
            namespace: cluster_namespace.clone(),
            deployed_values_unknown,
            options_set: *set,
            staged_deployment_id: staged_deployment_id.clone(),
            deployment_id: deployment_id.clone(),
            paused,
            annotations,
        });
    }
    // Partitions list their members among the plan's targets.
    for partition in &mut work.rollout.partitions {
        partition
            .members
            .retain_mut(|member| match target_of[*member] {
                Some(target) => {
                    *member = target;
                    true
                }
                None => false,
            });
    }
    for cluster in &planned.orphaned {
        if let Some(bd) = existing.get(cluster) {
            work.deletes
                .push((bd.namespace().to_string(), bd.name().to_string()));
        }
    }
    Ok(work)
}

/// Plans a Bundle with a placement block: targeting, scheduling among the targeted clusters (with its
/// existing placements fed back in), the rolling-update budget and the rollout's first pass; with the
/// targets the budget holds back.
fn plan_placed<D: ExistingDeployment>(
    bundle: &Bundle,
    namespace_selector: Option<&LabelSelector>,
    state: &FleetState,
    (now, eligibility): (UnixSeconds, EligibilityConfig),
    hashes: Hashes,
    existing: &BTreeMap<ClusterKey, Arc<D>>,
    current: &BTreeMap<ClusterKey, DeploymentState>,
) -> Result<(Planned, BTreeSet<ClusterKey>), TargetError> {
    let parts = parts_of(bundle)?;
    let namespaces = state.bundle_namespaces(&parts.targeting);
    let context = context_with(namespace_selector);
    let policy_hash = parts
        .placement
        .as_ref()
        .map(placement::policy_hash)
        .unwrap_or_default();
    let placed = placement::existing_placements(
        existing,
        bundle.status.as_ref().and_then(|s| s.placement.as_ref()),
        &policy_hash,
    );
    let manifest_id = (hashes.manifest_id)(&bundle.spec.resources);
    let sets = OptionSets::new(&manifest_id, hashes.deployment_id);
    let id_of = |target: &Target| sets.deployment_id(target);
    let input = BundlePlanInput {
        bundle: &parts.targeting,
        namespaces: &namespaces,
        context: &context,
        placement: parts.placement.as_ref().map(|policy| PlacementStage {
            policy,
            existing: &placed,
            now,
            eligibility,
        }),
        rollout: &parts.rollout,
        paused: parts.paused,
        deployments: current,
    };
    let planned = plan_bundle(&state.clusters, &input, &id_of)?;
    let requeue_at = [
        planned.schedule.as_ref().and_then(|s| s.requeue_at),
        planned.budget.as_ref().and_then(|b| b.requeue_at),
    ]
    .into_iter()
    .flatten()
    .min();
    let held = planned
        .budget
        .iter()
        .flat_map(|b| b.stale.iter().cloned())
        .collect();
    let planned = Planned {
        targeted: Arc::new(Targeted::of(parts, &planned.targets, sets)),
        rollout: planned.rollout,
        orphaned: planned.orphaned,
        placement: planned.schedule.map(|schedule| Placed {
            schedule,
            policy_hash,
            requeue_at,
        }),
    };
    Ok((planned, held))
}

#[cfg(test)]
mod tests;
