//! Which target of a bundle a cluster described on the command line matches, and the options it gets — what
//! `fleet test` needs. Matching and option merging are `fleet-target`'s pipeline (one implementation for the
//! controller and the CLI); this module only describes the one test cluster and converts types.

use std::collections::BTreeMap;

use fleet_api::{Bundle, BundleDeploymentOptions, BundleTarget};
use fleet_target::index::ClusterIndex;
use fleet_target::model::{ClusterGroupInfo, ClusterInfo};
use fleet_target::targeting::{self, CustomizationMode, TargetingBundle, TargetingContext};

/// The imaginary cluster `fleet test` matches against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestCluster {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    /// The cluster's group (`-g`, Fleet's default `default`).
    pub group: String,
    pub group_labels: BTreeMap<String, String>,
}

/// The namespace the test cluster and its group live in.
const TEST_NAMESPACE: &str = "fleet-local";

/// A successful match: the matched target's name, the customizations applied, the merged options.
#[derive(Debug, Clone, PartialEq)]
pub struct Matched {
    pub target: String,
    pub customizations: Vec<String>,
    pub options: BundleDeploymentOptions,
}

impl Matched {
    /// What `# Matched:` shows: the applied customizations (comma-separated), else the matched target.
    pub fn display_name(&self) -> String {
        if self.customizations.is_empty() {
            self.target.clone()
        } else {
            self.customizations.join(",")
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MatchError {
    #[error("no target named {0:?} in the bundle")]
    UnknownTarget(String),
    #[error("targeting: {0}")]
    Targeting(#[from] fleet_target::TargetError),
    #[error("the cluster matches target {target:?}, but {reason}")]
    DoNotDeploy { target: String, reason: String },
}

fn targeting_bundle(
    bundle: &Bundle,
    only_target: Option<&str>,
) -> Result<TargetingBundle, MatchError> {
    let targets: Vec<BundleTarget> = bundle
        .spec
        .targets
        .iter()
        .filter(|target| only_target.is_none_or(|name| name == target.name))
        .cloned()
        .collect();
    if let Some(name) = only_target
        && targets.is_empty()
    {
        return Err(MatchError::UnknownTarget(name.to_string()));
    }
    let restrictions = if only_target.is_some() {
        Vec::new()
    } else {
        bundle.spec.target_restrictions.clone()
    };
    Ok(TargetingBundle {
        name: bundle.metadata.name.clone().unwrap_or_default(),
        namespace: TEST_NAMESPACE.to_string(),
        labels: bundle
            .metadata
            .labels
            .clone()
            .unwrap_or_default()
            .into_iter()
            .collect(),
        options: bundle.spec.options.clone(),
        targets,
        target_restrictions: restrictions,
        target_customization_mode: if bundle.spec.target_customization_mode == "AllMatches" {
            CustomizationMode::AllMatches
        } else {
            CustomizationMode::FirstMatch
        },
    })
}

/// Matches `cluster` against the bundle's targets (or only the target named `only_target`). `Ok(None)` when
/// nothing matches.
pub fn match_cluster(
    bundle: &Bundle,
    cluster: &TestCluster,
    only_target: Option<&str>,
) -> Result<Option<Matched>, MatchError> {
    let targeting_bundle = targeting_bundle(bundle, only_target)?;
    let labels = cluster.labels.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    let info = ClusterInfo::new(TEST_NAMESPACE, &cluster.name, labels);
    let group = ClusterGroupInfo {
        name: cluster.group.clone(),
        namespace: TEST_NAMESPACE.to_string(),
        labels: cluster.group_labels.clone().into_iter().collect(),
        selector: Some(Default::default()),
    };
    let groups = if cluster.group.is_empty() {
        Vec::new()
    } else {
        vec![group]
    };
    let index = ClusterIndex::new([info], groups);
    let result = targeting::compute_targets(
        &index,
        &targeting_bundle,
        &[TEST_NAMESPACE.to_string()],
        &TargetingContext::default(),
    )?;
    if let Some(skipped) = result.skipped.first() {
        let target = index
            .get(&skipped.cluster)
            .and_then(|cluster| targeting_bundle.matching_target(cluster))
            .map(|t| t.name.clone())
            .unwrap_or_default();
        return Err(MatchError::DoNotDeploy {
            target,
            reason: skipped.reason.clone(),
        });
    }
    let Some(found) = result.targets.into_iter().next() else {
        return Ok(None);
    };
    Ok(Some(Matched {
        target: found.target_name,
        customizations: found.customizations,
        options: found.options,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_bundle::fleetyaml::FleetYaml;

    fn bundle(fleet_yaml: &str) -> Bundle {
        let mut parsed = FleetYaml::parse(fleet_yaml, "fleet.yaml").unwrap();
        let mut spec = parsed.spec.clone();
        spec.targets.append(&mut parsed.target_customizations);
        // As a GitRepo without targets: the default target, also as the only restriction.
        let default = fleet_bundle::TargetsSpec::gitrepo_default();
        spec.targets.extend(default.targets);
        spec.target_restrictions.extend(default.target_restrictions);
        Bundle::new("test", spec)
    }

    fn cluster(labels: &[(&str, &str)]) -> TestCluster {
        TestCluster {
            name: "c1".into(),
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            group: "default".into(),
            group_labels: BTreeMap::new(),
        }
    }

    const CUSTOMIZED: &str = "defaultNamespace: base\n\
        targetCustomizations:\n\
        - name: dev\n  clusterSelector: {matchLabels: {env: dev}}\n  defaultNamespace: dev-ns\n  yaml: {overlays: [dev]}\n\
        - name: all\n  clusterSelector: {}\n  yaml: {overlays: [all]}\n";

    #[test]
    fn first_match_uses_one_customization() {
        let b = bundle(CUSTOMIZED);
        let m = match_cluster(&b, &cluster(&[("env", "dev")]), None)
            .unwrap()
            .unwrap();
        assert_eq!(m.target, "default");
        assert_eq!(m.customizations, ["dev"]);
        assert_eq!(m.display_name(), "dev");
        assert_eq!(m.options.default_namespace, "dev-ns");
        assert_eq!(m.options.yaml.as_ref().unwrap().overlays, ["dev"]);
    }

    #[test]
    fn all_matches_merges_in_order() {
        let b = bundle(&format!(
            "targetCustomizationMode: AllMatches\n{CUSTOMIZED}"
        ));
        let m = match_cluster(&b, &cluster(&[("env", "dev")]), None)
            .unwrap()
            .unwrap();
        assert_eq!(m.options.yaml.as_ref().unwrap().overlays, ["dev", "all"]);
        assert_eq!(m.customizations, ["dev", "all"]);
        assert_eq!(m.display_name(), "dev,all");
    }

    #[test]
    fn default_target_matches_the_default_group_only() {
        let b = bundle("defaultNamespace: x\n");
        let m = match_cluster(&b, &cluster(&[]), None).unwrap().unwrap();
        assert_eq!(m.target, "default");
        assert_eq!(m.display_name(), "default");
        let mut other = cluster(&[]);
        other.group = "other".into();
        assert!(match_cluster(&b, &other, None).unwrap().is_none());
    }

    #[test]
    fn group_labels_and_do_not_deploy() {
        let b = bundle(
            "targetCustomizations:\n- name: skip\n  clusterGroupSelector: {matchLabels: {tier: edge}}\n  doNotDeploy: true\n",
        );
        let mut c = cluster(&[]);
        c.group_labels.insert("tier".into(), "edge".into());
        let err = match_cluster(&b, &c, None).unwrap_err();
        assert!(err.to_string().contains("doNotDeploy"), "{err}");
    }

    #[test]
    fn named_target() {
        let b = bundle(CUSTOMIZED);
        assert_eq!(
            match_cluster(&b, &cluster(&[]), Some("missing"))
                .unwrap_err()
                .to_string(),
            "no target named \"missing\" in the bundle"
        );
    }
}
