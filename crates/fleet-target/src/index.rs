//! The in-memory cluster index: clusters keyed by namespace/name, each with the ClusterGroups of
//! its own namespace whose selector matches its labels (Fleet's group membership). Iteration is
//! always in key order, so everything built on the index is deterministic.

use std::collections::BTreeMap;

use crate::model::{ClusterGroupInfo, ClusterInfo, ClusterKey, FleetSnapshot};
use crate::selector::{Labels, SelectorExt};

/// A group the cluster belongs to: its name and labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMembership {
    pub name: String,
    pub labels: Labels,
}

/// A cluster with its group memberships (sorted by group name).
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedCluster {
    pub cluster: ClusterInfo,
    pub groups: Vec<GroupMembership>,
}

/// Clusters and groups, indexed.
#[derive(Debug, Clone, Default)]
pub struct ClusterIndex {
    clusters: BTreeMap<ClusterKey, IndexedCluster>,
    groups: BTreeMap<ClusterKey, ClusterGroupInfo>,
}

impl ClusterIndex {
    /// Builds the index. A later cluster or group with the same namespace/name replaces an earlier one.
    pub fn new(
        clusters: impl IntoIterator<Item = ClusterInfo>,
        groups: impl IntoIterator<Item = ClusterGroupInfo>,
    ) -> Self {
        let mut index = ClusterIndex {
            clusters: BTreeMap::new(),
            groups: groups
                .into_iter()
                .map(|g| (ClusterKey::new(&g.namespace, &g.name), g))
                .collect(),
        };
        for cluster in clusters {
            index.upsert_cluster(cluster);
        }
        index
    }

    /// Adds or replaces a cluster, recomputing its groups.
    pub fn upsert_cluster(&mut self, cluster: ClusterInfo) {
        let groups = self.groups_for(&cluster);
        self.clusters
            .insert(cluster.key(), IndexedCluster { cluster, groups });
    }

    /// Removes a cluster; returns it if it was present.
    pub fn remove_cluster(&mut self, key: &ClusterKey) -> Option<ClusterInfo> {
        self.clusters.remove(key).map(|c| c.cluster)
    }

    /// Adds or replaces a group, recomputing membership of the clusters in its namespace.
    pub fn upsert_group(&mut self, group: ClusterGroupInfo) {
        let namespace = group.namespace.clone();
        self.groups
            .insert(ClusterKey::new(&group.namespace, &group.name), group);
        self.refresh_namespace(&namespace);
    }

    /// Removes a group and refreshes membership in its namespace.
    pub fn remove_group(&mut self, key: &ClusterKey) {
        if self.groups.remove(key).is_some() {
            self.refresh_namespace(&key.namespace);
        }
    }

    pub fn get(&self, key: &ClusterKey) -> Option<&IndexedCluster> {
        self.clusters.get(key)
    }

    /// Whether the cluster is paused (its Cluster's `paused`; an unknown cluster is not).
    pub fn is_paused(&self, key: &ClusterKey) -> bool {
        self.get(key).is_some_and(|c| c.cluster.paused)
    }

    /// Every cluster, in key order.
    pub fn clusters(&self) -> impl Iterator<Item = &IndexedCluster> {
        self.clusters.values()
    }

    /// Clusters of one namespace, in name order.
    pub fn clusters_in(&self, namespace: &str) -> impl Iterator<Item = &IndexedCluster> {
        let start = ClusterKey::new(namespace, "");
        self.clusters
            .range(start..)
            .take_while(move |(k, _)| k.namespace == namespace)
            .map(|(_, c)| c)
    }

    /// Groups of one namespace, in name order.
    pub fn groups_in(&self, namespace: &str) -> impl Iterator<Item = &ClusterGroupInfo> {
        let start = ClusterKey::new(namespace, "");
        self.groups
            .range(start..)
            .take_while(move |(k, _)| k.namespace == namespace)
            .map(|(_, g)| g)
    }

    /// Clusters of a group, in name order.
    pub fn group_members(&self, group: &ClusterKey) -> Vec<&IndexedCluster> {
        self.clusters_in(&group.namespace)
            .filter(|c| c.groups.iter().any(|g| g.name == group.name))
            .collect()
    }

    pub fn len(&self) -> usize {
        self.clusters.len()
    }

    pub fn is_empty(&self) -> bool {
        self.clusters.is_empty()
    }

    fn groups_for(&self, cluster: &ClusterInfo) -> Vec<GroupMembership> {
        self.groups_in(&cluster.namespace)
            .filter(|g| {
                g.selector
                    .as_ref()
                    .is_some_and(|s| s.validate("selector").is_ok() && s.matches(&cluster.labels))
            })
            .map(|g| GroupMembership {
                name: g.name.clone(),
                labels: g.labels.clone(),
            })
            .collect()
    }

    fn refresh_namespace(&mut self, namespace: &str) {
        let keys: Vec<ClusterKey> = self
            .clusters_in(namespace)
            .map(|c| c.cluster.key())
            .collect();
        for key in keys {
            let groups = self.groups_for(&self.clusters[&key].cluster);
            if let Some(entry) = self.clusters.get_mut(&key) {
                entry.groups = groups;
            }
        }
    }
}

impl From<FleetSnapshot> for ClusterIndex {
    fn from(snapshot: FleetSnapshot) -> Self {
        ClusterIndex::new(snapshot.clusters, snapshot.groups)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selector::{LabelSelector, SelectorExt};

    fn group(ns: &str, name: &str, selector: Option<LabelSelector>) -> ClusterGroupInfo {
        ClusterGroupInfo {
            name: name.into(),
            namespace: ns.into(),
            labels: [("team".to_string(), name.to_string())].into(),
            selector,
        }
    }

    #[test]
    fn membership_follows_selectors_within_the_namespace() {
        let index = ClusterIndex::new(
            [
                ClusterInfo::new("fleet-default", "b", [("env", "prod")]),
                ClusterInfo::new("fleet-default", "a", [("env", "dev")]),
                ClusterInfo::new("other", "c", [("env", "prod")]),
            ],
            [
                group(
                    "fleet-default",
                    "prod",
                    Some(LabelSelector::from_labels([("env", "prod")])),
                ),
                group("fleet-default", "all", Some(LabelSelector::default())),
                group("fleet-default", "none", None),
            ],
        );
        let names = |ns: &str| -> Vec<(String, Vec<String>)> {
            index
                .clusters_in(ns)
                .map(|c| {
                    (
                        c.cluster.name.clone(),
                        c.groups.iter().map(|g| g.name.clone()).collect(),
                    )
                })
                .collect()
        };
        assert_eq!(
            names("fleet-default"),
            vec![
                ("a".to_string(), vec!["all".to_string()]),
                ("b".to_string(), vec!["all".to_string(), "prod".to_string()]),
            ]
        );
        // Groups of another namespace never apply.
        assert_eq!(names("other"), vec![("c".to_string(), vec![])]);
        let members: Vec<_> = index
            .group_members(&ClusterKey::new("fleet-default", "prod"))
            .iter()
            .map(|c| c.cluster.name.clone())
            .collect();
        assert_eq!(members, ["b"]);
    }

    #[test]
    fn a_fleet_file_reads_into_an_index() {
        let yaml = r#"
clusters:
  - name: edge-1
    namespace: fleet-default
    labels: {env: prod, region: eu}
    taints:
      - {key: maintenance, effect: NoSelect, timeAdded: "2023-11-14T22:13:20Z"}
    properties: {kubernetes-fleet.io/node-count: "3"}
    health: {joined: true, lastHeartbeat: 1700000100, healthy: {status: true, lastTransition: 0}}
  - name: edge-2
    namespace: fleet-default
    labels: {env: dev}
groups:
  - name: prod
    namespace: fleet-default
    selector: {matchLabels: {env: prod}}
"#;
        let snapshot: FleetSnapshot = serde_saphyr::from_str(yaml).unwrap();
        let index = ClusterIndex::from(snapshot);
        let edge1 = index
            .get(&ClusterKey::new("fleet-default", "edge-1"))
            .unwrap();
        assert_eq!(edge1.groups[0].name, "prod");
        assert_eq!(
            edge1.cluster.taints[0].time_added,
            crate::model::time(1_700_000_000)
        );
        assert_eq!(index.len(), 2);
        let err = serde_saphyr::from_str::<FleetSnapshot>(
            "clusters: [{name: a, namespace: b, lables: {}}]",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("unknown field `lables`"), "{err}");
    }

    #[test]
    fn group_and_cluster_updates_refresh_membership() {
        let mut index = ClusterIndex::new(
            [ClusterInfo::new("ns", "a", [("env", "dev")])],
            [group(
                "ns",
                "prod",
                Some(LabelSelector::from_labels([("env", "prod")])),
            )],
        );
        let key = ClusterKey::new("ns", "a");
        assert!(index.get(&key).unwrap().groups.is_empty());
        index.upsert_cluster(ClusterInfo::new("ns", "a", [("env", "prod")]));
        assert_eq!(index.get(&key).unwrap().groups.len(), 1);
        index.remove_group(&ClusterKey::new("ns", "prod"));
        assert!(index.get(&key).unwrap().groups.is_empty());
        index.upsert_group(group("ns", "all", Some(LabelSelector::default())));
        assert_eq!(index.get(&key).unwrap().groups[0].name, "all");
        assert_eq!(index.remove_cluster(&key).map(|c| c.name), Some("a".into()));
        assert!(index.is_empty());
    }
}
