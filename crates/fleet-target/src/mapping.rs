//! BundleNamespaceMapping: which namespaces, besides its own, a bundle may target clusters in. A
//! mapping in the bundle's namespace applies when its `bundleSelector` matches the bundle's
//! labels; it then adds every namespace its `namespaceSelector` matches. A mapping missing either
//! selector matches nothing. The result is sorted and deduplicated.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::selector::{LabelSelector, Labels, SelectorExt};

/// A BundleNamespaceMapping (top-level selectors, no spec wrapper).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceMapping {
    pub name: String,
    pub namespace: String,
    #[serde(default)]
    pub bundle_selector: Option<LabelSelector>,
    #[serde(default)]
    pub namespace_selector: Option<LabelSelector>,
}

/// A namespace and its labels.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamespaceInfo {
    pub name: String,
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub labels: Labels,
}

/// Namespaces whose clusters the bundle may target: its own plus those mapped to it.
/// Mappings with invalid selectors are skipped (as Fleet skips them).
pub fn bundle_namespaces(
    bundle_namespace: &str,
    bundle_labels: &Labels,
    mappings: &[NamespaceMapping],
    namespaces: &[NamespaceInfo],
) -> Vec<String> {
    let mut result = BTreeSet::from([bundle_namespace.to_string()]);
    for mapping in mappings.iter().filter(|m| m.namespace == bundle_namespace) {
        let (Some(bundle_sel), Some(ns_sel)) =
            (&mapping.bundle_selector, &mapping.namespace_selector)
        else {
            continue;
        };
        if bundle_sel.validate("bundleSelector").is_err()
            || ns_sel.validate("namespaceSelector").is_err()
            || !bundle_sel.matches(bundle_labels)
        {
            continue;
        }
        result.extend(
            namespaces
                .iter()
                .filter(|ns| ns_sel.matches(&ns.labels))
                .map(|ns| ns.name.clone()),
        );
    }
    result.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(name: &str, labels: &[(&str, &str)]) -> NamespaceInfo {
        NamespaceInfo {
            name: name.into(),
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn mapping_table() {
        let namespaces = [
            ns("team-a", &[("tenant", "a")]),
            ns("team-b", &[("tenant", "b")]),
            ns("fleet-default", &[]),
        ];
        let mapping = |namespace: &str,
                       bundle: Option<LabelSelector>,
                       nss: Option<LabelSelector>| NamespaceMapping {
            name: "m".into(),
            namespace: namespace.into(),
            bundle_selector: bundle,
            namespace_selector: nss,
        };
        let shared: Labels = [("shared".to_string(), "yes".to_string())].into();
        let tenant_a = || Some(LabelSelector::from_labels([("tenant", "a")]));
        let shared_sel = || Some(LabelSelector::from_labels([("shared", "yes")]));
        let cases = [
            ("no mapping", vec![], vec!["fleet-default"]),
            (
                "mapping adds matching namespaces",
                vec![mapping("fleet-default", shared_sel(), tenant_a())],
                vec!["fleet-default", "team-a"],
            ),
            (
                "empty namespace selector adds all",
                vec![mapping(
                    "fleet-default",
                    Some(LabelSelector::default()),
                    Some(LabelSelector::default()),
                )],
                vec!["fleet-default", "team-a", "team-b"],
            ),
            (
                "bundle selector mismatch",
                vec![mapping(
                    "fleet-default",
                    Some(LabelSelector::from_labels([("shared", "no")])),
                    tenant_a(),
                )],
                vec!["fleet-default"],
            ),
            (
                "nil selector matches nothing",
                vec![mapping("fleet-default", None, tenant_a())],
                vec!["fleet-default"],
            ),
            (
                "mappings of other namespaces do not apply",
                vec![mapping("team-b", shared_sel(), tenant_a())],
                vec!["fleet-default"],
            ),
        ];
        for (name, mappings, want) in cases {
            assert_eq!(
                bundle_namespaces("fleet-default", &shared, &mappings, &namespaces),
                want,
                "{name}"
            );
        }
    }
}
