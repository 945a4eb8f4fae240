//! Fleet's cluster matcher: the `clusterName`, `clusterGroup`, `clusterGroupSelector` and
//! `clusterSelector` criteria of a GitRepo target, bundle target, target customization or
//! rollout partition. Criteria are ANDed; a matcher without criteria matches nothing. A cluster
//! is tried once per group it belongs to (or once with no group), and matches if any try passes.

use serde::{Deserialize, Serialize};

use crate::error::TargetError;
use crate::index::{GroupMembership, IndexedCluster};
use crate::selector::{LabelSelector, Labels};

/// The label Rancher puts on a Cluster with its display name; `clusterName` also matches it.
pub const DISPLAY_NAME_LABEL: &str = "management.cattle.io/cluster-display-name";

/// The cluster-selecting part of a target (Fleet's `GitTarget` fields without the name).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterMatcher {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_group: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_group_selector: Option<LabelSelector>,
}

impl ClusterMatcher {
    /// Validates both selectors; `field` prefixes the error path.
    pub fn validate(&self, field: &str) -> Result<(), TargetError> {
        if let Some(s) = &self.cluster_selector {
            s.validate(&format!("{field}.clusterSelector"))?;
        }
        if let Some(s) = &self.cluster_group_selector {
            s.validate(&format!("{field}.clusterGroupSelector"))?;
        }
        Ok(())
    }

    /// True when no criterion is set (such a matcher matches nothing).
    pub fn has_no_criteria(&self) -> bool {
        non_empty(&self.cluster_name).is_none()
            && non_empty(&self.cluster_group).is_none()
            && self.cluster_selector.is_none()
            && self.cluster_group_selector.is_none()
    }

    /// Whether the cluster matches, trying each of its groups (or no group).
    pub fn matches(&self, cluster: &IndexedCluster) -> bool {
        if self.has_no_criteria() {
            return false;
        }
        if cluster.groups.is_empty() {
            return self.matches_with_group(&cluster.cluster.name, &cluster.cluster.labels, None);
        }
        cluster.groups.iter().any(|g| {
            self.matches_with_group(&cluster.cluster.name, &cluster.cluster.labels, Some(g))
        })
    }

    fn matches_with_group(
        &self,
        cluster_name: &str,
        cluster_labels: &Labels,
        group: Option<&GroupMembership>,
    ) -> bool {
        let empty = Labels::new();
        let (group_name, group_labels) =
            group.map_or(("", &empty), |g| (g.name.as_str(), &g.labels));
        if let Some(name) = non_empty(&self.cluster_name)
            && name != cluster_name
            && cluster_labels.get(DISPLAY_NAME_LABEL).map(String::as_str) != Some(name)
        {
            return false;
        }
        if let Some(wanted) = non_empty(&self.cluster_group)
            && wanted != group_name
        {
            return false;
        }
        if let Some(sel) = &self.cluster_group_selector
            && !sel.matches(group_labels)
        {
            return false;
        }
        if let Some(sel) = &self.cluster_selector
            && !sel.matches(cluster_labels)
        {
            return false;
        }
        true
    }
}

fn non_empty(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::ClusterIndex;
    use crate::model::{ClusterGroupInfo, ClusterInfo, ClusterKey};

    fn index() -> ClusterIndex {
        let mut renamed = ClusterInfo::new("ns", "c-abc12", [("env", "prod")]);
        renamed
            .labels
            .insert(DISPLAY_NAME_LABEL.into(), "downstream-1".into());
        ClusterIndex::new(
            [renamed, ClusterInfo::new("ns", "lonely", [("env", "dev")])],
            [ClusterGroupInfo {
                name: "prod-group".into(),
                namespace: "ns".into(),
                labels: [("tier".to_string(), "gold".to_string())].into(),
                selector: Some(LabelSelector::from_labels([("env", "prod")])),
            }],
        )
    }

    #[test]
    fn clustermatcher_table() {
        let index = index();
        let prod = index.get(&ClusterKey::new("ns", "c-abc12")).unwrap();
        let lonely = index.get(&ClusterKey::new("ns", "lonely")).unwrap();
        let m = |name: Option<&str>,
                 group: Option<&str>,
                 gsel: Option<LabelSelector>,
                 csel: Option<LabelSelector>| {
            ClusterMatcher {
                cluster_name: name.map(String::from),
                cluster_group: group.map(String::from),
                cluster_group_selector: gsel,
                cluster_selector: csel,
            }
        };
        let gold = || Some(LabelSelector::from_labels([("tier", "gold")]));
        let prod_sel = || Some(LabelSelector::from_labels([("env", "prod")]));
        let cases = [
            (
                "no criteria matches nothing",
                m(None, None, None, None),
                prod,
                false,
            ),
            (
                "empty strings are no criteria",
                m(Some(""), Some(""), None, None),
                prod,
                false,
            ),
            ("name", m(Some("c-abc12"), None, None, None), prod, true),
            (
                "display name",
                m(Some("downstream-1"), None, None, None),
                prod,
                true,
            ),
            ("other name", m(Some("x"), None, None, None), prod, false),
            ("group", m(None, Some("prod-group"), None, None), prod, true),
            (
                "group of a cluster with none",
                m(None, Some("prod-group"), None, None),
                lonely,
                false,
            ),
            ("group selector", m(None, None, gold(), None), prod, true),
            (
                "group selector, no group",
                m(None, None, gold(), None),
                lonely,
                false,
            ),
            (
                "empty group selector, no group",
                m(None, None, Some(LabelSelector::default()), None),
                lonely,
                true,
            ),
            (
                "cluster selector",
                m(None, None, None, prod_sel()),
                prod,
                true,
            ),
            (
                "cluster selector miss",
                m(None, None, None, prod_sel()),
                lonely,
                false,
            ),
            (
                "criteria are ANDed",
                m(
                    Some("c-abc12"),
                    None,
                    None,
                    Some(LabelSelector::from_labels([("env", "dev")])),
                ),
                prod,
                false,
            ),
            (
                "all criteria",
                m(Some("c-abc12"), Some("prod-group"), gold(), prod_sel()),
                prod,
                true,
            ),
        ];
        for (name, matcher, cluster, want) in cases {
            assert_eq!(matcher.matches(cluster), want, "{name}");
        }
    }
}
