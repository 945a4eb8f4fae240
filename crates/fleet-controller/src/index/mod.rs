//! The controller's in-memory view of the hub, fed by watches (see [`crate::watches`]): the fleet's state
//! that planning reads ([`FleetState`], fleet-target's: Clusters and ClusterGroups, cluster namespaces,
//! BundleNamespaceMappings, namespace labels, the targeting input of every Bundle), and the deployment
//! store: every BundleDeployment grouped by its Bundle (stored
//! as a [`StoredDeployment`]: slimmed, with the specs, statuses and labels that a Bundle's
//! BundleDeployments have in common shared between them) with incremental status tallies per GitRepo and
//! per cluster namespace. Updates return what they affect, so a change wakes only the reconciles that
//! must run (no periodic resync).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, RwLock};

use fleet_api::{
    Bundle, BundleDeployment, BundleNamespaceMapping, Cluster, ClusterGroup, labels as fleet_labels,
};
use fleet_target::bundle_spec::read_bundle_spec;
use fleet_target::mapping::NamespaceMapping;
use fleet_target::model::{ClusterGroupInfo, ClusterInfo, ClusterKey};
use fleet_target::plan::{FleetState, deployment_state as rollout_state};
use fleet_target::selector::Labels;
use fleet_target::targeting::TargetingBundle;
use kube::ResourceExt;
use tokio::sync::watch;

pub mod resources;
pub mod stored;
pub mod summary;
pub mod tally;

use stored::{SharedParts, is_newer};
pub use stored::{StoredDeployment, StoredMeta, slim};

use crate::bundle::values::{self, MovedValues};
use summary::deployment_state;
use tally::{RepoTally, Tally};

pub use fleet_target::plan::{BundleKey, ClusterChange};

/// Everything the index holds; read under the lock with [`FleetIndex::read`]. Reads through to the
/// fleet's state ([`FleetState`]).
#[derive(Default)]
pub struct IndexState {
    /// What planning reads of the fleet.
    pub fleet: FleetState,
    /// BundleDeployments by their Bundle (labels `bundle-namespace`/`bundle-name`), then cluster.
    pub deployments: BTreeMap<BundleKey, BTreeMap<ClusterKey, Arc<StoredDeployment>>>,
    /// The distinct specs, statuses and labels of each Bundle's stored BundleDeployments, shared
    /// between them.
    shared: HashMap<BundleKey, SharedParts>,
    /// BundleDeployments of each GitRepo (bundle namespace, label `repo-name`) by state.
    pub repos: HashMap<(String, String), RepoTally>,
    /// BundleDeployments of each cluster namespace by state.
    pub cluster_tallies: HashMap<String, Tally>,
    /// The errors of each GitRepo's Bundles (bundle namespace, label `repo-name`): Bundle name → the
    /// message of its `Ready` condition while that reports an error of the Bundle itself (targeting or
    /// templating failed, its files could not be read), not the state of its BundleDeployments.
    pub bundle_errors: HashMap<(String, String), BTreeMap<String, String>>,
    /// How many BundleDeployments are in each state (for metrics).
    pub states: BTreeMap<String, i64>,
    /// Helm values this process moved into options Secrets, by BundleDeployment (namespace, name).
    pub moved_values: HashMap<(String, String), MovedValues>,
}

impl std::ops::Deref for IndexState {
    type Target = FleetState;

    fn deref(&self) -> &FleetState {
        &self.fleet
    }
}

/// What one BundleDeployment event changed (nothing is reported for a replayed or stale event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeploymentChange {
    pub bundle: BundleKey,
    /// `(bundle namespace, repo name)` when the BundleDeployment belongs to a GitRepo.
    pub repo: Option<(String, String)>,
    /// The cluster (labels `cluster-namespace`/`cluster`).
    pub cluster: ClusterKey,
    /// What planning reads changed: the BundleDeployment appeared or went away, or its spec, labels,
    /// deployment IDs, readiness or failure changed.
    pub replan: bool,
}

impl IndexState {
    /// BundleDeployments of one Bundle, by cluster.
    pub fn deployments_of(
        &self,
        key: &BundleKey,
    ) -> Option<&BTreeMap<ClusterKey, Arc<StoredDeployment>>> {
        self.deployments.get(key)
    }

    /// The tally of a GitRepo's BundleDeployments.
    pub fn repo_tally(&self, namespace: &str, name: &str) -> Option<&RepoTally> {
        self.repos.get(&(namespace.to_string(), name.to_string()))
    }

    /// The tally of the BundleDeployments in one cluster namespace.
    pub fn cluster_tally(&self, cluster_namespace: &str) -> Option<&Tally> {
        self.cluster_tallies.get(cluster_namespace)
    }

    /// Adds (or with `add == false` removes) one BundleDeployment to the tallies it belongs to.
    fn tally(&mut self, bd: &Arc<StoredDeployment>, add: bool) {
        let state = deployment_state(Some(bd));
        let namespace = bd.metadata.namespace.clone();
        let name = format!("{namespace}/{}", bd.metadata.name);
        let label = |key: &str| bd.label(key).cloned().unwrap_or_default();
        let cluster = ClusterKey::new(
            label(fleet_labels::CLUSTER_NAMESPACE),
            label(fleet_labels::CLUSTER),
        );
        if let Some(repo) = bd.label(fleet_labels::REPO_NAME) {
            let key = (label(fleet_labels::BUNDLE_NAMESPACE), repo.clone());
            let tally = self.repos.entry(key.clone()).or_default();
            if add {
                tally.add(&name, &cluster, &state, bd);
            } else {
                tally.remove(&name, &cluster, &state, bd);
                if tally.tally.is_empty() {
                    self.repos.remove(&key);
                }
            }
        }
        let tally = self.cluster_tallies.entry(namespace.clone()).or_default();
        let count = self.states.entry(state.to_string()).or_default();
        if add {
            tally.add(&name, &state, bd);
            *count += 1;
        } else {
            tally.remove(&name, &state, bd);
            *count -= 1;
            if tally.is_empty() {
                self.cluster_tallies.remove(&namespace);
            }
        }
    }
}

/// The shared index and its "initial lists done" signal.
#[derive(Clone)]
pub struct FleetIndex {
    state: Arc<RwLock<IndexState>>,
    synced: watch::Sender<BTreeSet<&'static str>>,
}

/// The kind the GitRepoRestriction watch (`crate::gitrepo::restrict::watch`) marks synced.
pub const GITREPO_RESTRICTIONS: &str = "GitRepoRestriction";

/// The watches that must have listed once before reconciles may trust the index.
pub const SYNCED_KINDS: [&str; 7] = [
    "Cluster",
    "ClusterGroup",
    "BundleNamespaceMapping",
    "Namespace",
    "Bundle",
    "BundleDeployment",
    // Marked by `gitrepo::restrict::watch`: targeting reads the restrictions' namespace selectors.
    GITREPO_RESTRICTIONS,
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

    /// Adds or updates a Cluster; returns the Bundles it affects.
    pub fn apply_cluster(&self, cluster: &Cluster) -> ClusterChange {
        let info = cluster_info(cluster);
        let cluster_namespace = cluster
            .status
            .as_ref()
            .map(|s| s.namespace.clone())
            .unwrap_or_default();
        self.write(|state| state.fleet.apply_cluster(info, cluster_namespace))
    }

    /// Removes a Cluster; returns the Bundles that targeted it.
    pub fn delete_cluster(&self, cluster: &Cluster) -> Vec<BundleKey> {
        let key = ClusterKey::new(cluster.namespace().unwrap_or_default(), cluster.name_any());
        self.write(|state| state.fleet.delete_cluster(&key))
    }

    /// Adds, updates or (with `deleted`) removes a ClusterGroup; returns the Bundles of its namespace.
    pub fn apply_group(&self, group: &ClusterGroup, deleted: bool) -> Vec<BundleKey> {
        let namespace = group.namespace().unwrap_or_default();
        self.write(|state| {
            if deleted {
                state
                    .fleet
                    .delete_group(&ClusterKey::new(&namespace, group.name_any()))
            } else {
                state.fleet.apply_group(ClusterGroupInfo {
                    name: group.name_any(),
                    namespace: namespace.clone(),
                    labels: group.labels().clone(),
                    selector: group.spec.selector.clone(),
                })
            }
        })
    }

    /// Replaces a BundleNamespaceMapping; returns the Bundles of its namespace.
    pub fn apply_mapping(&self, mapping: &BundleNamespaceMapping, deleted: bool) -> Vec<BundleKey> {
        let namespace = mapping.namespace().unwrap_or_default();
        let name = mapping.name_any();
        let replacement = (!deleted).then(|| NamespaceMapping {
            name: name.clone(),
            namespace: namespace.clone(),
            bundle_selector: mapping.spec.bundle_selector.clone(),
            namespace_selector: mapping.spec.namespace_selector.clone(),
        });
        self.write(|state| state.fleet.apply_mapping(&namespace, &name, replacement))
    }

    /// Records a namespace's labels; returns every Bundle when they changed (mappings select namespaces).
    pub fn apply_namespace(&self, name: &str, labels: Option<Labels>) -> Vec<BundleKey> {
        self.write(|state| state.fleet.apply_namespace(name, labels))
    }

    /// Records a Bundle's targeting input (or forgets it when deleted or unreadable) and its error;
    /// returns its GitRepo (namespace, name) when the errors of that GitRepo's Bundles changed.
    pub fn apply_bundle(&self, bundle: &Bundle, deleted: bool) -> Option<(String, String)> {
        let key = (bundle.namespace().unwrap_or_default(), bundle.name_any());
        let parsed = (!deleted).then(|| targeting_bundle(bundle).ok()).flatten();
        let repo = bundle
            .labels()
            .get(fleet_labels::REPO_NAME)
            .map(|repo| (key.0.clone(), repo.clone()));
        let error = (!deleted).then(|| bundle_error(bundle)).flatten();
        self.write(|state| {
            state.fleet.apply_bundle(key.clone(), parsed);
            let repo = repo?;
            let errors = state.bundle_errors.entry(repo.clone()).or_default();
            let changed = match error {
                Some(error) => errors.insert(key.1.clone(), error.clone()) != Some(error),
                None => errors.remove(&key.1).is_some(),
            };
            if errors.is_empty() {
                state.bundle_errors.remove(&repo);
            }
            changed.then_some(repo)
        })
    }

    /// Adds, updates or (with `deleted`) removes a BundleDeployment, slimmed and stored as a
    /// [`StoredDeployment`]. Returns the stored object and what changed, or `None` when it belongs to no
    /// Bundle or the event is stale (an older resourceVersion than the one held, a replay, or the delete
    /// of an older object).
    pub fn apply_deployment(
        &self,
        bd: BundleDeployment,
        deleted: bool,
    ) -> (Arc<StoredDeployment>, Option<DeploymentChange>) {
        let mut bd = slim(bd);
        if !bd.spec.values_hash.is_empty() {
            let key = (bd.namespace().unwrap_or_default(), bd.name_any());
            self.read(|state| {
                if let Some(moved) = state.moved_values.get(&key) {
                    values::restore(&mut bd, moved);
                }
            });
        }
        match DeploymentKeys::of(&bd) {
            Some(keys) => self.write(|state| state.record_deployment(bd, keys, deleted)),
            None => (Arc::new(StoredDeployment::unshared(bd)), None),
        }
    }

    /// Remembers the values moved out of `bd` (about to be written), so that its stored copy gets them
    /// back.
    pub fn remember_values(&self, bd: &BundleDeployment, moved: MovedValues) {
        let key = (bd.namespace().unwrap_or_default(), bd.name_any());
        self.write(|state| {
            state.moved_values.insert(key, moved);
        });
    }
}

/// The error a Bundle's `Ready` condition reports about the Bundle itself (reason `Error`, as the Bundle
/// reconciler sets it when targeting fails or its files could not be read), if any.
pub fn bundle_error(bundle: &Bundle) -> Option<String> {
    let status = bundle.status.as_ref()?;
    fleet_api::find_condition(&status.conditions, "Ready")
        .filter(|c| c.status == "False" && c.reason == "Error" && !c.message.is_empty())
        .map(|c| c.message.clone())
}

/// Where a BundleDeployment belongs, from its labels.
struct DeploymentKeys {
    bundle: BundleKey,
    cluster: ClusterKey,
    repo: Option<(String, String)>,
}

impl DeploymentKeys {
    /// `None` when a label naming its Bundle or cluster is missing.
    fn of(bd: &BundleDeployment) -> Option<DeploymentKeys> {
        let labels = bd.labels();
        let bundle = (
            labels.get(fleet_labels::BUNDLE_NAMESPACE)?.clone(),
            labels.get(fleet_labels::BUNDLE_NAME)?.clone(),
        );
        let cluster = ClusterKey::new(
            labels.get(fleet_labels::CLUSTER_NAMESPACE)?.clone(),
            labels.get(fleet_labels::CLUSTER)?.clone(),
        );
        let repo = labels
            .get(fleet_labels::REPO_NAME)
            .map(|repo| (bundle.0.clone(), repo.clone()));
        Some(DeploymentKeys {
            bundle,
            cluster,
            repo,
        })
    }
}

impl IndexState {
    /// [`FleetIndex::apply_deployment`] of a BundleDeployment that belongs to a Bundle.
    fn record_deployment(
        &mut self,
        bd: BundleDeployment,
        keys: DeploymentKeys,
        deleted: bool,
    ) -> (Arc<StoredDeployment>, Option<DeploymentChange>) {
        let DeploymentKeys {
            bundle,
            cluster,
            repo,
        } = keys;
        let previous = self
            .deployments
            .get(&bundle)
            .and_then(|by_cluster| by_cluster.get(&cluster))
            .cloned();
        let same_object = previous
            .as_ref()
            .is_some_and(|p| p.metadata.uid == bd.metadata.uid);
        let change = |replan| DeploymentChange {
            bundle: bundle.clone(),
            repo: repo.clone(),
            cluster: cluster.clone(),
            replan,
        };
        if deleted {
            // A stale delete of an older object with the same cluster must not drop a newer one.
            let Some(previous) = previous.filter(|_| same_object) else {
                return (Arc::new(StoredDeployment::unshared(bd)), None);
            };
            self.tally(&previous, false);
            self.moved_values
                .remove(&(bd.namespace().unwrap_or_default(), bd.name_any()));
            if let Some(by_cluster) = self.deployments.get_mut(&bundle) {
                by_cluster.remove(&cluster);
                if by_cluster.is_empty() {
                    self.deployments.remove(&bundle);
                    self.shared.remove(&bundle);
                }
            }
            return (previous, Some(change(true)));
        }
        if let Some(previous) = &previous {
            if same_object && !is_newer(&bd, previous) {
                return (Arc::clone(previous), None);
            }
            self.tally(previous, false);
        }
        let stored = Arc::new(self.shared.entry(bundle.clone()).or_default().store(bd));
        self.tally(&stored, true);
        self.deployments
            .entry(bundle.clone())
            .or_default()
            .insert(cluster.clone(), Arc::clone(&stored));
        let replan = previous.is_none_or(|p| {
            p.metadata.generation != stored.metadata.generation
                || !p.labels().eq(stored.labels())
                || p.metadata.namespace != stored.metadata.namespace
                || rollout_state(&*p) != rollout_state(&*stored)
        });
        (stored, Some(change(replan)))
    }
}

/// The targeting input of a Bundle (its spec as Fleet's JSON).
pub fn targeting_bundle(bundle: &Bundle) -> Result<TargetingBundle, fleet_target::TargetError> {
    read_bundle_spec(
        &bundle.namespace().unwrap_or_default(),
        &bundle.name_any(),
        bundle.labels(),
        &bundle.spec,
    )
    .map(|parts| parts.targeting)
}

/// A Cluster as the targeting core sees it: Fleet's targeting fields plus taints, scores, the agent's
/// properties and membership for placement (helper "place": [`crate::placement::view`]).
pub fn cluster_info(cluster: &Cluster) -> ClusterInfo {
    crate::placement::view::cluster_info(cluster)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_api::BundleState;
    use serde_json::json;
    use summary::MAX_NON_READY;

    #[test]
    fn a_stored_deployment_keeps_what_state_messages_and_placement_read() {
        let bd: BundleDeployment = serde_json::from_value(json!({
            "apiVersion": "fleet.cattle.io/v1alpha1",
            "kind": "BundleDeployment",
            "metadata": {
                "name": "app", "namespace": "cluster-ns", "uid": "u1", "resourceVersion": "7",
                "generation": 2, "creationTimestamp": "2026-01-01T00:00:00Z",
                "labels": {"fleet.cattle.io/bundle-name": "app"},
                "annotations": {"fleet.cattle.io/placement-policy-hash": "h"},
                "finalizers": ["f"],
                "managedFields": [{"manager": "fleet-agent", "operation": "Apply"}],
            },
            "spec": {"deploymentID": "m:1", "stagedDeploymentID": "m:1", "options": {"defaultNamespace": "x"}},
            "status": {
                "appliedDeploymentID": "m:1", "release": "x/app:1", "ready": false, "nonModified": true,
                "display": {"deployed": "Yes", "state": "NotReady"},
                "conditions": [{"type": "Ready", "status": "False", "message": "pod not ready",
                                "lastUpdateTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
                "nonReadyStatus": (0..10).map(|i| json!({"name": format!("p{i}")})).collect::<Vec<_>>(),
                "resources": [{"kind": "ConfigMap", "name": "x"}],
            },
        }))
        .unwrap();
        let state = bd.state();
        // The whole object, as it would be stored without slimming.
        let whole = StoredDeployment {
            metadata: StoredMeta::of(bd.metadata.clone(), Arc::new),
            spec: Arc::new(bd.spec.clone()),
            status: bd.status.clone().map(Arc::new),
        };
        let message = summary::deployment_message(Some(&whole), &state);
        assert_eq!(whole.state(), state);
        assert_eq!(
            StoredDeployment::unshared(bd.clone()).state(),
            state,
            "slimmed"
        );
        assert_eq!(
            summary::deployment_message(Some(&StoredDeployment::unshared(bd.clone())), &state),
            message
        );
        let stored = slim(bd.clone());
        assert_eq!(stored.spec, bd.spec);
        assert_eq!(
            (stored.labels(), stored.annotations()),
            (bd.labels(), bd.annotations())
        );
        assert_eq!(
            (&stored.metadata.uid, &stored.metadata.resource_version),
            (&bd.metadata.uid, &bd.metadata.resource_version)
        );
        let status = stored.status.unwrap();
        assert_eq!(status.non_ready_status.len(), MAX_NON_READY);
        assert!(status.release.is_empty());
        assert_eq!(status.resources.len(), 1);
        assert!(status.resources[0].created_at.is_none());
        assert!(status.conditions[0].last_update_time.is_empty());
        assert!(stored.metadata.managed_fields.is_none() && stored.metadata.finalizers.is_none());
    }

    /// A BundleDeployment of Bundle `fleet/app` on cluster `fleet/<cluster>`.
    fn deployment(cluster: &str, deployment_id: &str, ready: bool) -> BundleDeployment {
        serde_json::from_value(json!({
            "metadata": {
                "name": "app", "namespace": format!("cluster-{cluster}"), "uid": cluster,
                "resourceVersion": "1",
                "labels": {
                    "fleet.cattle.io/bundle-namespace": "fleet", "fleet.cattle.io/bundle-name": "app",
                    "fleet.cattle.io/cluster-namespace": "fleet", "fleet.cattle.io/cluster": cluster,
                },
            },
            "spec": {"deploymentID": deployment_id, "stagedDeploymentID": deployment_id,
                     "options": {"defaultNamespace": "x"}, "stagedOptions": {"defaultNamespace": "x"}},
            "status": {"appliedDeploymentID": deployment_id, "ready": ready, "nonModified": true},
        }))
        .unwrap()
    }

    #[test]
    fn a_bundles_deployments_share_equal_specs_and_statuses() {
        let index = FleetIndex::new();
        let (a, change) = index.apply_deployment(deployment("a", "m:1", true), false);
        assert!(change.is_some_and(|c| c.replan));
        let (b, _) = index.apply_deployment(deployment("b", "m:1", true), false);
        let (c, _) = index.apply_deployment(deployment("c", "m:2", false), false);
        assert!(Arc::ptr_eq(&a.spec, &b.spec));
        assert!(Arc::ptr_eq(
            a.status.as_ref().unwrap(),
            b.status.as_ref().unwrap()
        ));
        assert!(!Arc::ptr_eq(&a.spec, &c.spec));
        assert!(Arc::ptr_eq(&a.metadata.labels, &c.metadata.labels));
        // Each still reads its own cluster's labels.
        let original = deployment("c", "m:2", false).metadata;
        assert!(c.labels().eq(original.labels.as_ref().unwrap()));
        assert_eq!(
            c.label(fleet_labels::CLUSTER).map(String::as_str),
            Some("c")
        );
        assert_eq!(c.object_meta().labels, original.labels);
        assert_eq!(
            (c.namespace(), c.name_any(), &c.metadata.uid),
            (original.namespace, "app".to_string(), &original.uid)
        );
        assert_eq!(*c.spec, deployment("c", "m:2", false).spec);
        assert_eq!(c.status.as_ref().unwrap().applied_deployment_id, "m:2");
        assert_eq!(
            (b.state(), c.state()),
            (BundleState::Ready, BundleState::NotReady)
        );
        // An update of one leaves what the others share untouched.
        let mut moved = deployment("b", "m:2", false);
        moved.metadata.resource_version = Some("2".into());
        let (b, change) = index.apply_deployment(moved, false);
        assert!(change.is_some_and(|c| c.replan));
        assert!(Arc::ptr_eq(&b.spec, &c.spec));
        assert_eq!(a.spec.deployment_id, "m:1");
        index.read(|state| {
            let stored = state
                .deployments_of(&("fleet".into(), "app".into()))
                .unwrap();
            assert_eq!(stored.len(), 3);
            assert_eq!(state.states.get("Ready"), Some(&1));
            assert_eq!(state.states.get("NotReady"), Some(&2));
        });
        for cluster in ["a", "b", "c"] {
            let (_, change) = index.apply_deployment(deployment(cluster, "m:1", true), true);
            assert!(change.is_some(), "{cluster}");
        }
        index.read(|state| {
            assert!(state.deployments.is_empty() && state.shared.is_empty());
        });
    }

    #[test]
    fn a_cluster_given_a_namespace_wakes_its_bundles_in_a_batch_and_a_label_change_at_once() {
        let index = FleetIndex::new();
        let cluster = |env: &str, status: serde_json::Value| -> Cluster {
            serde_json::from_value(json!({
                "metadata": {"name": "a", "namespace": "fleet", "labels": {"env": env}},
                "spec": {},
                "status": status,
            }))
            .unwrap()
        };
        let bundle: Bundle = serde_json::from_value(json!({
            "metadata": {"name": "app", "namespace": "fleet"},
            "spec": {"targets": [{"clusterSelector": {"matchLabels": {"env": "prod"}}}]},
        }))
        .unwrap();
        index.apply_bundle(&bundle, false);
        let app = ("fleet".to_string(), "app".to_string());
        let first = index.apply_cluster(&cluster("prod", json!({})));
        assert_eq!(
            (first.bundles, first.namespace_only),
            (vec![app.clone()], false)
        );
        let assigned = index.apply_cluster(&cluster("prod", json!({"namespace": "cluster-a"})));
        assert_eq!(
            (assigned.bundles, assigned.namespace_only),
            (vec![app.clone()], true)
        );
        let again = index.apply_cluster(&cluster("prod", json!({"namespace": "cluster-a"})));
        assert_eq!(again, ClusterChange::default());
        let relabelled = index.apply_cluster(&cluster("dev", json!({"namespace": "cluster-a"})));
        assert_eq!(
            (relabelled.bundles, relabelled.namespace_only),
            (vec![app], false)
        );
    }
}
