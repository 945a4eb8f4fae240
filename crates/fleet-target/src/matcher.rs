//! Fleet's cluster matcher: the `clusterName`, `clusterGroup`, `clusterGroupSelector` and
//! `clusterSelector` criteria of a GitRepo target, bundle target, target customization or
//! rollout partition. Criteria are ANDed; a matcher without criteria matches nothing. A cluster
//! is tried once per group it belongs to (or once with no group), and matches if any try passes.

use fleet_api::{BundleTarget, GitTarget, Partition};

use crate::error::TargetError;
use crate::index::{GroupMembership, IndexedCluster};
use crate::selector::{LabelSelector, Labels, SelectorExt};

/// The label Rancher puts on a Cluster with its display name; `clusterName` also matches it.
pub const DISPLAY_NAME_LABEL: &str = "management.cattle.io/cluster-display-name";

/// The cluster-selecting fields of a GitRepo target, bundle target, target customization or
/// rollout partition (fleet-api's types), borrowed. Empty strings are no criteria.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClusterMatcher<'a> {
    pub cluster_name: &'a str,
    pub cluster_selector: Option<&'a LabelSelector>,
    pub cluster_group: &'a str,
    pub cluster_group_selector: Option<&'a LabelSelector>,
}

/// Anything with Fleet's four cluster criteria.
pub trait Criteria {
    fn matcher(&self) -> ClusterMatcher<'_>;
}

macro_rules! criteria {
    ($($ty:ty),*) => {$(
        impl Criteria for $ty {
            fn matcher(&self) -> ClusterMatcher<'_> {
                ClusterMatcher {
                    cluster_name: &self.cluster_name,
                    cluster_selector: self.cluster_selector.as_ref(),
                    cluster_group: &self.cluster_group,
                    cluster_group_selector: self.cluster_group_selector.as_ref(),
                }
            }
        }
    )*};
}

criteria!(GitTarget, BundleTarget, Partition);

impl ClusterMatcher<'_> {
    /// Validates both selectors; `field` prefixes the error path.
    pub fn validate(&self, field: &str) -> Result<(), TargetError> {
        if let Some(s) = self.cluster_selector {
            s.validate(&format!("{field}.clusterSelector"))?;
        }
        if let Some(s) = self.cluster_group_selector {
            s.validate(&format!("{field}.clusterGroupSelector"))?;
        }
        Ok(())
    }

    /// True when no criterion is set (such a matcher matches nothing).
    pub fn has_no_criteria(&self) -> bool {
        self.cluster_name.is_empty()
            && self.cluster_group.is_empty()
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
        let name = self.cluster_name;
        if !name.is_empty()
            && name != cluster_name
            && cluster_labels.get(DISPLAY_NAME_LABEL).map(String::as_str) != Some(name)
        {
            return false;
        }
        if !self.cluster_group.is_empty() && self.cluster_group != group_name {
            return false;
        }
        if let Some(sel) = self.cluster_group_selector
            && !sel.matches(group_labels)
        {
            return false;
        }
        if let Some(sel) = self.cluster_selector
            && !sel.matches(cluster_labels)
        {
            return false;
        }
        true
    }
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
            GitTarget {
                cluster_name: name.unwrap_or_default().into(),
                cluster_group: group.unwrap_or_default().into(),
                cluster_group_selector: gsel,
                cluster_selector: csel,
                ..GitTarget::default()
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
            assert_eq!(matcher.matcher().matches(cluster), want, "{name}");
        }
    }
}
