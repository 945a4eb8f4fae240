//! Resource status of a GitRepo as Fleet computes it from its BundleDeployments (Fleet's
//! `resourcestatus` package; the status documentation, ref-status-fields, only names the fields, so
//! Fleet's code decides what counts as what): `resourceCounts` is the sum of the BundleDeployments'
//! own `resourceCounts`, `perClusterResourceCounts` the same sum per cluster (`namespace/name` of every
//! cluster with a BundleDeployment of the repo), and `resources` lists every deployed object with the
//! clusters it is in each state on. Kept incrementally: a BundleDeployment's contribution is added when
//! the index stores it and taken away when it is replaced or deleted, so a status report costs what
//! its output costs, never a scan of the BundleDeployments.

use std::collections::BTreeMap;

use fleet_api::{BundleState, PerClusterState, Resource, ResourceCounts};
use fleet_target::model::ClusterKey;

use super::stored::StoredDeployment;

/// Clusters listed over all `resources` of one status at most, counted in bytes of their IDs as Fleet
/// counts them (1 MiB); the objects themselves are always listed.
const PER_CLUSTER_BYTES: usize = 1024 * 1024;

/// Adds `right` to `left`, field by field (Fleet's `IncrementResourceCounts`).
pub fn add_counts(left: &mut ResourceCounts, right: &ResourceCounts) {
    each_count(left, right, |total, one| *total += one);
}

/// Takes `right` away from `left` (undoes [`add_counts`]).
pub fn sub_counts(left: &mut ResourceCounts, right: &ResourceCounts) {
    each_count(left, right, |total, one| *total -= one);
}

/// Calls `combine` with each count of `left` and the same count of `right`.
fn each_count(left: &mut ResourceCounts, right: &ResourceCounts, combine: fn(&mut i64, i64)) {
    for (total, one) in [
        (&mut left.ready, right.ready),
        (&mut left.desired_ready, right.desired_ready),
        (&mut left.wait_applied, right.wait_applied),
        (&mut left.modified, right.modified),
        (&mut left.orphaned, right.orphaned),
        (&mut left.missing, right.missing),
        (&mut left.unknown, right.unknown),
        (&mut left.not_ready, right.not_ready),
    ] {
        combine(total, one);
    }
}

/// The `resourceCounts` a BundleDeployment reports (zero before the agent reports).
pub fn counts_of(bd: &StoredDeployment) -> ResourceCounts {
    bd.status
        .as_ref()
        .map(|s| s.resource_counts.clone())
        .unwrap_or_default()
}

/// An object, as Fleet's `ResourceKey` identifies it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceKey {
    pub kind: String,
    pub api_version: String,
    pub namespace: String,
    pub name: String,
}

/// One BundleDeployment's word on one object: its state there and whether the agent's lists were cut.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    state: String,
    incomplete: bool,
}

/// What the BundleDeployments say about one object, by (cluster ID, BundleDeployment): cluster order.
type Entries = BTreeMap<(String, String), Entry>;

/// The objects of one GitRepo's BundleDeployments, each with its state per (cluster, BundleDeployment),
/// in cluster order.
#[derive(Debug, Default)]
pub struct RepoResources {
    objects: BTreeMap<ResourceKey, Entries>,
}

impl RepoResources {
    /// Adds what `bd` (named `name`, on `cluster`) reports about its objects.
    pub fn add(&mut self, name: &str, cluster: &ClusterKey, bd: &StoredDeployment) {
        let owner = (cluster.to_string(), name.to_string());
        for (key, entry) in contribution(bd) {
            self.objects
                .entry(key)
                .or_default()
                .insert(owner.clone(), entry);
        }
    }

    /// Takes away what [`RepoResources::add`] added for the same arguments.
    pub fn remove(&mut self, name: &str, cluster: &ClusterKey, bd: &StoredDeployment) {
        let owner = (cluster.to_string(), name.to_string());
        for (key, _) in contribution(bd) {
            if let Some(entries) = self.objects.get_mut(&key) {
                entries.remove(&owner);
                if entries.is_empty() {
                    self.objects.remove(&key);
                }
            }
        }
    }

    /// `status.resources` as Fleet builds it: one entry per object, sorted by `type/id`, whose `state`
    /// is the first state other than Ready in cluster order, and whose `perClusterState` lists the
    /// clusters per state, until [`PER_CLUSTER_BYTES`] of cluster IDs are listed (counted over the
    /// objects in Fleet's order, reverse by kind, API version, namespace and name).
    pub fn list(&self) -> Vec<Resource> {
        let mut size = 0;
        let mut keyed: Vec<(&ResourceKey, &Entries)> = self.objects.iter().collect();
        let order = |key: &ResourceKey| {
            format!(
                "{}{} {}/{}",
                key.kind, key.api_version, key.namespace, key.name
            )
        };
        keyed.sort_by_cached_key(|(key, _)| std::cmp::Reverse(order(key)));
        let mut result: Vec<Resource> = keyed
            .into_iter()
            .map(|(key, entries)| {
                let mut resource = Resource {
                    kind: key.kind.clone(),
                    api_version: key.api_version.clone(),
                    namespace: key.namespace.clone(),
                    name: key.name.clone(),
                    state: BundleState::Ready.to_string(),
                    type_: resource_type(&key.api_version, &key.kind),
                    id: resource_id(&key.namespace, &key.name),
                    ..Resource::default()
                };
                for ((cluster, _), entry) in entries {
                    resource.incomplete_state |= entry.incomplete;
                    size += cluster.len();
                    if size < PER_CLUSTER_BYTES {
                        append_cluster(&mut resource.per_cluster_state, &entry.state, cluster);
                    }
                    if resource.state == BundleState::Ready.as_str() {
                        resource.state.clone_from(&entry.state);
                    }
                }
                resource
            })
            .collect();
        result.sort_by_cached_key(|r| format!("{}/{}", r.type_, r.id));
        result
    }
}

/// What one BundleDeployment says about each of its objects (Fleet's `bundleDeploymentResources`): every
/// deployed object in the default state, then the non-ready ones in the state the agent summarised, then
/// the modified ones as Modified, Orphaned (extra) or Missing; a later word on the same object wins.
fn contribution(bd: &StoredDeployment) -> BTreeMap<ResourceKey, Entry> {
    let mut objects = BTreeMap::new();
    let Some(status) = bd.status.as_ref() else {
        return objects;
    };
    let incomplete = status.incomplete_state;
    let entry = |state: &str| Entry {
        state: state.to_string(),
        incomplete,
    };
    let key = |o: &fleet_api::ObjectRef| ResourceKey {
        kind: o.kind.clone(),
        api_version: o.api_version.clone(),
        namespace: o.namespace.clone(),
        name: o.name.clone(),
    };
    let default = default_state(bd, incomplete);
    for resource in &status.resources {
        objects.insert(key(&resource.object), entry(&default));
    }
    for non_ready in &status.non_ready_status {
        objects.insert(key(&non_ready.object), entry(&non_ready.summary.state));
    }
    for modified in &status.modified_status {
        let state = if modified.delete {
            "Orphaned"
        } else if modified.create {
            "Missing"
        } else {
            "Modified"
        };
        objects.insert(key(&modified.object), entry(state));
    }
    objects
}

/// The state of a BundleDeployment's objects before its non-ready and modified lists are read (Fleet's
/// `resourcesDefaultState`): NotReady and Modified come from those lists, so the others are Ready (or
/// Unknown when the lists were cut); any other state is the BundleDeployment's own.
fn default_state(bd: &StoredDeployment, incomplete: bool) -> String {
    match bd.state() {
        BundleState::NotReady | BundleState::Modified if incomplete => "Unknown".to_string(),
        BundleState::NotReady | BundleState::Modified => BundleState::Ready.to_string(),
        state => state.to_string(),
    }
}

/// Lists `cluster` under `state` (Fleet's `appendToPerClusterState`; the agent's `updating` and `error`
/// summaries count as NotReady, states without a list are left out).
fn append_cluster(states: &mut PerClusterState, state: &str, cluster: &str) {
    let list = match state {
        "Ready" => &mut states.ready,
        "WaitApplied" => &mut states.wait_applied,
        "Pending" => &mut states.pending,
        "Modified" => &mut states.modified,
        "NotReady" | "updating" | "error" => &mut states.not_ready,
        "Orphaned" => &mut states.orphaned,
        "Missing" => &mut states.missing,
        "Unknown" => &mut states.unknown,
        _ => return,
    };
    list.push(cluster.to_string());
}

/// Fleet's resource type: the lowercased kind, prefixed by the API group and a dot (none for core).
fn resource_type(api_version: &str, kind: &str) -> String {
    let group = api_version.split('/').next().unwrap_or_default();
    let kind = kind.to_lowercase();
    match group {
        "" | "v1" => kind,
        group => format!("{group}.{kind}"),
    }
}

/// `namespace/name`, or the name of a cluster-scoped object.
fn resource_id(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        name.to_string()
    } else {
        format!("{namespace}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_api::BundleDeployment;
    use serde_json::json;

    fn bd(status: serde_json::Value) -> StoredDeployment {
        let bd: BundleDeployment = serde_json::from_value(json!({
            "metadata": {"name": "app", "namespace": "cluster-x"},
            "spec": {"deploymentID": "m:1", "stagedDeploymentID": "m:1"},
            "status": status,
        }))
        .unwrap();
        StoredDeployment::unshared(bd)
    }

    fn object(kind: &str, api_version: &str, namespace: &str, name: &str) -> serde_json::Value {
        json!({"kind": kind, "apiVersion": api_version, "namespace": namespace, "name": name})
    }

    #[test]
    fn objects_are_listed_with_their_state_on_each_cluster_as_fleet_lists_them() {
        let deployment = object("Deployment", "apps/v1", "web", "front");
        let service = object("Service", "v1", "web", "front");
        let role = object("ClusterRole", "rbac.authorization.k8s.io/v1", "", "reader");
        let ready = bd(json!({
            "appliedDeploymentID": "m:1", "ready": true, "nonModified": true,
            "resources": [deployment, service, role],
        }));
        let drifted = bd(json!({
            "appliedDeploymentID": "m:1", "ready": false, "nonModified": false,
            "resources": [deployment, service, role],
            "nonReadyStatus": [{"kind": "Deployment", "apiVersion": "apps/v1", "namespace": "web",
                                "name": "front", "summary": {"state": "updating"}}],
            "modifiedStatus": [{"kind": "Service", "apiVersion": "v1", "namespace": "web",
                                "name": "front", "missing": true}],
        }));
        let waiting = bd(json!({"appliedDeploymentID": "m:0", "resources": [role]}));
        let mut resources = RepoResources::default();
        let (a, b, c) = (
            ClusterKey::new("fleet", "a"),
            ClusterKey::new("fleet", "b"),
            ClusterKey::new("fleet", "c"),
        );
        resources.add("cluster-b/app", &b, &drifted);
        resources.add("cluster-a/app", &a, &ready);
        resources.add("cluster-c/app", &c, &waiting);
        let list = resources.list();
        let ids: Vec<(&str, &str, &str)> = list
            .iter()
            .map(|r| (r.type_.as_str(), r.id.as_str(), r.state.as_str()))
            .collect();
        assert_eq!(
            ids,
            [
                ("apps.deployment", "web/front", "updating"),
                (
                    "rbac.authorization.k8s.io.clusterrole",
                    "reader",
                    "WaitApplied"
                ),
                ("service", "web/front", "Missing"),
            ]
        );
        assert_eq!(list[0].per_cluster_state.ready, ["fleet/a"]);
        assert_eq!(list[0].per_cluster_state.not_ready, ["fleet/b"]);
        assert_eq!(list[1].per_cluster_state.ready, ["fleet/a", "fleet/b"]);
        assert_eq!(list[1].per_cluster_state.wait_applied, ["fleet/c"]);
        assert_eq!(list[2].per_cluster_state.missing, ["fleet/b"]);
        // Taking a BundleDeployment away takes away exactly what it added.
        resources.remove("cluster-b/app", &b, &drifted);
        resources.remove("cluster-c/app", &c, &waiting);
        let list = resources.list();
        assert!(list.iter().all(|r| r.state == "Ready"), "{list:?}");
        assert!(
            list.iter()
                .all(|r| r.per_cluster_state.ready == ["fleet/a"])
        );
        resources.remove("cluster-a/app", &a, &ready);
        assert!(resources.list().is_empty());
    }

    #[test]
    fn cut_lists_leave_the_other_objects_unknown() {
        let cut = bd(json!({
            "appliedDeploymentID": "m:1", "ready": false, "nonModified": true, "incompleteState": true,
            "resources": [object("ConfigMap", "v1", "x", "a")],
        }));
        let mut resources = RepoResources::default();
        resources.add("ns/app", &ClusterKey::new("fleet", "a"), &cut);
        let list = resources.list();
        assert_eq!(
            (list[0].state.as_str(), list[0].incomplete_state),
            ("Unknown", true)
        );
        assert_eq!(list[0].per_cluster_state.unknown, ["fleet/a"]);
    }
}
