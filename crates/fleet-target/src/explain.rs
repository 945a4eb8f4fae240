//! Why each cluster does or does not get a bundle, from a [`BundlePlan`]: the report behind
//! `fleet target` (offline) and status messages. One line per candidate cluster, sorted by
//! cluster name, with a stable text form for snapshot tests.

use std::fmt;

use crate::index::ClusterIndex;
use crate::matcher::Criteria;
use crate::model::ClusterKey;
use crate::pipeline::BundlePlan;
use crate::placement::ClusterScore;
use crate::rollout::Outcome;
use crate::targeting::TargetingBundle;

/// What happens to one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Gets a BundleDeployment (now or once the rollout reaches it).
    Deployed {
        target: String,
        customizations: Vec<String>,
        score: Option<ClusterScore>,
        /// True when the rollout holds it back in this pass (maxNew, partitions).
        deferred: bool,
    },
    /// Fleet targeting leaves it out.
    NotTargeted(String),
    /// A target matches but `doNotDeploy` applies.
    Skipped(String),
    /// Targeted, but the placement policy did not choose it.
    NotPlaced(String),
}

/// One cluster's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterExplanation {
    pub cluster: ClusterKey,
    pub verdict: Verdict,
}

impl fmt::Display for ClusterExplanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.cluster;
        match &self.verdict {
            Verdict::Deployed {
                target,
                customizations,
                score,
                deferred,
            } => {
                write!(f, "deploy  {c}: target {target:?}")?;
                if !customizations.is_empty() {
                    write!(f, ", customizations {customizations:?}")?;
                }
                if let Some(s) = score {
                    write!(
                        f,
                        ", score (topology spread {}, affinity {}, existing {})",
                        s.topology_spread, s.affinity, s.existing_placement
                    )?;
                }
                if *deferred {
                    write!(f, ", deferred by the rollout")?;
                }
                Ok(())
            }
            Verdict::NotTargeted(why) => write!(f, "skip    {c}: {why}"),
            Verdict::Skipped(why) => write!(f, "skip    {c}: {why}"),
            Verdict::NotPlaced(why) => write!(f, "skip    {c}: not placed: {why}"),
        }
    }
}

/// Explains `plan` for every cluster of `namespaces` in `index`.
pub fn explain(
    index: &ClusterIndex,
    bundle: &TargetingBundle,
    namespaces: &[String],
    plan: &BundlePlan,
) -> Vec<ClusterExplanation> {
    let mut out: Vec<ClusterExplanation> = namespaces
        .iter()
        .flat_map(|ns| index.clusters_in(ns))
        .map(|indexed| {
            let key = indexed.cluster.key();
            let verdict = verdict(indexed, &key, bundle, plan);
            ClusterExplanation {
                cluster: key,
                verdict,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        (&a.cluster.name, &a.cluster.namespace).cmp(&(&b.cluster.name, &b.cluster.namespace))
    });
    out
}

fn verdict(
    indexed: &crate::index::IndexedCluster,
    key: &ClusterKey,
    bundle: &TargetingBundle,
    plan: &BundlePlan,
) -> Verdict {
    if let Some(pos) = plan.targets.iter().position(|t| &t.cluster == key) {
        let target = &plan.targets[pos];
        let score = plan
            .schedule
            .as_ref()
            .and_then(|s| s.selected.iter().find(|d| &d.cluster == key))
            .and_then(|d| d.score);
        let deferred = plan
            .rollout
            .outcomes
            .get(pos)
            .is_some_and(|o| *o == Outcome::Deferred);
        return Verdict::Deployed {
            target: target.target_name.clone(),
            customizations: target.customizations.clone(),
            score,
            deferred,
        };
    }
    if let Some(s) = plan.targeting.skipped.iter().find(|s| &s.cluster == key) {
        return Verdict::Skipped(s.reason.clone());
    }
    if plan.targeting.targets.iter().any(|t| &t.cluster == key) {
        let schedule = plan.schedule.as_ref();
        let why = schedule
            .and_then(|s| s.removed.iter().find(|r| &r.cluster == key))
            .map(|r| r.reason.clone())
            .or_else(|| {
                let name = key.to_string();
                schedule
                    .and_then(|s| s.unselected.iter().find(|u| u.cluster == name))
                    .map(ToString::to_string)
            })
            .unwrap_or_else(|| {
                "not selected by the placement policy (beyond the 20 unselected clusters reported)"
                    .into()
            });
        return Verdict::NotPlaced(why);
    }
    let restricted = !bundle.target_restrictions.is_empty()
        && !bundle
            .target_restrictions
            .iter()
            .any(|r| r.matcher().matches(indexed));
    Verdict::NotTargeted(if restricted {
        "not matched by the GitRepo's targets (targetRestrictions)".into()
    } else {
        "no target matches".into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ClusterGroupInfo, ClusterInfo};
    use crate::pipeline::{BundlePlanInput, PlacementStage, plan_bundle};
    use crate::placement::PlacementPolicy;
    use crate::rollout::RolloutStrategy;
    use crate::targeting::TargetingContext;
    use serde_json::json;
    use std::collections::BTreeMap;

    const NS: &str = "fleet-default";

    #[test]
    fn explains_every_cluster() {
        let index = ClusterIndex::new(
            [
                ClusterInfo::new(NS, "dev-1", [("env", "dev")]),
                ClusterInfo::new(NS, "prod-1", [("env", "prod"), ("region", "eu")]),
                ClusterInfo::new(NS, "prod-2", [("env", "prod"), ("region", "us")]),
                ClusterInfo::new(
                    NS,
                    "prod-3",
                    [("env", "prod"), ("region", "us"), ("frozen", "true")],
                ),
                ClusterInfo::new(NS, "test-1", [("env", "test")]),
            ],
            Vec::<ClusterGroupInfo>::new(),
        );
        let bundle: TargetingBundle = serde_json::from_value(json!({
            "name": "app", "namespace": NS,
            "targets": [
                {"name": "frozen", "clusterSelector": {"matchLabels": {"frozen": "true"}}, "doNotDeploy": true},
                {"name": "eu", "clusterSelector": {"matchLabels": {"region": "eu"}}, "helm": {"values": {"eu": true}}},
                {"name": "prod-or-test", "clusterSelector": {"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "test"]}]}}
            ],
            "targetRestrictions": [{"name": "prod-or-test", "clusterSelector": {"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "test"]}]}}]
        }))
        .unwrap();
        let policy: PlacementPolicy = serde_json::from_value(json!({
            "type": "PickN", "numberOfClusters": 1,
            "affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": [
                {"labelSelector": {"matchLabels": {"env": "prod"}}}
            ]}}}
        }))
        .unwrap();
        let ns = [NS.to_string()];
        let deployments = BTreeMap::new();
        let input = BundlePlanInput {
            bundle: &bundle,
            namespaces: &ns,
            context: &TargetingContext::default(),
            placement: Some(PlacementStage::new(&policy, &[], 0)),
            rollout: &RolloutStrategy::default(),
            paused: false,
            deployments: &deployments,
        };
        let plan = plan_bundle(&index, &input, &|_| "id".into()).unwrap();
        let lines: Vec<String> = explain(&index, &bundle, &ns, &plan)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            lines,
            [
                "skip    fleet-default/dev-1: not matched by the GitRepo's targets (targetRestrictions)",
                "skip    fleet-default/prod-1: not placed: cluster \"fleet-default/prod-1\" does not score high enough (affinity score: 0, topology spread score: 0)",
                "deploy  fleet-default/prod-2: target \"prod-or-test\", score (topology spread 0, affinity 0, existing 0)",
                "skip    fleet-default/prod-3: doNotDeploy on targetCustomization \"frozen\"",
                "skip    fleet-default/test-1: not placed: cluster \"fleet-default/test-1\" filtered by ClusterAffinity: cluster does not match with any of the required cluster affinity terms",
            ]
        );
    }
}
