//! One bundle through the targeting pipeline against a clusters file, explained per cluster: the selected
//! clusters (target, customizations, placement score, deploymentID) and why every other cluster is left out.
//! The decisions are `fleet_target`'s ([`plan_bundle`], [`explain`]); this module only collects them, adds the
//! clusters `explain` cannot see (other namespaces, PickFixed names that do not exist) and gives each reason a
//! stable kind for the structured output.

use std::collections::BTreeMap;

use anyhow::Context;
use fleet_api::Bundle;
use fleet_target::bundle_spec::read_bundle_spec;
use fleet_target::explain::{Verdict, explain};
use fleet_target::mapping::bundle_namespaces;
use fleet_target::model::ClusterKey;
use fleet_target::pipeline::{BundlePlanInput, PlacementStage, plan_bundle};
use fleet_target::placement::status::Stage;
use fleet_target::placement::{
    ClusterScore, Origin, PlacementPolicy, PlacementType, ScheduleResult, ScheduledCondition,
    UnselectedReason,
};
use fleet_target::targeting::{Target, TargetingContext};

use super::clusters_file::ClustersFile;

/// What `fleet target` reports for one bundle.
#[derive(Debug)]
pub struct BundleReport {
    pub name: String,
    pub namespace: String,
    pub placement: Option<PlacementPolicy>,
    pub selected: Vec<Selected>,
    pub unselected: Vec<Unselected>,
    /// The `Scheduled` condition (only with a placement block).
    pub scheduled: Option<ScheduledCondition>,
    /// When to schedule again (a toleration running out).
    pub requeue_at: Option<i64>,
    pub warnings: Vec<String>,
}

/// A cluster that gets the bundle.
#[derive(Debug)]
pub struct Selected {
    pub cluster: ClusterKey,
    /// `explain`'s line for it.
    pub line: String,
    pub target: String,
    pub customizations: Vec<String>,
    pub score: Option<ClusterScore>,
    /// The rollout holds it back in this pass.
    pub deferred: bool,
    pub deployment_id: String,
}

/// A cluster that does not get the bundle; its line reads like `explain`'s.
#[derive(Debug)]
pub struct Unselected {
    /// `namespace/name`, or the bare name a PickFixed policy asked for.
    pub cluster: String,
    pub kind: ReasonKind,
    pub message: String,
}

/// Why a cluster is left out, as a stable word for scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasonKind {
    /// No target (or no GitRepo target restriction) matches.
    NotTargeted,
    /// A matching target customization says `doNotDeploy`.
    DoNotDeploy,
    /// A placement filter rejected it.
    Filtered(Stage),
    /// PickN: others scored higher.
    ScoreTooLow,
    /// Its existing placement is removed.
    Removed,
    /// PickFixed: the cluster is not eligible (joined, heartbeat, health).
    NotEligible,
    /// PickFixed: no targeted cluster has this name.
    NotFound,
    /// Not selected: not among PickFixed's names, or beyond the unselected clusters the scheduler reports.
    NotPlaced,
    /// The cluster is in a namespace the bundle does not target.
    OtherNamespace,
}

impl ReasonKind {
    pub fn name(self) -> String {
        match self {
            ReasonKind::Filtered(stage) => format!("Filtered{stage:?}"),
            other => format!("{other:?}"),
        }
    }
}

/// Plans `bundle` against the clusters file and explains every cluster.
pub fn report(bundle: &Bundle, fleet: &ClustersFile) -> anyhow::Result<BundleReport> {
    let name = bundle.metadata.name.clone().unwrap_or_default();
    let namespace = bundle.metadata.namespace.clone().unwrap_or_default();
    let labels = bundle.metadata.labels.clone().unwrap_or_default();
    let parts = read_bundle_spec(&namespace, &name, &labels, &bundle.spec)
        .with_context(|| format!("bundle {name}"))?;
    let namespaces = bundle_namespaces(
        &namespace,
        &labels,
        &fleet.namespace_mappings,
        &fleet.namespace_infos,
    );
    let existing = fleet.placements.get(&name).map_or(&[][..], Vec::as_slice);
    let deployments = BTreeMap::new();
    let input = BundlePlanInput {
        bundle: &parts.targeting,
        namespaces: &namespaces,
        context: &TargetingContext::default(),
        placement: parts
            .placement
            .as_ref()
            .map(|policy| PlacementStage::new(policy, existing, fleet.now)),
        rollout: &parts.rollout,
        paused: parts.paused,
        deployments: &deployments,
    };
    let manifest_id = fleet_bundle::hash::manifest_id(&bundle.spec.resources);
    let id = |target: &Target| fleet_bundle::hash::deployment_id(&manifest_id, &target.options);
    let plan = plan_bundle(&fleet.index, &input, &id).with_context(|| format!("bundle {name}"))?;

    let targets: BTreeMap<&ClusterKey, &Target> =
        plan.targets.iter().map(|t| (&t.cluster, t)).collect();
    let origins: BTreeMap<&ClusterKey, Origin> = plan
        .schedule
        .iter()
        .flat_map(|s| &s.selected)
        .map(|d| (&d.cluster, d.origin))
        .collect();
    let mut selected = Vec::new();
    let mut unselected = Vec::new();
    for explained in explain(&fleet.index, &parts.targeting, &namespaces, &plan) {
        let line = explained.to_string() + origin_note(origins.get(&explained.cluster));
        let key = explained.cluster;
        match explained.verdict {
            Verdict::Deployed {
                target,
                customizations,
                score,
                deferred,
            } => selected.push(Selected {
                deployment_id: id(targets
                    .get(&key)
                    .with_context(|| format!("no target planned for {key}"))?),
                cluster: key,
                line,
                target,
                customizations,
                score,
                deferred,
            }),
            Verdict::NotTargeted(message) => {
                unselected.push(left_out(&key, ReasonKind::NotTargeted, message))
            }
            Verdict::Skipped(message) => {
                unselected.push(left_out(&key, ReasonKind::DoNotDeploy, message))
            }
            Verdict::NotPlaced(message) => {
                let kind = placement_reason(plan.schedule.as_ref(), &key);
                let message = match &parts.placement {
                    Some(p)
                        if kind == ReasonKind::NotPlaced
                            && p.placement_type == PlacementType::PickFixed =>
                    {
                        "not placed: not one of the PickFixed clusterNames".to_string()
                    }
                    _ => format!("not placed: {message}"),
                };
                unselected.push(left_out(&key, kind, message));
            }
        }
    }
    unselected.extend(other_namespaces(fleet, &namespaces));
    unselected.extend(missing_fixed_clusters(plan.schedule.as_ref()));
    let schedule = plan.schedule.as_ref();
    Ok(BundleReport {
        name,
        namespace,
        placement: parts.placement,
        selected,
        unselected,
        scheduled: schedule.map(|s| s.condition.clone()),
        requeue_at: schedule.and_then(|s| s.requeue_at),
        warnings: schedule.map(|s| s.warnings.clone()).unwrap_or_default(),
    })
}

/// How an existing placement came to be selected again, for the cluster's line.
fn origin_note(origin: Option<&Origin>) -> &'static str {
    match origin {
        Some(Origin::Kept) => " (existing placement, kept)",
        Some(Origin::Reselected(_)) => " (existing placement, picked again)",
        Some(Origin::New) | None => "",
    }
}

fn left_out(key: &ClusterKey, kind: ReasonKind, message: String) -> Unselected {
    Unselected {
        cluster: key.to_string(),
        kind,
        message,
    }
}

/// The kind of the scheduler's reason for leaving out a targeted cluster.
fn placement_reason(schedule: Option<&ScheduleResult>, key: &ClusterKey) -> ReasonKind {
    let Some(schedule) = schedule else {
        return ReasonKind::NotPlaced;
    };
    if schedule.removed.iter().any(|r| &r.cluster == key) {
        return ReasonKind::Removed;
    }
    let name = key.to_string();
    match schedule
        .unselected
        .iter()
        .find(|u| u.cluster == name)
        .map(|u| &u.reason)
    {
        Some(UnselectedReason::Filtered { stage, .. }) => ReasonKind::Filtered(*stage),
        Some(UnselectedReason::ScoreTooLow(_)) => ReasonKind::ScoreTooLow,
        Some(UnselectedReason::NotEligible(_)) => ReasonKind::NotEligible,
        Some(UnselectedReason::NotFound) => ReasonKind::NotFound,
        None => ReasonKind::NotPlaced,
    }
}

/// Clusters of namespaces the bundle does not target, sorted by name then namespace (as `explain` sorts).
fn other_namespaces(fleet: &ClustersFile, namespaces: &[String]) -> Vec<Unselected> {
    let mut keys: Vec<ClusterKey> = fleet
        .namespaces
        .iter()
        .filter(|ns| !namespaces.contains(ns))
        .flat_map(|ns| fleet.index.clusters_in(ns))
        .map(|c| c.cluster.key())
        .collect();
    keys.sort_by(|a, b| (&a.name, &a.namespace).cmp(&(&b.name, &b.namespace)));
    keys.iter()
        .map(|key| {
            left_out(
                key,
                ReasonKind::OtherNamespace,
                format!(
                    "in namespace {:?}; the bundle targets clusters in {}",
                    key.namespace,
                    namespaces.join(", ")
                ),
            )
        })
        .collect()
}

/// PickFixed names that match no targeted cluster (`explain` lists clusters, so it cannot show these).
fn missing_fixed_clusters(schedule: Option<&ScheduleResult>) -> Vec<Unselected> {
    schedule
        .into_iter()
        .flat_map(|s| &s.unselected)
        .filter(|u| u.reason == UnselectedReason::NotFound)
        .map(|u| Unselected {
            cluster: u.cluster.clone(),
            kind: ReasonKind::NotFound,
            message: format!("not placed: {u}"),
        })
        .collect()
}

/// A one-line summary of a placement policy.
pub fn policy_summary(policy: &PlacementPolicy) -> String {
    let mut parts = vec![format!("{:?}", policy.placement_type)];
    match policy.placement_type {
        PlacementType::PickN => parts.push(format!(
            "numberOfClusters {}",
            policy.number_of_clusters.unwrap_or(0)
        )),
        PlacementType::PickFixed => parts.push(format!(
            "clusterNames [{}]",
            policy.cluster_names.join(", ")
        )),
        PlacementType::PickAll => {}
    }
    if policy.required_terms().is_some_and(|t| !t.is_empty()) {
        parts.push("required affinity".into());
    }
    if !policy.preferred_terms().is_empty() {
        parts.push(format!(
            "{} preferred affinity term(s)",
            policy.preferred_terms().len()
        ));
    }
    if !policy.topology_spread_constraints.is_empty() {
        let keys: Vec<&str> = policy
            .topology_spread_constraints
            .iter()
            .map(|c| c.topology_key.as_str())
            .collect();
        parts.push(format!("spread over {}", keys.join(", ")));
    }
    if !policy.tolerations.is_empty() {
        parts.push(format!("{} toleration(s)", policy.tolerations.len()));
    }
    parts.join(", ")
}
