//! The fleet's state as planning reads it, kept up to date from watch events by the caller: the
//! [`ClusterIndex`] (Clusters and ClusterGroups), each Cluster's namespace, BundleNamespaceMappings,
//! namespace labels and the targeting input of every Bundle. Each update returns the Bundles it
//! affects (by comparing their targeting outcome for a changed Cluster), so that a caller wakes only the
//! reconciles that must run; `targeting_version` counts changes to what Fleet targeting reads, which
//! keeps a Bundle's targeting valid between plans ([`super::cache`]).

use std::collections::BTreeMap;

use crate::TargetError;
use crate::index::{ClusterIndex, IndexedCluster};
use crate::mapping::{NamespaceInfo, NamespaceMapping, bundle_namespaces};
use crate::model::{ClusterGroupInfo, ClusterInfo, ClusterKey};
use crate::selector::Labels;
use crate::targeting::{
    ClusterOutcome, TargetingBundle, TargetingContext, changed_bundles, cluster_outcomes,
};

/// A Bundle, by namespace and name.
pub type BundleKey = (String, String);

/// How each Bundle treats one cluster.
type Outcomes = BTreeMap<BundleKey, Result<ClusterOutcome, TargetError>>;

/// Everything planning reads of the fleet besides a Bundle and its BundleDeployments.
#[derive(Debug, Clone, Default)]
pub struct FleetState {
    pub clusters: ClusterIndex,
    /// `status.namespace` of each Cluster (where its BundleDeployments live), when assigned.
    pub cluster_namespaces: BTreeMap<ClusterKey, String>,
    pub mappings: Vec<NamespaceMapping>,
    pub namespaces: BTreeMap<String, Labels>,
    /// The targeting input of each Bundle that parsed.
    pub bundles: BTreeMap<BundleKey, TargetingBundle>,
    /// Counts changes to what Fleet targeting reads (a Cluster's targeting fields, not its heartbeat or
    /// namespace; ClusterGroups, BundleNamespaceMappings, namespace labels): a Bundle's targeting computed
    /// at one count holds while the count stays.
    pub targeting_version: u64,
}

/// The Bundles one Cluster update affects.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ClusterChange {
    /// Bundles whose targeting of the Cluster changed, and with a new namespace every Bundle that
    /// targets it (its BundleDeployments go there).
    pub bundles: Vec<BundleKey>,
    /// Only the Cluster's namespace changed, not its targeting: the Bundles may plan in the next
    /// throttled batch, together with the other Clusters given a namespace meanwhile.
    pub namespace_only: bool,
}

/// Whether Fleet targeting may see `new` differently from `old` (`None`: a new cluster): it reads a
/// cluster's name, labels (and through them its groups), annotations and template values, not what
/// placement reads (taints, properties, resource usage, scores, health).
pub fn targeting_differs(old: Option<&IndexedCluster>, new: &ClusterInfo) -> bool {
    old.is_none_or(|old| {
        let old = &old.cluster;
        old.labels != new.labels
            || old.annotations != new.annotations
            || old.template_values != new.template_values
    })
}

/// Whether two views of a cluster differ at most in membership (heartbeat, joined, leaving), which
/// Fleet targeting does not read.
pub fn same_but_health(a: &ClusterInfo, b: &ClusterInfo) -> bool {
    let strip = |c: &ClusterInfo| ClusterInfo {
        health: None,
        ..c.clone()
    };
    strip(a) == strip(b)
}

impl FleetState {
    /// Namespaces whose clusters `bundle` may target (its own plus BundleNamespaceMappings).
    pub fn bundle_namespaces(&self, bundle: &TargetingBundle) -> Vec<String> {
        // Only a mapping in the Bundle's namespace reads the namespaces: without one, listing them (a
        // thousand cluster namespaces, for every Bundle on every Cluster event) is wasted.
        let mapped = self
            .mappings
            .iter()
            .any(|m| m.namespace == bundle.namespace);
        let namespaces: Vec<NamespaceInfo> = if mapped {
            self.namespaces
                .iter()
                .map(|(name, labels)| NamespaceInfo {
                    name: name.clone(),
                    labels: labels.clone(),
                })
                .collect()
        } else {
            Vec::new()
        };
        bundle_namespaces(
            &bundle.namespace,
            &bundle.labels,
            &self.mappings,
            &namespaces,
        )
    }

    /// The ClusterGroups of `namespace`.
    pub fn groups_in(&self, namespace: &str) -> Vec<String> {
        self.clusters
            .groups_in(namespace)
            .map(|group| group.name.clone())
            .collect()
    }

    fn bundles_in(&self, namespace: &str) -> Vec<BundleKey> {
        self.bundles
            .keys()
            .filter(|(ns, _)| ns == namespace)
            .cloned()
            .collect()
    }

    /// How each Bundle treats one cluster now.
    fn outcomes(&self, cluster: &ClusterKey) -> Outcomes {
        let bundles = self
            .bundles
            .iter()
            .map(|(key, bundle)| (key, bundle, self.bundle_namespaces(bundle)));
        cluster_outcomes(
            &self.clusters,
            bundles,
            cluster,
            &TargetingContext::default(),
        )
    }

    /// Adds or updates a Cluster with its namespace (empty: none assigned); returns the Bundles it
    /// affects.
    pub fn apply_cluster(&mut self, info: ClusterInfo, cluster_namespace: String) -> ClusterChange {
        let key = info.key();
        let namespace_changed =
            self.cluster_namespaces.get(&key).map_or("", String::as_str) != cluster_namespace;
        let held = self.clusters.get(&key).map(|c| &c.cluster);
        let unchanged = held == Some(&info);
        // A heartbeat (membership) alone changes no Fleet targeting outcome.
        let same_targeting = unchanged || held.is_some_and(|held| same_but_health(held, &info));
        if same_targeting && !namespace_changed {
            if !unchanged {
                self.clusters.upsert_cluster(info);
            }
            return ClusterChange::default();
        }
        if targeting_differs(self.clusters.get(&key), &info) {
            self.targeting_version += 1;
        }
        let before = (!same_targeting).then(|| self.outcomes(&key));
        self.clusters.upsert_cluster(info);
        if cluster_namespace.is_empty() {
            self.cluster_namespaces.remove(&key);
        } else {
            self.cluster_namespaces
                .insert(key.clone(), cluster_namespace);
        }
        let after = self.outcomes(&key);
        ClusterChange {
            bundles: changed_bundles(before.as_ref().unwrap_or(&after), &after, namespace_changed),
            namespace_only: same_targeting,
        }
    }

    /// Removes a Cluster; returns the Bundles that targeted it.
    pub fn delete_cluster(&mut self, key: &ClusterKey) -> Vec<BundleKey> {
        self.targeting_version += 1;
        let before = self.outcomes(key);
        self.clusters.remove_cluster(key);
        self.cluster_namespaces.remove(key);
        changed_bundles(&before, &BTreeMap::new(), true)
    }

    /// Adds or updates a ClusterGroup; returns the Bundles of its namespace.
    pub fn apply_group(&mut self, group: ClusterGroupInfo) -> Vec<BundleKey> {
        self.targeting_version += 1;
        let namespace = group.namespace.clone();
        self.clusters.upsert_group(group);
        self.bundles_in(&namespace)
    }

    /// Removes a ClusterGroup; returns the Bundles of its namespace.
    pub fn delete_group(&mut self, key: &ClusterKey) -> Vec<BundleKey> {
        self.targeting_version += 1;
        self.clusters.remove_group(key);
        self.bundles_in(&key.namespace)
    }

    /// Replaces (or with `None` removes) the BundleNamespaceMapping `namespace/name`; returns the
    /// Bundles of its namespace.
    pub fn apply_mapping(
        &mut self,
        namespace: &str,
        name: &str,
        mapping: Option<NamespaceMapping>,
    ) -> Vec<BundleKey> {
        self.targeting_version += 1;
        self.mappings
            .retain(|m| !(m.namespace == namespace && m.name == name));
        self.mappings.extend(mapping);
        self.bundles_in(namespace)
    }

    /// Records a namespace's labels (`None`: deleted); returns every Bundle when they changed and
    /// mappings exist (mappings select namespaces).
    pub fn apply_namespace(&mut self, name: &str, labels: Option<Labels>) -> Vec<BundleKey> {
        let changed = match labels {
            Some(labels) => {
                self.namespaces.insert(name.to_string(), labels.clone()) != Some(labels)
            }
            None => self.namespaces.remove(name).is_some(),
        };
        if changed && !self.mappings.is_empty() {
            // Namespaces are read by targeting only through mappings.
            self.targeting_version += 1;
            self.bundles.keys().cloned().collect()
        } else {
            Vec::new()
        }
    }

    /// Records a Bundle's targeting input, or forgets it (deleted or unreadable).
    pub fn apply_bundle(&mut self, key: BundleKey, bundle: Option<TargetingBundle>) {
        match bundle {
            Some(bundle) => {
                self.bundles.insert(key, bundle);
            }
            None => {
                self.bundles.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bundle_namespaces_add_mapped_namespaces_only_for_a_mapping_in_the_bundles_namespace() {
        let mut state = FleetState::default();
        for (name, team) in [("team-a", "a"), ("team-b", "b"), ("other", "a")] {
            state.namespaces.insert(
                name.to_string(),
                Labels::from([("team".to_string(), team.to_string())]),
            );
        }
        let bundle = |namespace: &str| -> TargetingBundle {
            serde_json::from_value(
                json!({"name": "app", "namespace": namespace, "labels": {"app": "x"}}),
            )
            .unwrap()
        };
        assert_eq!(state.bundle_namespaces(&bundle("fleet")), ["fleet"]);
        state.mappings.push(
            serde_json::from_value(json!({
                "name": "m",
                "namespace": "fleet",
                "bundleSelector": {"matchLabels": {"app": "x"}},
                "namespaceSelector": {"matchLabels": {"team": "a"}},
            }))
            .unwrap(),
        );
        assert_eq!(
            state.bundle_namespaces(&bundle("fleet")),
            ["fleet", "other", "team-a"]
        );
        assert_eq!(state.bundle_namespaces(&bundle("elsewhere")), ["elsewhere"]);
    }

    #[test]
    fn a_cluster_given_a_namespace_wakes_its_bundles_in_a_batch_and_a_label_change_at_once() {
        let mut state = FleetState::default();
        let bundle: TargetingBundle = serde_json::from_value(json!({
            "name": "app", "namespace": "fleet",
            "targets": [{"clusterSelector": {"matchLabels": {"env": "prod"}}}],
        }))
        .unwrap();
        let app = ("fleet".to_string(), "app".to_string());
        state.apply_bundle(app.clone(), Some(bundle));
        let cluster = |env: &str| ClusterInfo::new("fleet", "a", [("env", env)]);
        let first = state.apply_cluster(cluster("prod"), String::new());
        assert_eq!(
            (first.bundles, first.namespace_only),
            (vec![app.clone()], false)
        );
        let assigned = state.apply_cluster(cluster("prod"), "cluster-a".into());
        assert_eq!(
            (assigned.bundles, assigned.namespace_only),
            (vec![app.clone()], true)
        );
        let again = state.apply_cluster(cluster("prod"), "cluster-a".into());
        assert_eq!(again, ClusterChange::default());
        let version = state.targeting_version;
        let relabelled = state.apply_cluster(cluster("dev"), "cluster-a".into());
        assert_eq!(
            (relabelled.bundles, relabelled.namespace_only),
            (vec![app.clone()], false)
        );
        assert_eq!(state.targeting_version, version + 1);
        // A deleted cluster wakes every Bundle whose namespaces hold it.
        assert_eq!(
            state.delete_cluster(&ClusterKey::new("fleet", "a")),
            vec![app]
        );
    }
}
