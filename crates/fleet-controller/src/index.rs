//! The controller's in-memory view of the hub, fed by watches (see [`crate::watches`]): the targeting
//! [`ClusterIndex`] (Clusters and ClusterGroups), cluster namespaces, BundleNamespaceMappings, namespace
//! labels, the targeting input of every Bundle, and every BundleDeployment grouped by its Bundle. Updates
//! return what they affect, so a change wakes only the reconciles that must run (no periodic resync).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, RwLock};

use fleet_api::{
    Bundle, BundleDeployment, BundleNamespaceMapping, Cluster, ClusterGroup, labels as fleet_labels,
};
use fleet_target::bundle_spec::read_bundle_spec;
use fleet_target::index::ClusterIndex;
use fleet_target::mapping::{NamespaceInfo, NamespaceMapping, bundle_namespaces};
use fleet_target::model::{ClusterGroupInfo, ClusterInfo, ClusterKey};
use fleet_target::selector::Labels;
use fleet_target::targeting::{TargetingBundle, TargetingContext, target_cluster};
use fleet_target::template_engine::BuiltinTemplater;
use kube::ResourceExt;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::watch;

/// A Bundle, by namespace and name.
pub type BundleKey = (String, String);

/// Everything the index holds; read under the lock with [`FleetIndex::read`].
#[derive(Default)]
pub struct IndexState {
    pub clusters: ClusterIndex,
    /// `status.namespace` of each Cluster (where its BundleDeployments live), when assigned.
    pub cluster_namespaces: BTreeMap<ClusterKey, String>,
    pub mappings: Vec<NamespaceMapping>,
    pub namespaces: BTreeMap<String, Labels>,
    /// The targeting input of each Bundle that parsed.
    pub bundles: BTreeMap<BundleKey, TargetingBundle>,
    /// BundleDeployments by their Bundle (labels `bundle-namespace`/`bundle-name`), then cluster.
    pub deployments: BTreeMap<BundleKey, BTreeMap<ClusterKey, Arc<BundleDeployment>>>,
}

impl IndexState {
    /// Namespaces whose clusters `bundle` may target (its own plus BundleNamespaceMappings).
    pub fn bundle_namespaces(&self, bundle: &TargetingBundle) -> Vec<String> {
        let namespaces: Vec<NamespaceInfo> = self
            .namespaces
            .iter()
            .map(|(name, labels)| NamespaceInfo {
                name: name.clone(),
                labels: labels.clone(),
            })
            .collect();
        bundle_namespaces(
            &bundle.namespace,
            &bundle.labels,
            &self.mappings,
            &namespaces,
        )
    }

    /// BundleDeployments of one Bundle, by cluster.
    pub fn deployments_of(
        &self,
        key: &BundleKey,
    ) -> Option<&BTreeMap<ClusterKey, Arc<BundleDeployment>>> {
        self.deployments.get(key)
    }

    /// All BundleDeployments whose label `label` equals `value` (linear; for status aggregation).
    pub fn deployments_labelled<'a>(
        &'a self,
        label: &'a str,
        value: &'a str,
    ) -> impl Iterator<Item = &'a Arc<BundleDeployment>> + 'a {
        self.deployments
            .values()
            .flat_map(BTreeMap::values)
            .filter(move |bd| bd.labels().get(label).map(String::as_str) == Some(value))
    }

    fn bundles_in(&self, namespace: &str) -> Vec<BundleKey> {
        self.bundles
            .keys()
            .filter(|(ns, _)| ns == namespace)
            .cloned()
            .collect()
    }
}

/// The shared index and its "initial lists done" signal.
#[derive(Clone)]
pub struct FleetIndex {
    state: Arc<RwLock<IndexState>>,
    synced: watch::Sender<BTreeSet<&'static str>>,
}

/// The watches that must have listed once before reconciles may trust the index.
pub const SYNCED_KINDS: [&str; 6] = [
    "Cluster",
    "ClusterGroup",
    "BundleNamespaceMapping",
    "Namespace",
    "Bundle",
    "BundleDeployment",
];

impl Default for FleetIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl FleetIndex {
    pub fn new() -> Self {
        FleetIndex {
            state: Arc::default(),
            synced: watch::Sender::new(BTreeSet::new()),
        }
    }

    /// Runs `f` with read access to the state.
    pub fn read<T>(&self, f: impl FnOnce(&IndexState) -> T) -> T {
        let guard = self
            .state
            .read()
            .unwrap_or_else(|poison| poison.into_inner());
        f(&guard)
    }

    fn write<T>(&self, f: impl FnOnce(&mut IndexState) -> T) -> T {
        let mut guard = self
            .state
            .write()
            .unwrap_or_else(|poison| poison.into_inner());
        f(&mut guard)
    }

    /// Records that the watch of `kind` finished its initial list.
    pub fn mark_synced(&self, kind: &'static str) {
        self.synced.send_modify(|kinds| {
            kinds.insert(kind);
        });
    }

    /// Waits until every watch in [`SYNCED_KINDS`] has listed once.
    pub async fn wait_synced(&self) {
        let mut receiver = self.synced.subscribe();
        // The sender lives as long as `self`, so this cannot fail while we wait.
        let _ = receiver
            .wait_for(|kinds| SYNCED_KINDS.iter().all(|k| kinds.contains(k)))
            .await;
    }

    /// Adds or updates a Cluster; returns the Bundles whose targeting of it changed.
    pub fn apply_cluster(&self, cluster: &Cluster) -> Vec<BundleKey> {
        let info = cluster_info(cluster);
        let key = info.key();
        let cluster_namespace = cluster
            .status
            .as_ref()
            .map(|s| s.namespace.clone())
            .unwrap_or_default();
        self.write(|state| {
            let namespace_changed = state
                .cluster_namespaces
                .get(&key)
                .cloned()
                .unwrap_or_default()
                != cluster_namespace;
            let unchanged = state.clusters.get(&key).map(|c| &c.cluster) == Some(&info);
            if unchanged && !namespace_changed {
                return Vec::new();
            }
            let before = outcomes(state, &key);
            state.clusters.upsert_cluster(info);
            if cluster_namespace.is_empty() {
                state.cluster_namespaces.remove(&key);
            } else {
                state
                    .cluster_namespaces
                    .insert(key.clone(), cluster_namespace);
            }
            let after = outcomes(state, &key);
            changed_bundles(&before, &after, namespace_changed)
        })
    }

    /// Removes a Cluster; returns the Bundles that targeted it.
    pub fn delete_cluster(&self, cluster: &Cluster) -> Vec<BundleKey> {
        let key = ClusterKey::new(cluster.namespace().unwrap_or_default(), cluster.name_any());
        self.write(|state| {
            let before = outcomes(state, &key);
            state.clusters.remove_cluster(&key);
            state.cluster_namespaces.remove(&key);
            changed_bundles(&before, &BTreeMap::new(), true)
        })
    }

    /// Adds, updates or (with `deleted`) removes a ClusterGroup; returns the Bundles of its namespace.
    pub fn apply_group(&self, group: &ClusterGroup, deleted: bool) -> Vec<BundleKey> {
        let namespace = group.namespace().unwrap_or_default();
        self.write(|state| {
            if deleted {
                state
                    .clusters
                    .remove_group(&ClusterKey::new(&namespace, group.name_any()));
            } else {
                state.clusters.upsert_group(ClusterGroupInfo {
                    name: group.name_any(),
                    namespace: namespace.clone(),
                    labels: group.labels().clone(),
                    selector: group.spec.selector.as_ref().and_then(convert),
                });
            }
            state.bundles_in(&namespace)
        })
    }

    /// Replaces a BundleNamespaceMapping; returns the Bundles of its namespace.
    pub fn apply_mapping(&self, mapping: &BundleNamespaceMapping, deleted: bool) -> Vec<BundleKey> {
        let namespace = mapping.namespace().unwrap_or_default();
        let name = mapping.name_any();
        self.write(|state| {
            state
                .mappings
                .retain(|m| !(m.namespace == namespace && m.name == name));
            if !deleted {
                state.mappings.push(NamespaceMapping {
                    name,
                    namespace: namespace.clone(),
                    bundle_selector: mapping.spec.bundle_selector.as_ref().and_then(convert),
                    namespace_selector: mapping.spec.namespace_selector.as_ref().and_then(convert),
                });
            }
            state.bundles_in(&namespace)
        })
    }

    /// Records a namespace's labels; returns every Bundle when they changed (mappings select namespaces).
    pub fn apply_namespace(&self, name: &str, labels: Option<Labels>) -> Vec<BundleKey> {
        self.write(|state| {
            let changed = match labels {
                Some(labels) => {
                    state.namespaces.insert(name.to_string(), labels.clone()) != Some(labels)
                }
                None => state.namespaces.remove(name).is_some(),
            };
            if changed && !state.mappings.is_empty() {
                state.bundles.keys().cloned().collect()
            } else {
                Vec::new()
            }
        })
    }

    /// Records a Bundle's targeting input (or forgets it when deleted or unreadable).
    pub fn apply_bundle(&self, bundle: &Bundle, deleted: bool) {
        let key = (bundle.namespace().unwrap_or_default(), bundle.name_any());
        let parsed = (!deleted).then(|| targeting_bundle(bundle).ok()).flatten();
        self.write(|state| match parsed {
            Some(parsed) => {
                state.bundles.insert(key, parsed);
            }
            None => {
                state.bundles.remove(&key);
            }
        });
    }

    /// Adds, updates or removes a BundleDeployment; returns its Bundle when it belongs to one.
    pub fn apply_deployment(&self, bd: &Arc<BundleDeployment>, deleted: bool) -> Option<BundleKey> {
        let labels = bd.labels();
        let bundle = (
            labels.get(fleet_labels::BUNDLE_NAMESPACE)?.clone(),
            labels.get(fleet_labels::BUNDLE_NAME)?.clone(),
        );
        let cluster = ClusterKey::new(
            labels.get(fleet_labels::CLUSTER_NAMESPACE)?.clone(),
            labels.get(fleet_labels::CLUSTER)?.clone(),
        );
        self.write(|state| {
            if deleted {
                if let Some(by_cluster) = state.deployments.get_mut(&bundle) {
                    // A stale delete of an older object with the same cluster must not drop a newer one.
                    if by_cluster.get(&cluster).map(|d| d.metadata.uid.clone())
                        == Some(bd.metadata.uid.clone())
                    {
                        by_cluster.remove(&cluster);
                    }
                    if by_cluster.is_empty() {
                        state.deployments.remove(&bundle);
                    }
                }
            } else {
                state
                    .deployments
                    .entry(bundle.clone())
                    .or_default()
                    .insert(cluster, Arc::clone(bd));
            }
        });
        Some(bundle)
    }
}

/// The targeting input of a Bundle (its spec as Fleet's JSON).
pub fn targeting_bundle(bundle: &Bundle) -> Result<TargetingBundle, fleet_target::TargetError> {
    let spec = serde_json::to_value(&bundle.spec).unwrap_or_default();
    read_bundle_spec(
        &bundle.namespace().unwrap_or_default(),
        &bundle.name_any(),
        bundle.labels(),
        &spec,
    )
    .map(|parts| parts.targeting)
}

/// A Cluster as the targeting core sees it.
pub fn cluster_info(cluster: &Cluster) -> ClusterInfo {
    ClusterInfo {
        name: cluster.name_any(),
        namespace: cluster.namespace().unwrap_or_default(),
        labels: cluster.labels().clone(),
        annotations: cluster.annotations().clone(),
        template_values: cluster
            .spec
            .template_values
            .as_ref()
            .map(|values| values.0.clone())
            .unwrap_or_default(),
        paused: cluster.spec.paused,
        ..ClusterInfo::default()
    }
}

/// Converts between two types with the same JSON shape (API selectors → targeting selectors).
pub fn convert<T: Serialize, U: DeserializeOwned>(value: &T) -> Option<U> {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| serde_json::from_value(v).ok())
}

/// How each bundle treats one cluster now (a debug rendering of the outcome, compared for changes).
fn outcomes(state: &IndexState, cluster: &ClusterKey) -> BTreeMap<BundleKey, String> {
    let context = TargetingContext::default();
    state
        .bundles
        .iter()
        .filter_map(|(key, bundle)| {
            let namespaces = state.bundle_namespaces(bundle);
            if !namespaces.contains(&cluster.namespace) {
                return None;
            }
            let outcome = target_cluster(
                &state.clusters,
                bundle,
                &namespaces,
                cluster,
                &context,
                &BuiltinTemplater,
            );
            Some((key.clone(), format!("{outcome:?}")))
        })
        .collect()
}

/// Bundles whose outcome differs; with `all_targeted`, also every bundle that targets the cluster at all.
fn changed_bundles(
    before: &BTreeMap<BundleKey, String>,
    after: &BTreeMap<BundleKey, String>,
    all_targeted: bool,
) -> Vec<BundleKey> {
    let keys: BTreeSet<&BundleKey> = before.keys().chain(after.keys()).collect();
    keys.into_iter()
        .filter(|key| {
            let old = before.get(*key);
            let new = after.get(*key);
            old != new || (all_targeted && new.is_some_and(|o| o.starts_with("Ok(Targeted")))
        })
        .cloned()
        .collect()
}
