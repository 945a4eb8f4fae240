//! Planning one Bundle against the index (pure, under the index's read lock): the manifest ID, Fleet
//! targeting ([`Targeted`], kept between reconciles by [`crate::bundle::cache`]) and the rollout through
//! `fleet_target::pipeline::plan_targeted`, the BundleDeployment each target should have (skipping those
//! already as wanted), and the orphans to delete. A Bundle with a `placement` block goes through
//! `fleet_target::pipeline::plan_bundle`, scheduled among the targeted clusters with its existing
//! placements fed back in ([`crate::placement::record`]); a Cluster that is leaving gets no
//! BundleDeployment and loses the ones it has. A paused Bundle gets no new BundleDeployment.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use fleet_api::{
    Bundle, BundleDeployment, BundleDeploymentOptions, BundleDeploymentSpec, BundleRef,
    find_condition,
};
use fleet_bundle::hash;
use fleet_target::TargetError;
use fleet_target::bundle_spec::{BundleSpecParts, read_bundle_spec};
use fleet_target::index::{ClusterIndex, IndexedCluster};
use fleet_target::labels::deployment_labels;
use fleet_target::model::ClusterKey;
use fleet_target::pipeline::{BundlePlanInput, PlacementStage, plan_bundle, plan_targeted};
use fleet_target::placement::ScheduleResult;
use fleet_target::rollout::{
    DeploymentState, Outcome, RolloutPlan, RolloutStatus, RolloutStrategy, RolloutTarget,
    plan_rollout,
};
use fleet_target::selector::LabelSelector;
use fleet_target::targeting::{Target, TargetingContext, compute_targets};
use kube::ResourceExt;
use kube::api::ObjectMeta;

use crate::bundle::cache::TargetingCache;
use crate::index::{IndexState, StoredDeployment};
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
    pub targets: Vec<(ClusterKey, Option<Arc<StoredDeployment>>)>,
    pub rollout: RolloutStatus,
    /// Targets not deployable yet because their Cluster has no namespace assigned.
    pub waiting_for_namespace: usize,
    /// Targets the rollout holds back for a later pass (`maxNew`).
    pub deferred: usize,
    /// The scheduling decision, when the Bundle has a placement block.
    pub placement: Option<PlacementOutcome>,
    /// Plan again after this long (a toleration or the rollout budget's wait runs out).
    pub requeue_after: Option<Duration>,
    /// Written BundleDeployments (namespace, name) that keep their deployed options while their staged
    /// options change, whose Helm values are in their options Secret and not known here (written before
    /// this process started): [`crate::bundle::values::keep_deployed_values`] reads them back first.
    pub deployed_values_unknown: HashSet<(String, String)>,
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
    plan_cached(bundle, state, settings, now, &TargetingCache::default())
}

/// A Bundle's targeting (for a Bundle without a placement block): what stays the same between plans
/// until the Bundle or what targeting reads changes ([`crate::bundle::cache`]).
pub struct Targeted {
    manifest_id: String,
    rollout: RolloutStrategy,
    paused: bool,
    /// The clusters that get a BundleDeployment, in targeting's order (sorted), each with the index
    /// of its option set in `options`.
    chosen: Vec<(ClusterKey, usize)>,
    options: Vec<TypedOptions>,
}

impl Targeted {
    /// The clusters that get a BundleDeployment, sorted.
    pub fn clusters(&self) -> impl Iterator<Item = &ClusterKey> {
        self.chosen.iter().map(|(cluster, _)| cluster)
    }

    /// Each chosen cluster with its deploymentID.
    fn ids(&self) -> Vec<(&ClusterKey, &str)> {
        self.chosen
            .iter()
            .map(|(cluster, set)| (cluster, self.options[*set].deployment_id.as_str()))
            .collect()
    }
}

/// The Bundle's spec split into its parts.
fn parts_of(bundle: &Bundle) -> Result<BundleSpecParts, TargetError> {
    let spec_json = serde_json::to_value(&bundle.spec).unwrap_or_default();
    read_bundle_spec(
        &bundle.namespace().unwrap_or_default(),
        &bundle.name_any(),
        bundle.labels(),
        &spec_json,
    )
}

/// Fleet targeting of `bundle` (without its placement stage) against `state`, with each target's
/// option set converted and hashed. The GitRepoRestrictions' `namespace_selector` goes on every
/// target's options after its customizations are merged, as Fleet's targeting puts it there.
pub fn targeted(
    bundle: &Bundle,
    namespace_selector: Option<&LabelSelector>,
    state: &IndexState,
) -> Result<Targeted, TargetError> {
    let parts = parts_of(bundle)?;
    let namespaces = state.bundle_namespaces(&parts.targeting);
    let targeting = compute_targets(
        &state.clusters,
        &parts.targeting,
        &namespaces,
        &context_with(namespace_selector),
    )?;
    let manifest_id = hash::manifest_id(&bundle.spec.resources);
    let sets = OptionSets::new(&manifest_id);
    Targeted::of(parts, &targeting.targets, sets)
}

impl Targeted {
    /// The Bundle's `targets` with their option sets (`sets` may know some already).
    fn of(
        parts: BundleSpecParts,
        targets: &[Target],
        sets: OptionSets<'_>,
    ) -> Result<Targeted, TargetError> {
        let chosen = targets
            .iter()
            .map(|t| Ok((t.cluster.clone(), sets.index_of(t)?)))
            .collect::<Result<Vec<_>, TargetError>>()?;
        Ok(Targeted {
            manifest_id: sets.manifest_id.to_string(),
            options: sets.into_typed(),
            rollout: parts.rollout,
            paused: parts.paused,
            chosen,
        })
    }
}

/// What targeting takes from outside the Bundle: its namespace's GitRepoRestriction selector.
fn context_with(namespace_selector: Option<&LabelSelector>) -> TargetingContext {
    TargetingContext {
        allowed_target_namespace_selector: namespace_selector.cloned(),
        ..TargetingContext::default()
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

/// Plans `bundle` against `state`, taking its targeting from `cache` when nothing it reads changed; a
/// placement is scheduled at `now` with `settings`' limits (and not cached: it reads cluster health).
pub fn plan_cached(
    bundle: &Bundle,
    state: &IndexState,
    settings: &PlacementSettings,
    now: i64,
    cache: &TargetingCache,
) -> Result<BundleWork, TargetError> {
    let namespace = bundle.namespace().unwrap_or_default();
    let name = bundle.name_any();
    let none = BTreeMap::new();
    let existing: &BTreeMap<ClusterKey, Arc<StoredDeployment>> = state
        .deployments_of(&(namespace.clone(), name.clone()))
        .unwrap_or(&none);
    let current: BTreeMap<ClusterKey, DeploymentState> = existing
        .iter()
        .map(|(k, bd)| (k.clone(), deployment_state(bd)))
        .collect();
    let is_leaving = |info: Option<&IndexedCluster>| {
        info.and_then(|c| c.cluster.health.as_ref())
            .is_some_and(|h| h.leaving)
    };
    let leaving = |cluster: &ClusterKey| is_leaving(state.clusters.get(cluster));
    let planned = if bundle.spec.placement.is_some() {
        let selector = cache.namespace_selectors.for_bundle(bundle);
        plan_placed(
            bundle,
            selector.as_ref(),
            state,
            settings,
            now,
            existing,
            &current,
        )?
    } else {
        let targeted = cache.targeted(bundle, state)?;
        let (first, orphaned) = plan_targeted(
            &state.clusters,
            &targeted.ids(),
            &targeted.rollout,
            targeted.paused,
            &current,
        )?;
        let writable = |cluster: &ClusterKey| {
            state.cluster_namespaces.contains_key(cluster) && !leaving(cluster)
        };
        let rollout = through_max_new(&targeted, first, &current, &state.clusters, writable)?;
        Planned {
            targeted,
            rollout,
            orphaned,
            placement: None,
        }
    };
    let targeted = &planned.targeted;
    let manifest_id = &targeted.manifest_id;
    let decisions: BTreeMap<&ClusterKey, &fleet_target::placement::Decision> = planned
        .placement
        .iter()
        .flat_map(|p| &p.schedule.selected)
        .map(|d| (&d.cluster, d))
        .collect();
    let policy_hash = planned.placement.as_ref().map(|p| &p.policy_hash);
    let mut work = BundleWork {
        manifest_id: manifest_id.clone(),
        rollout: planned.rollout.status.clone(),
        placement: planned
            .placement
            .as_ref()
            .map(|p| outcome(&p.schedule, &p.policy_hash)),
        requeue_after: planned
            .placement
            .as_ref()
            .and_then(|p| p.requeue_at)
            .map(|at| Duration::from_secs(u64::try_from(at - now).unwrap_or(0).max(1))),
        ..BundleWork::default()
    };
    // The labels every BundleDeployment of this Bundle carries, but for its cluster's.
    let bundle_labels = deployment_labels(
        &namespace,
        &name,
        bundle.labels(),
        &ClusterKey::new("", ""),
        manifest_id,
    );
    let default_options = BundleDeploymentOptions::default();
    for ((cluster, set), deployment) in targeted.chosen.iter().zip(&planned.rollout.deployments) {
        let bd = existing.get(cluster).cloned();
        let info = state.clusters.get(cluster);
        if is_leaving(info) {
            if let Some(bd) = &bd {
                work.deletes
                    .push((bd.namespace().unwrap_or_default(), bd.name_any()));
            }
            continue;
        }
        work.targets.push((cluster.clone(), bd.clone()));
        let Outcome::Write {
            staged_deployment_id,
            deployment_id,
            created,
            ..
        } = &deployment.outcome
        else {
            if deployment.outcome == Outcome::Deferred {
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
        let cluster_paused = info.is_some_and(|c| c.cluster.paused);
        let staged = &targeted.options[*set];
        let desired = DesiredSpec {
            paused: targeted.paused || cluster_paused,
            staged_options: &staged.options,
            staged_deployment_id,
            options: if deployment_id == staged_deployment_id {
                &staged.options
            } else {
                bd.as_ref().map_or(&default_options, |b| &b.spec.options)
            },
            deployment_id,
            depends_on: &bundle.spec.depends_on,
            helm_chart_options: bundle.spec.helm_op_options.as_ref(),
        };
        let annotations = match (decisions.get(cluster), policy_hash) {
            (Some(decision), Some(hash)) => record::annotations(decision, hash),
            _ => BTreeMap::new(),
        };
        let unchanged = bd.as_ref().is_some_and(|b| {
            desired.matches(&b.spec)
                && b.namespace().as_deref() == Some(cluster_namespace.as_str())
                && labels_match(b.labels(), &bundle_labels, cluster)
                && annotations
                    .iter()
                    .all(|(k, v)| b.annotations().get(k) == Some(v))
        });
        if unchanged {
            continue;
        }
        let spec = desired.to_spec();
        let labels = deployment_labels(&namespace, &name, bundle.labels(), cluster, manifest_id);
        let mut desired = BundleDeployment::new(&name, spec);
        desired.metadata = ObjectMeta {
            name: Some(name.clone()),
            namespace: Some(cluster_namespace.clone()),
            labels: Some(labels),
            annotations: (!annotations.is_empty()).then_some(annotations),
            ..ObjectMeta::default()
        };
        if deployment_id != staged_deployment_id
            && bd.as_ref().is_some_and(|b| !b.spec.values_hash.is_empty())
        {
            work.deployed_values_unknown
                .insert((cluster_namespace.clone(), name.clone()));
        }
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

/// Plans a Bundle with a placement block: targeting, scheduling among the targeted clusters (with its
/// existing placements fed back in), the rolling-update budget and the rollout.
fn plan_placed(
    bundle: &Bundle,
    namespace_selector: Option<&LabelSelector>,
    state: &IndexState,
    settings: &PlacementSettings,
    now: i64,
    existing: &BTreeMap<ClusterKey, Arc<StoredDeployment>>,
    current: &BTreeMap<ClusterKey, DeploymentState>,
) -> Result<Planned, TargetError> {
    let parts = parts_of(bundle)?;
    let namespaces = state.bundle_namespaces(&parts.targeting);
    let context = context_with(namespace_selector);
    let policy_hash = parts
        .placement
        .as_ref()
        .map(record::policy_hash)
        .unwrap_or_default();
    let placed = record::existing_placements(
        existing,
        bundle.status.as_ref().and_then(|s| s.placement.as_ref()),
        &policy_hash,
    );
    let manifest_id = hash::manifest_id(&bundle.spec.resources);
    let sets = OptionSets::new(&manifest_id);
    let id_of = |target: &Target| -> Result<String, TargetError> { sets.deployment_id(target) };
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
    Ok(Planned {
        targeted: Arc::new(Targeted::of(parts, &planned.targets, sets)?),
        rollout: planned.rollout,
        orphaned: planned.orphaned,
        placement: planned.schedule.map(|schedule| Placed {
            schedule,
            policy_hash,
            requeue_at,
        }),
    })
}

/// Passes [`through_max_new`] runs at most.
const MAX_NEW_PASSES: usize = 1000;

/// The rollout `first` continued as Fleet's requeues continue it while `maxNew` holds creations back:
/// each further pass sees what the earlier ones write (to `writable` targets: a cluster without a
/// namespace gets nothing yet) and creates up to `maxNew` more, until a pass creates nothing or nothing
/// is deferred. A target keeps its last write; the status is the last pass's. Only the rollout is
/// planned again (targeting and deploymentIDs stay), so creating a thousand BundleDeployments costs one
/// plan, not one per `maxNew` of them.
fn through_max_new(
    targeted: &Targeted,
    first: RolloutPlan,
    current: &BTreeMap<ClusterKey, DeploymentState>,
    index: &ClusterIndex,
    writable: impl Fn(&ClusterKey) -> bool,
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
            hold: false,
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

/// `labels` hold every label of `bundle_labels` (the Bundle's BundleDeployment labels without a cluster),
/// with `cluster`'s namespace and name, as [`deployment_labels`] would build them.
fn labels_match<'a>(
    labels: impl IntoIterator<Item = (&'a String, &'a String)>,
    bundle_labels: &BTreeMap<String, String>,
    cluster: &ClusterKey,
) -> bool {
    // Both are sorted: one walk through `labels` finds every key.
    let mut held = labels.into_iter();
    bundle_labels.iter().all(|(key, value)| {
        let wanted = match key.as_str() {
            fleet_target::labels::CLUSTER_NAMESPACE => cluster.namespace.as_str(),
            fleet_target::labels::CLUSTER => cluster.name.as_str(),
            _ => value.as_str(),
        };
        held.find(|(k, _)| *k >= key)
            .is_some_and(|(k, v)| k == key && v == wanted)
    })
}

/// A target's merged, templated options as Fleet's type.
fn options_of(target: &Target) -> Result<BundleDeploymentOptions, TargetError> {
    serde_json::from_value(serde_json::Value::Object(target.options.clone())).map_err(|e| {
        TargetError::invalid(format!("targets[{}]", target.target_name), e.to_string())
    })
}

/// A target's options as Fleet's type with their deploymentID.
#[derive(Clone)]
struct TypedOptions {
    options: Arc<BundleDeploymentOptions>,
    deployment_id: String,
}

/// Distinct option sets recognised by comparison (most targets of a Bundle share a few); a target
/// whose options are none of these gets a set of its own.
const MEMO_LIMIT: usize = 16;

/// The typed options and deploymentID of the option sets targeting produced, so that targets with the
/// same options (most of them: options differ only by customization or templated values) are converted
/// and hashed once, not once per cluster.
struct OptionSets<'a> {
    manifest_id: &'a str,
    sets: RefCell<Sets>,
}

/// The typed sets, and the options of the first [`MEMO_LIMIT`] of them as targeting produced them.
#[derive(Default)]
struct Sets {
    typed: Vec<TypedOptions>,
    seen: Vec<serde_json::Map<String, serde_json::Value>>,
}

impl<'a> OptionSets<'a> {
    fn new(manifest_id: &'a str) -> Self {
        OptionSets {
            manifest_id,
            sets: RefCell::default(),
        }
    }

    /// The index of `target`'s option set, added when new.
    fn index_of(&self, target: &Target) -> Result<usize, TargetError> {
        let mut sets = self.sets.borrow_mut();
        let Sets { typed, seen } = &mut *sets;
        if let Some(i) = seen.iter().position(|options| *options == target.options) {
            return Ok(i);
        }
        let options = options_of(target)?;
        typed.push(TypedOptions {
            deployment_id: hash::deployment_id(self.manifest_id, &options),
            options: Arc::new(options),
        });
        if seen.len() + 1 == typed.len() && seen.len() < MEMO_LIMIT {
            seen.push(target.options.clone());
        }
        Ok(typed.len() - 1)
    }

    /// `target`'s deploymentID.
    fn deployment_id(&self, target: &Target) -> Result<String, TargetError> {
        let i = self.index_of(target)?;
        Ok(self.sets.borrow().typed[i].deployment_id.clone())
    }

    fn into_typed(self) -> Vec<TypedOptions> {
        self.sets.into_inner().typed
    }
}

/// The spec planning wants for one BundleDeployment, borrowed, so that an existing one is compared
/// without building a new spec.
struct DesiredSpec<'a> {
    paused: bool,
    staged_options: &'a BundleDeploymentOptions,
    staged_deployment_id: &'a str,
    options: &'a BundleDeploymentOptions,
    deployment_id: &'a str,
    depends_on: &'a [BundleRef],
    /// A HelmOp's Bundle: how the agent reaches the chart it downloads (Fleet copies the Bundle's
    /// `helmOpOptions` into each BundleDeployment's `helmChartOptions`).
    helm_chart_options: Option<&'a fleet_api::HelmOpOptions>,
}

impl DesiredSpec<'_> {
    /// `spec` is exactly what [`DesiredSpec::to_spec`] builds (every field is listed, so a new field
    /// cannot be forgotten). A spec whose Helm values are in its options Secret (`valuesHash`; values the
    /// index does not know, as after a restart) matches by its deploymentIDs, which hash the full options,
    /// values included, so a restarted controller does not rewrite it.
    fn matches(&self, spec: &BundleDeploymentSpec) -> bool {
        let BundleDeploymentSpec {
            paused,
            staged_options,
            staged_deployment_id,
            options,
            deployment_id,
            depends_on,
            correct_drift,
            oci_contents,
            helm_chart_options,
            values_hash,
            downstream_resources_generation,
            off_schedule,
            waiting_for_values,
        } = spec;
        let values_moved = !values_hash.is_empty();
        *paused == self.paused
            && deployment_id == self.deployment_id
            && staged_deployment_id == self.staged_deployment_id
            && (values_moved || (staged_options == self.staged_options && options == self.options))
            && depends_on.as_slice() == self.depends_on
            && *correct_drift == self.staged_options.correct_drift
            && !oci_contents
            && helm_chart_options.as_ref() == self.helm_chart_options
            && *downstream_resources_generation == 0
            && !off_schedule
            && !waiting_for_values
    }

    fn to_spec(&self) -> BundleDeploymentSpec {
        BundleDeploymentSpec {
            paused: self.paused,
            correct_drift: self.staged_options.correct_drift.clone(),
            staged_options: self.staged_options.clone(),
            staged_deployment_id: self.staged_deployment_id.to_string(),
            options: self.options.clone(),
            deployment_id: self.deployment_id.to_string(),
            depends_on: self.depends_on.to_vec(),
            helm_chart_options: self.helm_chart_options.cloned(),
            ..BundleDeploymentSpec::default()
        }
    }
}

/// The rollout's view of an existing BundleDeployment.
pub fn deployment_state(bd: &StoredDeployment) -> DeploymentState {
    let status = bd.status.as_ref();
    DeploymentState {
        deployment_id: bd.spec.deployment_id.clone(),
        staged_deployment_id: bd.spec.staged_deployment_id.clone(),
        applied_deployment_id: status
            .map(|s| s.applied_deployment_id.clone())
            .unwrap_or_default(),
        ready: status.is_some_and(|s| s.ready),
        failed: status
            .and_then(|s| find_condition(&s.conditions, "Deployed"))
            .is_some_and(|c| c.status == "False"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::cluster_info;
    use serde_json::json;

    const NS: &str = "fleet-default";

    /// An index with clusters c0..c{count}, all with a namespace but `without_namespace`.
    fn index(count: usize, without_namespace: &[&str]) -> IndexState {
        let mut state = IndexState::default();
        for i in 0..count {
            let name = format!("c{i}");
            let cluster: fleet_api::Cluster = serde_json::from_value(json!({
                "metadata": {"name": name, "namespace": NS, "labels": {"env": "prod"}},
                "spec": {},
            }))
            .unwrap();
            let key = ClusterKey::new(NS, &name);
            state.clusters.upsert_cluster(cluster_info(&cluster));
            if !without_namespace.contains(&name.as_str()) {
                state
                    .cluster_namespaces
                    .insert(key, format!("cluster-{name}"));
            }
        }
        state
    }

    fn bundle(max_new: i64) -> Bundle {
        serde_json::from_value(json!({
            "metadata": {"name": "app", "namespace": NS},
            "spec": {
                "defaultNamespace": "app",
                "rolloutStrategy": {"maxNew": max_new},
                "targets": [{"clusterSelector": {"matchLabels": {"env": "prod"}}}],
            },
        }))
        .unwrap()
    }

    fn written(work: &BundleWork) -> BTreeMap<String, (String, String)> {
        work.writes
            .iter()
            .map(|bd| {
                (
                    bd.namespace().unwrap_or_default(),
                    (
                        bd.spec.staged_deployment_id.clone(),
                        bd.spec.deployment_id.clone(),
                    ),
                )
            })
            .collect()
    }

    #[test]
    fn one_plan_creates_what_successive_max_new_passes_create() {
        let state = index(7, &[]);
        let limited = plan(&bundle(2), &state).unwrap();
        let unlimited = plan(&bundle(100), &state).unwrap();
        assert_eq!(limited.writes.len(), 7);
        assert_eq!(limited.deferred, 0);
        assert_eq!(written(&limited), written(&unlimited));
        // The status is the last pass's: it created the last target.
        assert_eq!(limited.rollout.newly_created, 1);
    }

    #[test]
    fn labels_match_wants_every_bundle_label_with_the_clusters_own() {
        let cluster = ClusterKey::new(NS, "c1");
        let bundle_labels = deployment_labels(
            NS,
            "app",
            &BTreeMap::from([("team".to_string(), "a".to_string())]),
            &ClusterKey::new("", ""),
            "s-1",
        );
        let mut labels = deployment_labels(
            NS,
            "app",
            &BTreeMap::from([("team".to_string(), "a".to_string())]),
            &cluster,
            "s-1",
        );
        assert!(labels_match(&labels, &bundle_labels, &cluster));
        labels.insert("aaa-other".into(), "x".into());
        labels.insert("zzz-other".into(), "x".into());
        assert!(labels_match(&labels, &bundle_labels, &cluster));
        assert!(!labels_match(
            &labels,
            &bundle_labels,
            &ClusterKey::new(NS, "c2")
        ));
        labels.remove("team");
        assert!(!labels_match(&labels, &bundle_labels, &cluster));
    }

    #[test]
    fn a_desired_spec_matches_the_spec_it_builds_and_no_other() {
        let options: BundleDeploymentOptions = serde_json::from_value(json!({
            "defaultNamespace": "app",
            "serviceAccount": "sa",
            "helm": {"values": {"replicas": 2}},
        }))
        .unwrap();
        let staged: BundleDeploymentOptions = serde_json::from_value(json!({
            "defaultNamespace": "app",
            "correctDrift": {"enabled": true},
        }))
        .unwrap();
        let depends_on = vec![BundleRef {
            name: "db".into(),
            ..BundleRef::default()
        }];
        let desired = DesiredSpec {
            paused: true,
            staged_options: &staged,
            staged_deployment_id: "s-2:b",
            options: &options,
            deployment_id: "s-1:a",
            depends_on: &depends_on,
            helm_chart_options: None,
        };
        let built = desired.to_spec();
        assert!(desired.matches(&built));
        // Each field planning sets, and each it leaves empty, counts.
        let changes: Vec<fn(&mut BundleDeploymentSpec)> = vec![
            |s| s.paused = false,
            |s| s.deployment_id.push('x'),
            |s| s.staged_deployment_id.push('x'),
            |s| s.options.service_account.clear(),
            |s| s.staged_options.default_namespace.clear(),
            |s| s.depends_on.clear(),
            |s| s.correct_drift = None,
            |s| s.oci_contents = true,
            |s| s.helm_chart_options = Some(Default::default()),
            |s| s.downstream_resources_generation = 1,
            |s| s.off_schedule = true,
            |s| s.waiting_for_values = true,
        ];
        for (i, change) in changes.iter().enumerate() {
            let mut spec = built.clone();
            change(&mut spec);
            assert!(!desired.matches(&spec), "change {i} still matches");
        }
        // Stored with its values moved to its options Secret, unknown to a restarted controller: the
        // deploymentIDs stand for the options.
        let mut stored = BundleDeployment::new("app", built.clone());
        crate::bundle::values::extract(&mut stored).expect("values to move");
        assert!(desired.matches(&stored.spec));
        for change in &changes[..3] {
            let mut spec = stored.spec.clone();
            change(&mut spec);
            assert!(!desired.matches(&spec));
        }
    }

    #[test]
    fn max_new_passes_do_not_count_clusters_without_a_namespace_as_created() {
        let state = index(5, &["c0", "c1"]);
        let work = plan(&bundle(1), &state).unwrap();
        // c0 and c1 hold the single creation of every pass, as they would across requeues.
        assert_eq!(work.writes.len(), 0);
        assert_eq!(work.waiting_for_namespace, 1);
        assert_eq!(work.deferred, 4);
        let work = plan(&bundle(2), &state).unwrap();
        assert_eq!(work.writes.len(), 0);
        let work = plan(&bundle(3), &state).unwrap();
        assert_eq!(work.writes.len(), 3);
        assert_eq!(work.waiting_for_namespace, 2);
        assert_eq!(work.deferred, 0);
    }
}
