//! Fleet targeting: which clusters get a BundleDeployment of a bundle, with which options.
//!
//! The pipeline, per candidate cluster (the bundle's namespace plus those added by
//! BundleNamespaceMappings, see [`crate::mapping`]):
//! 1. **match**: the first non-customization target that matches, provided the cluster also
//!    matches at least one `targetRestriction` (when there are restrictions; the GitRepo targets);
//! 2. **doNotDeploy** on that target skips the cluster;
//! 3. **customizations**: `FirstMatch` takes the first matching customization's options (its
//!    `doNotDeploy` skips the cluster); `AllMatches` merges every matching customization in order
//!    (any `doNotDeploy` skips);
//! 4. **options** = bundle options merged with the target options ([`crate::customization`]),
//!    then the restriction-derived fields, then values templating ([`crate::templating`]).
//!
//! Targets are customizations when `source` says so, else by position (the first
//! `len(targets) - len(targetRestrictions)` entries, and none when there are no restrictions), as
//! Fleet decides. Output is sorted by cluster name, then namespace.

use std::collections::{BTreeMap, BTreeSet};

use fleet_api::BundleDeploymentOptions;
use serde::{Deserialize, Serialize};

use crate::customization::merge_options;
use crate::error::TargetError;
use crate::index::{ClusterIndex, IndexedCluster};
use crate::matcher::Criteria;
use crate::model::ClusterKey;
use crate::selector::{LabelSelector, Labels};
use crate::templating::preprocess_helm_values;

/// A GitRepo target (and a Bundle's target restriction): a name and cluster criteria.
pub use fleet_api::GitTarget;

/// The `source` value Fleet's reader gives fleet.yaml `targetCustomizations` entries.
pub const SOURCE_CUSTOMIZATION: &str = "customization";

/// A bundle target: name, cluster criteria, `doNotDeploy` and its BundleDeploymentOptions.
pub use fleet_api::BundleTarget;

/// How matching customizations combine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CustomizationMode {
    #[default]
    FirstMatch,
    AllMatches,
}

/// The parts of a Bundle that targeting reads.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetingBundle {
    pub name: String,
    pub namespace: String,
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub labels: Labels,
    /// The bundle's own BundleDeploymentOptions.
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub options: BundleDeploymentOptions,
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub targets: Vec<BundleTarget>,
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub target_restrictions: Vec<GitTarget>,
    #[serde(default, deserialize_with = "crate::serde_util::empty_default")]
    pub target_customization_mode: CustomizationMode,
}

/// Settings that come from outside the bundle (GitRepoRestrictions, Policies).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TargetingContext {
    /// Set as `allowedTargetNamespaceSelector` on every target's options.
    pub allowed_target_namespace_selector: Option<LabelSelector>,
    /// Set as `createNamespace` on every target's options.
    pub create_namespace: Option<bool>,
}

/// One cluster that gets a BundleDeployment.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub cluster: ClusterKey,
    /// Name of the target that matched.
    pub target_name: String,
    /// Names of the customizations whose options were applied, in order.
    pub customizations: Vec<String>,
    /// The final, templated BundleDeploymentOptions.
    pub options: BundleDeploymentOptions,
}

/// A cluster a target matched but which gets nothing, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub cluster: ClusterKey,
    pub reason: String,
}

/// Result of targeting one bundle.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Targeting {
    pub targets: Vec<Target>,
    pub skipped: Vec<Skipped>,
}

/// The default target of a GitRepo without targets: the ClusterGroup `default`.
pub fn default_git_target() -> GitTarget {
    GitTarget {
        name: "default".into(),
        cluster_group: "default".into(),
        ..GitTarget::default()
    }
}

/// Fleet's `determineIsCustomization`: an explicit `source` decides; otherwise, with
/// restrictions, the first `customizations` targets are customizations; without restrictions
/// (CLI-made bundles) none is. fleet-api's `BundleTarget` carries no `source`, so targeting
/// decides by position.
pub fn is_customization(
    source: Option<&str>,
    index: usize,
    customizations: usize,
    restrictions: usize,
) -> bool {
    match source {
        Some(source) if !source.is_empty() => source == SOURCE_CUSTOMIZATION,
        _ => restrictions > 0 && index < customizations,
    }
}

struct Prepared<'a> {
    target: &'a BundleTarget,
    customization: bool,
}

impl TargetingBundle {
    /// Validates every selector, naming the offending field.
    pub fn validate(&self) -> Result<(), TargetError> {
        for (i, t) in self.targets.iter().enumerate() {
            t.matcher().validate(&format!("targets[{i}]"))?;
        }
        for (i, t) in self.target_restrictions.iter().enumerate() {
            t.matcher().validate(&format!("targetRestrictions[{i}]"))?;
        }
        Ok(())
    }

    fn prepared(&self) -> Vec<Prepared<'_>> {
        let restrictions = self.target_restrictions.len();
        let customizations = self.targets.len().saturating_sub(restrictions);
        self.targets
            .iter()
            .enumerate()
            .map(|(i, target)| Prepared {
                target,
                customization: is_customization(None, i, customizations, restrictions),
            })
            .collect()
    }

    fn restricted(&self, cluster: &IndexedCluster) -> bool {
        !self.target_restrictions.is_empty()
            && !self
                .target_restrictions
                .iter()
                .any(|r| r.matcher().matches(cluster))
    }

    /// Whether the bundle targets the cluster at all (Fleet's `Match`), ignoring `doNotDeploy`.
    pub fn matching_target(&self, cluster: &IndexedCluster) -> Option<&BundleTarget> {
        Self::first_match(&self.prepared(), self.restricted(cluster), cluster)
    }

    fn first_match<'b>(
        prepared: &[Prepared<'b>],
        restricted: bool,
        cluster: &IndexedCluster,
    ) -> Option<&'b BundleTarget> {
        if restricted {
            return None;
        }
        prepared
            .iter()
            .find(|p| !p.customization && p.target.matcher().matches(cluster))
            .map(|p| p.target)
    }
}

/// What targeting decides for one cluster.
#[derive(Debug, Clone, PartialEq)]
pub enum ClusterOutcome {
    /// No target matches (or a restriction excludes it).
    NotTargeted,
    /// A target matches but `doNotDeploy` applies.
    Skipped(String),
    /// The cluster gets a BundleDeployment.
    Targeted(Box<Target>),
}

/// Runs targeting for `bundle` over the clusters of `namespaces` in `index`.
pub fn compute_targets(
    index: &ClusterIndex,
    bundle: &TargetingBundle,
    namespaces: &[String],
    context: &TargetingContext,
) -> Result<Targeting, TargetError> {
    bundle.validate()?;
    let prepared = bundle.prepared();
    let mut result = Targeting::default();
    for namespace in namespaces {
        for cluster in index.clusters_in(namespace) {
            match outcome(bundle, &prepared, cluster, context)? {
                ClusterOutcome::NotTargeted => {}
                ClusterOutcome::Skipped(reason) => result.skipped.push(Skipped {
                    cluster: cluster.cluster.key(),
                    reason,
                }),
                ClusterOutcome::Targeted(target) => result.targets.push(*target),
            }
        }
    }
    let by_name = |k: &ClusterKey| (k.name.clone(), k.namespace.clone());
    result.targets.sort_by_key(|t| by_name(&t.cluster));
    result.skipped.sort_by_key(|s| by_name(&s.cluster));
    Ok(result)
}

/// Targeting for one cluster (`NotTargeted` when it is not in `index` or not in `namespaces`).
pub fn target_cluster(
    index: &ClusterIndex,
    bundle: &TargetingBundle,
    namespaces: &[String],
    cluster: &ClusterKey,
    context: &TargetingContext,
) -> Result<ClusterOutcome, TargetError> {
    bundle.validate()?;
    match index.get(cluster) {
        Some(c) if namespaces.contains(&cluster.namespace) => {
            outcome(bundle, &bundle.prepared(), c, context)
        }
        _ => Ok(ClusterOutcome::NotTargeted),
    }
}

/// How each of `bundles` (each with its key and candidate namespaces) treats `cluster` in
/// `index`: bundles whose namespaces do not hold the cluster are left out. Compared before and
/// after a cluster change by [`changed_bundles`].
pub fn cluster_outcomes<'a, K: Ord + Clone + 'a>(
    index: &ClusterIndex,
    bundles: impl IntoIterator<Item = (&'a K, &'a TargetingBundle, Vec<String>)>,
    cluster: &ClusterKey,
    context: &TargetingContext,
) -> BTreeMap<K, Result<ClusterOutcome, TargetError>> {
    bundles
        .into_iter()
        .filter(|(_, _, namespaces)| namespaces.contains(&cluster.namespace))
        .map(|(key, bundle, namespaces)| {
            let outcome = target_cluster(index, bundle, &namespaces, cluster, context);
            (key.clone(), outcome)
        })
        .collect()
}

/// The bundles whose outcome for a cluster differs between `before` and `after` (both from
/// [`cluster_outcomes`]); with `all_targeted`, also every bundle that targets the cluster after
/// (its BundleDeployments move, as when the cluster gets a new namespace). Sorted by key.
pub fn changed_bundles<K: Ord + Clone>(
    before: &BTreeMap<K, Result<ClusterOutcome, TargetError>>,
    after: &BTreeMap<K, Result<ClusterOutcome, TargetError>>,
    all_targeted: bool,
) -> Vec<K> {
    let keys: BTreeSet<&K> = before.keys().chain(after.keys()).collect();
    keys.into_iter()
        .filter(|key| {
            let new = after.get(*key);
            before.get(*key) != new
                || (all_targeted && matches!(new, Some(Ok(ClusterOutcome::Targeted(_)))))
        })
        .cloned()
        .collect()
}

/// Which of `bundles` (each with its candidate namespaces) must be re-targeted after `cluster`
/// changed from its state in `before` to its state in `after` (added, removed, relabelled, new
/// groups, new template values): those whose outcome for that cluster differs. Indices into
/// `bundles`, ascending.
pub fn affected_bundles(
    before: &ClusterIndex,
    after: &ClusterIndex,
    cluster: &ClusterKey,
    bundles: &[(TargetingBundle, Vec<String>)],
    context: &TargetingContext,
) -> Vec<usize> {
    let keys: Vec<usize> = (0..bundles.len()).collect();
    let outcomes = |index| {
        let entries = keys
            .iter()
            .zip(bundles)
            .map(|(i, (bundle, namespaces))| (i, bundle, namespaces.clone()));
        cluster_outcomes(index, entries, cluster, context)
    };
    changed_bundles(&outcomes(before), &outcomes(after), false)
}

fn outcome(
    bundle: &TargetingBundle,
    prepared: &[Prepared<'_>],
    cluster: &IndexedCluster,
    context: &TargetingContext,
) -> Result<ClusterOutcome, TargetError> {
    let Some(target) = TargetingBundle::first_match(prepared, bundle.restricted(cluster), cluster)
    else {
        return Ok(ClusterOutcome::NotTargeted);
    };
    if target.do_not_deploy {
        return Ok(ClusterOutcome::Skipped(format!(
            "doNotDeploy on target {:?}",
            target.name
        )));
    }
    let matching: Vec<&BundleTarget> = prepared
        .iter()
        .filter(|p| p.customization && p.target.matcher().matches(cluster))
        .map(|p| p.target)
        .collect();
    let chosen: &[&BundleTarget] = match bundle.target_customization_mode {
        CustomizationMode::FirstMatch => &matching[..matching.len().min(1)],
        CustomizationMode::AllMatches => &matching,
    };
    if let Some(blocker) = chosen.iter().find(|c| c.do_not_deploy) {
        return Ok(ClusterOutcome::Skipped(format!(
            "doNotDeploy on targetCustomization {:?}",
            blocker.name
        )));
    }
    let target_options = match bundle.target_customization_mode {
        CustomizationMode::FirstMatch => chosen
            .first()
            .map_or_else(|| target.options.clone(), |c| c.options.clone()),
        CustomizationMode::AllMatches => chosen.iter().fold(target.options.clone(), |acc, c| {
            merge_options(&acc, &c.options)
        }),
    };
    let mut options = merge_options(&bundle.options, &target_options);
    if let Some(selector) = &context.allowed_target_namespace_selector {
        options.allowed_target_namespace_selector = Some(selector.clone());
    }
    if let Some(create) = context.create_namespace {
        options.create_namespace = Some(create);
    }
    preprocess_helm_values(&mut options, &cluster.cluster)?;
    Ok(ClusterOutcome::Targeted(Box::new(Target {
        cluster: cluster.cluster.key(),
        target_name: target.name.clone(),
        customizations: chosen.iter().map(|c| c.name.clone()).collect(),
        options,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ClusterGroupInfo, ClusterInfo};
    use crate::selector::SelectorExt;
    use serde_json::{Value, json};

    const NS: &str = "fleet-default";

    fn index() -> ClusterIndex {
        ClusterIndex::new(
            [
                ClusterInfo::new(NS, "one", [("env", "dev")]),
                ClusterInfo::new(NS, "two", [("env", "test")]),
                ClusterInfo::new(NS, "three", [("env", "prod")]),
                ClusterInfo::new("elsewhere", "four", [("env", "prod")]),
            ],
            [
                ClusterGroupInfo {
                    name: "default".into(),
                    namespace: NS.into(),
                    labels: Labels::new(),
                    selector: Some(LabelSelector::from_labels([("env", "dev")])),
                },
                ClusterGroupInfo {
                    name: "nonprod".into(),
                    namespace: NS.into(),
                    labels: [("stage".to_string(), "pre".to_string())].into(),
                    selector: Some(LabelSelector {
                        match_labels: Labels::new(),
                        match_expressions: vec![crate::selector::LabelSelectorRequirement {
                            key: "env".into(),
                            operator: "In".into(),
                            values: vec!["dev".into(), "test".into()],
                        }],
                    }),
                },
            ],
        )
    }

    /// Options as their JSON, without the `ignore: {}` Go always writes.
    fn json_of(options: &BundleDeploymentOptions) -> Value {
        let mut value = serde_json::to_value(options).unwrap();
        value.as_object_mut().unwrap().remove("ignore");
        value
    }

    fn target(v: Value) -> BundleTarget {
        serde_json::from_value(v).unwrap()
    }

    fn git(v: Value) -> GitTarget {
        serde_json::from_value(v).unwrap()
    }

    /// A bundle as Fleet's reader lays it out: customizations first, then GitRepo targets, which
    /// are also the restrictions.
    fn bundle(customizations: Vec<Value>, git_targets: Vec<Value>) -> TargetingBundle {
        let restrictions: Vec<GitTarget> = git_targets.iter().cloned().map(git).collect();
        let mut targets: Vec<BundleTarget> = customizations.into_iter().map(target).collect();
        targets.extend(git_targets.into_iter().map(target));
        TargetingBundle {
            name: "b".into(),
            namespace: NS.into(),
            options: serde_json::from_value(json!({"helm": {"values": {"base": true}}})).unwrap(),
            targets,
            target_restrictions: restrictions,
            ..TargetingBundle::default()
        }
    }

    fn run(b: &TargetingBundle) -> Targeting {
        compute_targets(&index(), b, &[NS.to_string()], &TargetingContext::default()).unwrap()
    }

    fn names(t: &Targeting) -> Vec<&str> {
        t.targets.iter().map(|t| t.cluster.name.as_str()).collect()
    }

    fn all_clusters() -> Value {
        json!({"name": "all", "clusterSelector": {}})
    }

    #[test]
    fn bundle_targets_scenarios() {
        let dev = json!({"name": "dev", "clusterSelector": {"matchLabels": {"env": "dev"}}, "helm": {"values": {"x": "dev"}}});
        let no_prod = json!({"name": "no-prod", "clusterSelector": {"matchLabels": {"env": "prod"}}, "doNotDeploy": true});
        let everything =
            json!({"name": "everything", "clusterSelector": {}, "helm": {"values": {"x": "all"}}});
        let cases: Vec<(&str, TargetingBundle, Vec<&str>)> = vec![
            (
                "GitRepo targets all: every cluster in the namespace",
                bundle(vec![], vec![all_clusters()]),
                vec!["one", "three", "two"],
            ),
            (
                "customizations for all clusters but GitRepo targets only cluster one",
                bundle(
                    vec![everything.clone()],
                    vec![json!({"name": "only-one", "clusterName": "one"})],
                ),
                vec!["one"],
            ),
            (
                "default target: ClusterGroup default",
                bundle(
                    vec![],
                    vec![serde_json::to_value(default_git_target()).unwrap()],
                ),
                vec!["one"],
            ),
            (
                "clusterGroup target",
                bundle(vec![], vec![json!({"clusterGroup": "nonprod"})]),
                vec!["one", "two"],
            ),
            (
                "clusterGroupSelector target",
                bundle(
                    vec![],
                    vec![json!({"clusterGroupSelector": {"matchLabels": {"stage": "pre"}}})],
                ),
                vec!["one", "two"],
            ),
            (
                "doNotDeploy customization skips prod (FirstMatch)",
                bundle(vec![no_prod.clone(), dev.clone()], vec![all_clusters()]),
                vec!["one", "two"],
            ),
            (
                "a broad customization before doNotDeploy wins (FirstMatch)",
                bundle(
                    vec![everything.clone(), no_prod.clone()],
                    vec![all_clusters()],
                ),
                vec!["one", "three", "two"],
            ),
            (
                "doNotDeploy on the GitRepo target",
                bundle(
                    vec![],
                    vec![
                        json!({"name": "p", "clusterSelector": {"matchLabels": {"env": "prod"}}, "doNotDeploy": true}),
                        all_clusters(),
                    ],
                ),
                vec!["one", "two"],
            ),
            (
                "a target without criteria matches nothing",
                bundle(vec![], vec![json!({"name": "empty"})]),
                vec![],
            ),
        ];
        for (name, b, want) in cases {
            assert_eq!(names(&run(&b)), want, "{name}");
        }
    }

    /// Fleet's `TestDetermineIsCustomization_Hybrid`.
    #[test]
    fn determine_is_customization_table() {
        let cases = [
            (
                "explicit customization source",
                Some("customization"),
                0,
                1,
                true,
            ),
            ("explicit gitrepo source", Some("gitrepo"), 1, 1, false),
            ("position-based customization", Some(""), 0, 1, true),
            ("position-based gitrepo target", None, 1, 1, false),
            (
                "explicit source overrides position",
                Some("gitrepo"),
                0,
                1,
                false,
            ),
            ("no customizations", None, 0, 0, false),
            ("multiple customizations", None, 2, 3, true),
            ("first gitrepo target after three", None, 3, 3, false),
        ];
        for (name, source, index, customizations, want) in cases {
            assert_eq!(
                is_customization(source, index, customizations, 1),
                want,
                "{name}"
            );
        }
        assert!(
            !is_customization(None, 0, 1, 0),
            "no restrictions: never a customization"
        );
    }

    /// Fleet's `TestMatchAllTargetCustomizations_NoGroups` and `_DoNotDeployIncluded`.
    #[test]
    fn all_matches_customization_table() {
        let edge = json!({"name": "edge", "clusterSelector": {"matchLabels": {"edge": "true"}}});
        let extra = json!({"name": "extra", "clusterSelector": {"matchLabels": {"extra": "true"}}});
        let all = json!({"name": "all", "clusterSelector": {}});
        type Case = (
            &'static str,
            Vec<Value>,
            Vec<(&'static str, &'static str)>,
            Vec<&'static str>,
        );
        let cases: Vec<Case> = vec![
            (
                "no customizations match",
                vec![edge.clone()],
                vec![],
                vec![],
            ),
            (
                "one matches",
                vec![edge.clone(), extra.clone()],
                vec![("edge", "true")],
                vec!["edge"],
            ),
            (
                "both match",
                vec![edge.clone(), extra.clone()],
                vec![("edge", "true"), ("extra", "true")],
                vec!["edge", "extra"],
            ),
            (
                "order is preserved",
                vec![extra.clone(), edge.clone()],
                vec![("edge", "true"), ("extra", "true")],
                vec!["extra", "edge"],
            ),
            (
                "catch-all matches everything",
                vec![edge.clone(), all],
                vec![("edge", "true")],
                vec!["edge", "all"],
            ),
        ];
        for (name, customizations, labels, want) in cases {
            let index = ClusterIndex::new([ClusterInfo::new(NS, "local", labels)], []);
            let mut b = bundle(customizations, vec![all_clusters()]);
            b.target_customization_mode = CustomizationMode::AllMatches;
            let t =
                compute_targets(&index, &b, &[NS.into()], &TargetingContext::default()).unwrap();
            assert_eq!(t.targets[0].customizations, want, "{name}");
        }
    }

    /// Fleet's `TestCustomizationWithSameSelectorsAsGitRepoTarget`: a customization identical to
    /// the GitRepo target is still a customization (by position).
    #[test]
    fn customization_with_the_same_selector_as_the_gitrepo_target() {
        let prod =
            json!({"name": "production", "clusterSelector": {"matchLabels": {"env": "prod"}}});
        let mut custom = prod.clone();
        custom["helm"] = json!({"values": {"custom": true}});
        let b = bundle(vec![custom], vec![prod]);
        let t = run(&b);
        assert_eq!(names(&t), ["three"]);
        assert_eq!(t.targets[0].customizations, ["production"]);
        assert_eq!(
            json_of(&t.targets[0].options)["helm"]["values"]["custom"],
            json!(true)
        );
    }

    #[test]
    fn a_label_change_retargets_only_affected_bundles() {
        let before = index();
        let mut after = before.clone();
        after.upsert_cluster(ClusterInfo::new(NS, "one", [("env", "prod")]));
        let only_dev = bundle(
            vec![],
            vec![json!({"clusterSelector": {"matchLabels": {"env": "dev"}}})],
        );
        let everyone = bundle(vec![], vec![all_clusters()]);
        let templated = bundle(
            vec![],
            vec![
                json!({"clusterSelector": {}, "helm": {"values": {"env": "${ .ClusterLabels.env }"}}}),
            ],
        );
        let only_test = bundle(
            vec![],
            vec![json!({"clusterSelector": {"matchLabels": {"env": "test"}}})],
        );
        let ns = vec![NS.to_string()];
        let bundles = vec![
            (only_dev, ns.clone()),
            (everyone, ns.clone()),
            (templated, ns.clone()),
            (only_test, ns),
        ];
        let affected = affected_bundles(
            &before,
            &after,
            &ClusterKey::new(NS, "one"),
            &bundles,
            &TargetingContext::default(),
        );
        // one leaves the dev bundle and its templated values change; the others are unaffected.
        assert_eq!(affected, [0, 2]);
    }

    #[test]
    fn changed_bundles_compare_outcomes_and_optionally_every_targeting_bundle() {
        let everyone = bundle(vec![], vec![all_clusters()]);
        let only_dev = bundle(
            vec![],
            vec![json!({"clusterSelector": {"matchLabels": {"env": "dev"}}})],
        );
        let elsewhere = TargetingBundle {
            namespace: "elsewhere".into(),
            ..everyone.clone()
        };
        let keys = ["everyone", "only-dev", "elsewhere"];
        let bundles = [&everyone, &only_dev, &elsewhere];
        let cluster = ClusterKey::new(NS, "two");
        let outcomes = |index: &ClusterIndex| {
            let entries = keys
                .iter()
                .zip(bundles)
                .map(|(key, bundle)| (key, bundle, vec![bundle.namespace.clone()]));
            cluster_outcomes(index, entries, &cluster, &TargetingContext::default())
        };
        let before = outcomes(&index());
        // A bundle of another namespace has no outcome for the cluster.
        assert_eq!(
            before.keys().collect::<Vec<_>>(),
            [&"everyone", &"only-dev"]
        );
        assert!(changed_bundles(&before, &before, false).is_empty());
        // Every bundle that targets the cluster, when asked (the cluster moved namespace).
        assert_eq!(changed_bundles(&before, &before, true), ["everyone"]);
        let mut relabelled = index();
        relabelled.upsert_cluster(ClusterInfo::new(NS, "two", [("env", "dev")]));
        assert_eq!(
            changed_bundles(&before, &outcomes(&relabelled), false),
            ["only-dev"]
        );
        let mut removed = index();
        removed.remove_cluster(&cluster);
        assert_eq!(
            changed_bundles(&before, &outcomes(&removed), false),
            ["everyone"]
        );
    }

    #[test]
    fn first_match_options_replace_target_options() {
        let b = bundle(
            vec![
                json!({"name": "dev", "clusterSelector": {"matchLabels": {"env": "dev"}}, "helm": {"values": {"x": "dev"}}}),
                json!({"name": "all", "clusterSelector": {}, "helm": {"values": {"y": "all"}}}),
            ],
            vec![
                json!({"name": "t", "clusterSelector": {}, "helm": {"values": {"fromTarget": 1}}}),
            ],
        );
        let t = run(&b);
        let one = &t.targets[0];
        assert_eq!(one.customizations, ["dev"]);
        assert_eq!(
            json_of(&one.options),
            json!({"helm": {"values": {"base": true, "x": "dev"}}})
        );
        let three = t
            .targets
            .iter()
            .find(|t| t.cluster.name == "three")
            .unwrap();
        assert_eq!(
            json_of(&three.options),
            json!({"helm": {"values": {"base": true, "y": "all"}}})
        );
    }

    #[test]
    fn all_matches_merges_in_order_and_any_do_not_deploy_skips() {
        let mut b = bundle(
            vec![
                json!({"name": "all", "clusterSelector": {}, "helm": {"values": {"x": "all", "y": "all"}}}),
                json!({"name": "dev", "clusterSelector": {"matchLabels": {"env": "dev"}}, "helm": {"values": {"x": "dev"}}}),
                json!({"name": "no-test", "clusterSelector": {"matchLabels": {"env": "test"}}, "doNotDeploy": true}),
            ],
            vec![all_clusters()],
        );
        b.target_customization_mode = CustomizationMode::AllMatches;
        let t = run(&b);
        assert_eq!(names(&t), ["one", "three"]);
        assert_eq!(t.targets[0].customizations, ["all", "dev"]);
        assert_eq!(
            json_of(&t.targets[0].options),
            json!({"helm": {"values": {"base": true, "x": "dev", "y": "all"}}})
        );
        assert_eq!(
            t.skipped,
            [Skipped {
                cluster: ClusterKey::new(NS, "two"),
                reason: "doNotDeploy on targetCustomization \"no-test\"".into()
            }]
        );
    }

    #[test]
    fn without_restrictions_every_target_is_a_target_and_first_match_wins() {
        let b = TargetingBundle {
            name: "cli".into(),
            namespace: NS.into(),
            targets: vec![
                target(
                    json!({"name": "dev", "clusterSelector": {"matchLabels": {"env": "dev"}}, "namespace": "dev-ns"}),
                ),
                target(json!({"name": "all", "clusterSelector": {}})),
            ],
            ..TargetingBundle::default()
        };
        let t = run(&b);
        assert_eq!(names(&t), ["one", "three", "two"]);
        assert_eq!(t.targets[0].target_name, "dev");
        assert_eq!(t.targets[0].options.target_namespace, "dev-ns");
        assert_eq!(t.targets[1].target_name, "all");
    }

    #[test]
    fn context_and_templating_apply() {
        let b = bundle(
            vec![],
            vec![
                json!({"name": "t", "clusterSelector": {}, "helm": {"values": {"env": "${ .ClusterLabels.env }"}}}),
            ],
        );
        let t = compute_targets(
            &index(),
            &b,
            &[NS.to_string(), "elsewhere".to_string()],
            &TargetingContext {
                allowed_target_namespace_selector: Some(LabelSelector::from_labels([("a", "b")])),
                create_namespace: Some(false),
            },
        )
        .unwrap();
        assert_eq!(names(&t), ["four", "one", "three", "two"]);
        assert_eq!(
            json_of(&t.targets[0].options),
            json!({
                "helm": {"values": {"base": true, "env": "prod"}},
                "allowedTargetNamespaceSelector": {"matchLabels": {"a": "b"}},
                "createNamespace": false
            })
        );
    }

    #[test]
    fn invalid_selectors_are_reported_with_their_path() {
        let b = bundle(
            vec![],
            vec![
                json!({"clusterSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}}),
            ],
        );
        let err =
            compute_targets(&index(), &b, &[NS.into()], &TargetingContext::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "targets[0].clusterSelector.matchExpressions[0]: operator In needs at least one value"
        );
    }
}
