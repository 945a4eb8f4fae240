//! Planning one Bundle against the index (pure, under the index's read lock): the manifest ID, Fleet
//! targeting and rollout through `fleet_target::pipeline::plan_bundle`, the BundleDeployment each target
//! should have (skipping those already as wanted), and the orphans to delete. A Bundle with a `placement`
//! block is scheduled among the targeted clusters with its existing placements fed back in
//! ([`crate::placement::record`]); a Cluster that is leaving gets no BundleDeployment and loses the ones
//! it has.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use fleet_api::{
    Bundle, BundleDeployment, BundleDeploymentOptions, BundleDeploymentSpec, find_condition,
};
use fleet_bundle::hash;
use fleet_target::TargetError;
use fleet_target::bundle_spec::read_bundle_spec;
use fleet_target::labels::deployment_labels;
use fleet_target::model::ClusterKey;
use fleet_target::pipeline::{BundlePlanInput, PlacementStage, plan_bundle};
use fleet_target::rollout::{DeploymentState, Outcome, RolloutStatus};
use fleet_target::targeting::{Target, TargetingContext};
use fleet_target::template_engine::BuiltinTemplater;
use kube::ResourceExt;
use kube::api::ObjectMeta;

use crate::index::IndexState;
use crate::placement::status::{Outcome as PlacementOutcome, outcome};
use crate::placement::{PlacementSettings, record, unix_now};

/// What to write for one Bundle.
#[derive(Debug, Default)]
pub struct BundleWork {
    pub manifest_id: String,
    /// BundleDeployments to create or update (server-side apply), each already in its cluster namespace.
    pub writes: Vec<BundleDeployment>,
    /// BundleDeployments to delete: (namespace, name).
    pub deletes: Vec<(String, String)>,
    /// Every target, with its current BundleDeployment, sorted by cluster.
    pub targets: Vec<(ClusterKey, Option<Arc<BundleDeployment>>)>,
    pub rollout: RolloutStatus,
    /// Targets not deployable yet because their Cluster has no namespace assigned.
    pub waiting_for_namespace: usize,
    /// Targets the rollout holds back for a later pass (`maxNew`).
    pub deferred: usize,
    /// The scheduling decision, when the Bundle has a placement block.
    pub placement: Option<PlacementOutcome>,
    /// Plan again after this long (a toleration or the rollout budget's wait runs out).
    pub requeue_after: Option<Duration>,
}

/// Plans `bundle` against `state` with the default placement settings, now.
pub fn plan(bundle: &Bundle, state: &IndexState) -> Result<BundleWork, TargetError> {
    plan_with(bundle, state, &PlacementSettings::default(), unix_now())
}

/// Plans `bundle` against `state`; a placement is scheduled at `now` with `settings`' limits.
pub fn plan_with(
    bundle: &Bundle,
    state: &IndexState,
    settings: &PlacementSettings,
    now: i64,
) -> Result<BundleWork, TargetError> {
    let namespace = bundle.namespace().unwrap_or_default();
    let name = bundle.name_any();
    let spec_json = serde_json::to_value(&bundle.spec).unwrap_or_default();
    let parts = read_bundle_spec(&namespace, &name, bundle.labels(), &spec_json)?;
    let manifest_id = hash::manifest_id(&bundle.spec.resources);
    let existing: BTreeMap<ClusterKey, Arc<BundleDeployment>> = state
        .deployments_of(&(namespace.clone(), name.clone()))
        .cloned()
        .unwrap_or_default();
    let current: BTreeMap<ClusterKey, DeploymentState> = existing
        .iter()
        .map(|(k, bd)| (k.clone(), deployment_state(bd)))
        .collect();
    let namespaces = state.bundle_namespaces(&parts.targeting);
    let context = TargetingContext::default();
    let policy_hash = parts.placement.as_ref().map(record::policy_hash);
    let placed = match (&parts.placement, &policy_hash) {
        (Some(_), Some(hash)) => record::existing_placements(
            &existing,
            bundle.status.as_ref().and_then(|s| s.placement.as_ref()),
            hash,
        ),
        _ => Vec::new(),
    };
    let input = BundlePlanInput {
        bundle: &parts.targeting,
        namespaces: &namespaces,
        context: &context,
        placement: parts.placement.as_ref().map(|policy| PlacementStage {
            policy,
            existing: &placed,
            now,
            eligibility: settings.eligibility(),
        }),
        rollout: &parts.rollout,
        paused: parts.paused,
        deployments: &current,
    };
    let id_of = |target: &Target| -> Result<String, TargetError> {
        Ok(hash::deployment_id(&manifest_id, &options_of(target)?))
    };
    let planned = plan_bundle(&state.clusters, &input, &BuiltinTemplater, &id_of)?;

    let decisions: BTreeMap<&ClusterKey, &fleet_target::placement::Decision> = planned
        .schedule
        .iter()
        .flat_map(|s| &s.selected)
        .map(|d| (&d.cluster, d))
        .collect();
    let requeue_at = [
        planned.schedule.as_ref().and_then(|s| s.requeue_at),
        planned.budget.as_ref().and_then(|b| b.requeue_at),
    ]
    .into_iter()
    .flatten()
    .min();
    let mut work = BundleWork {
        manifest_id: manifest_id.clone(),
        rollout: planned.rollout.status.clone(),
        placement: planned
            .schedule
            .as_ref()
            .zip(policy_hash.as_deref())
            .map(|(result, hash)| outcome(result, hash)),
        requeue_after: requeue_at
            .map(|at| Duration::from_secs(u64::try_from(at - now).unwrap_or(0).max(1))),
        ..BundleWork::default()
    };
    let leaving = |cluster: &ClusterKey| {
        state
            .clusters
            .get(cluster)
            .and_then(|c| c.cluster.health.as_ref())
            .is_some_and(|h| h.leaving)
    };
    for (target, deployment) in planned.targets.iter().zip(&planned.rollout.deployments) {
        let bd = existing.get(&target.cluster).cloned();
        if leaving(&target.cluster) {
            if let Some(bd) = &bd {
                work.deletes
                    .push((bd.namespace().unwrap_or_default(), bd.name_any()));
            }
            continue;
        }
        work.targets.push((target.cluster.clone(), bd.clone()));
        let Outcome::Write {
            staged_deployment_id,
            deployment_id,
            ..
        } = &deployment.outcome
        else {
            if deployment.outcome == Outcome::Deferred {
                work.deferred += 1;
            }
            continue;
        };
        let Some(cluster_namespace) = state.cluster_namespaces.get(&target.cluster) else {
            work.waiting_for_namespace += 1;
            continue;
        };
        let cluster_paused = state
            .clusters
            .get(&target.cluster)
            .is_some_and(|c| c.cluster.paused);
        let staged_options = options_of(target)?;
        let options = if deployment_id == staged_deployment_id {
            staged_options.clone()
        } else {
            bd.as_ref()
                .map(|b| b.spec.options.clone())
                .unwrap_or_default()
        };
        let spec = BundleDeploymentSpec {
            paused: parts.paused || cluster_paused,
            correct_drift: staged_options.correct_drift.clone(),
            staged_options,
            staged_deployment_id: staged_deployment_id.clone(),
            options,
            deployment_id: deployment_id.clone(),
            depends_on: bundle.spec.depends_on.clone(),
            ..BundleDeploymentSpec::default()
        };
        let labels = deployment_labels(
            &namespace,
            &name,
            bundle.labels(),
            &target.cluster,
            &manifest_id,
        );
        let annotations = match (decisions.get(&target.cluster), &policy_hash) {
            (Some(decision), Some(hash)) => record::annotations(decision, hash),
            _ => BTreeMap::new(),
        };
        let unchanged = bd.as_ref().is_some_and(|b| {
            b.spec == spec
                && b.namespace().as_deref() == Some(cluster_namespace.as_str())
                && labels.iter().all(|(k, v)| b.labels().get(k) == Some(v))
                && annotations
                    .iter()
                    .all(|(k, v)| b.annotations().get(k) == Some(v))
        });
        if unchanged {
            continue;
        }
        let mut desired = BundleDeployment::new(&name, spec);
        desired.metadata = ObjectMeta {
            name: Some(name.clone()),
            namespace: Some(cluster_namespace.clone()),
            labels: Some(labels),
            annotations: (!annotations.is_empty()).then_some(annotations),
            ..ObjectMeta::default()
        };
        work.writes.push(desired);
    }
    for cluster in &planned.orphaned {
        if let Some(bd) = existing.get(cluster) {
            work.deletes
                .push((bd.namespace().unwrap_or_default(), bd.name_any()));
        }
    }
    Ok(work)
}

/// A target's merged, templated options as Fleet's type.
fn options_of(target: &Target) -> Result<BundleDeploymentOptions, TargetError> {
    serde_json::from_value(serde_json::Value::Object(target.options.clone())).map_err(|e| {
        TargetError::invalid(format!("targets[{}]", target.target_name), e.to_string())
    })
}

/// The rollout's view of an existing BundleDeployment.
pub fn deployment_state(bd: &BundleDeployment) -> DeploymentState {
    let status = bd.status.clone().unwrap_or_default();
    DeploymentState {
        deployment_id: bd.spec.deployment_id.clone(),
        staged_deployment_id: bd.spec.staged_deployment_id.clone(),
        applied_deployment_id: status.applied_deployment_id,
        ready: status.ready,
        failed: find_condition(&status.conditions, "Deployed").is_some_and(|c| c.status == "False"),
    }
}
