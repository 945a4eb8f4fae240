//! Each Bundle's targeting ([`Targeted`]: its targeted clusters, their option sets and deploymentIDs)
//! kept between reconciles. Targeting reads only the Bundle's spec and labels, its namespace's
//! GitRepoRestriction selector ([`NamespaceSelectors`]) and what the index counts in `targeting_version`
//! (Clusters' targeting fields, ClusterGroups, BundleNamespaceMappings, mapped namespaces), so a kept
//! result holds while those are the same: a reconcile woken by BundleDeployment status, or by a Cluster
//! getting its namespace, plans only the rollout and the writes.
//!
//! The spec is known by the Bundle's uid and `metadata.generation`: the API server moves the generation on
//! every change outside metadata and status (the Bundle CRD has the status subresource; the embedded API
//! server does the same), and a re-created Bundle has a new uid. The Helm values put back from the values
//! Secret are covered too, as they must match `spec.valuesHash`. A Bundle without either (never stored)
//! is known by a hash of its spec.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use fleet_api::Bundle;
use fleet_target::TargetError;
use fleet_target::index::IndexedCluster;
use fleet_target::model::ClusterInfo;
use fleet_target::selector::LabelSelector;
use kube::ResourceExt;

use crate::bundle::target::{Targeted, targeted};
use crate::context::lock;
use crate::gitrepo::restrict::NamespaceSelectors;
use crate::index::{BundleKey, IndexState};

/// Kept targeting results, by Bundle, and the restriction selectors targeting reads.
#[derive(Default)]
pub struct TargetingCache {
    entries: Mutex<HashMap<BundleKey, (CacheKey, Arc<Targeted>)>>,
    /// The GitRepoRestrictions' `allowedTargetNamespaceSelector` of each namespace.
    pub namespace_selectors: NamespaceSelectors,
}

/// What a kept result was computed from.
#[derive(Debug, PartialEq)]
struct CacheKey {
    spec: SpecVersion,
    labels: BTreeMap<String, String>,
    namespace_selector: Option<LabelSelector>,
    targeting_version: u64,
}

/// Which version of a Bundle's spec.
#[derive(Debug, PartialEq)]
enum SpecVersion {
    /// A stored Bundle: its uid and generation.
    Stored { uid: String, generation: i64 },
    /// A hash of the spec as JSON, for a Bundle that has no uid or generation.
    Hashed(u64),
}

impl SpecVersion {
    fn of(bundle: &Bundle) -> Self {
        let meta = &bundle.metadata;
        if let (Some(uid), Some(generation)) = (&meta.uid, meta.generation) {
            return SpecVersion::Stored {
                uid: uid.clone(),
                generation,
            };
        }
        let mut hasher = std::hash::DefaultHasher::new();
        serde_json::to_vec(&bundle.spec)
            .unwrap_or_default()
            .hash(&mut hasher);
        SpecVersion::Hashed(hasher.finish())
    }
}

impl CacheKey {
    fn of(bundle: &Bundle, namespace_selector: Option<&LabelSelector>, state: &IndexState) -> Self {
        CacheKey {
            spec: SpecVersion::of(bundle),
            labels: bundle.labels().clone(),
            namespace_selector: namespace_selector.cloned(),
            targeting_version: state.targeting_version,
        }
    }
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

impl TargetingCache {
    /// `bundle`'s targeting against `state` (with its namespace's restriction selector): the kept one when
    /// nothing it reads changed, else computed (and kept). A targeting error is not kept.
    pub fn targeted(
        &self,
        bundle: &Bundle,
        state: &IndexState,
    ) -> Result<Arc<Targeted>, TargetError> {
        let key = (bundle.namespace().unwrap_or_default(), bundle.name_any());
        let selector = self.namespace_selectors.for_bundle(bundle);
        let cache_key = CacheKey::of(bundle, selector.as_ref(), state);
        if let Some((kept_key, kept)) = lock(&self.entries).get(&key)
            && *kept_key == cache_key
        {
            return Ok(kept.clone());
        }
        let fresh = Arc::new(targeted(bundle, selector.as_ref(), state)?);
        lock(&self.entries).insert(key, (cache_key, fresh.clone()));
        Ok(fresh)
    }

    /// Forgets a deleted Bundle.
    pub fn forget(&self, key: &BundleKey) {
        lock(&self.entries).remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::FleetIndex;
    use serde_json::json;

    const NS: &str = "fleet-default";

    fn cluster(name: &str, env: &str, status: serde_json::Value) -> fleet_api::Cluster {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": NS, "labels": {"env": env}},
            "spec": {},
            "status": status,
        }))
        .unwrap()
    }

    fn bundle(labels: serde_json::Value) -> Bundle {
        serde_json::from_value(json!({
            "metadata": {"name": "app", "namespace": NS, "labels": labels},
            "spec": {
                "defaultNamespace": "app",
                "targets": [{"clusterSelector": {"matchLabels": {"env": "prod"}}}],
            },
        }))
        .unwrap()
    }

    fn names(targeted: &Targeted) -> Vec<String> {
        targeted.clusters().map(|c| c.name.clone()).collect()
    }

    #[test]
    fn kept_targeting_holds_until_what_targeting_reads_changes() {
        let index = FleetIndex::new();
        let cache = TargetingCache::default();
        index.apply_cluster(&cluster("a", "prod", json!({})));
        index.apply_cluster(&cluster("b", "dev", json!({})));
        let app = bundle(json!({}));
        let targeted = || index.read(|state| cache.targeted(&app, state)).unwrap();
        let first = targeted();
        assert_eq!(names(&first), ["a"]);
        assert!(Arc::ptr_eq(&first, &targeted()));

        // A namespace assigned, or what only placement reads, keeps it.
        index.apply_cluster(&cluster("a", "prod", json!({"namespace": "cluster-a"})));
        index.apply_cluster(&cluster(
            "b",
            "dev",
            json!({"properties": {"zone": {"value": "1"}}}),
        ));
        assert!(Arc::ptr_eq(&first, &targeted()));

        // A label change re-targets.
        index.apply_cluster(&cluster("b", "prod", json!({})));
        let second = targeted();
        assert_eq!(names(&second), ["a", "b"]);
        assert!(Arc::ptr_eq(&second, &targeted()));

        // So does the Bundle's spec or labels.
        let mut changed = app.clone();
        changed.spec.paused = true;
        let third = index.read(|state| cache.targeted(&changed, state)).unwrap();
        assert!(!Arc::ptr_eq(&second, &third));
        let relabelled = bundle(json!({"team": "x"}));
        let fourth = index
            .read(|state| cache.targeted(&relabelled, state))
            .unwrap();
        assert!(!Arc::ptr_eq(&third, &fourth));

        // A deleted cluster leaves.
        index.delete_cluster(&cluster("a", "prod", json!({})));
        assert_eq!(names(&targeted()), ["b"]);
    }

    #[test]
    fn a_stored_bundle_is_known_by_uid_and_generation_labels_and_selector() {
        let index = FleetIndex::new();
        let cache = TargetingCache::default();
        index.apply_cluster(&cluster("a", "prod", json!({})));
        index.apply_cluster(&cluster("b", "dev", json!({})));
        let stored = |uid: &str, generation: i64, env: &str| {
            let mut bundle = bundle(json!({"fleet.cattle.io/repo-name": "repo"}));
            bundle.metadata.uid = Some(uid.to_string());
            bundle.metadata.generation = Some(generation);
            bundle.spec.targets[0].cluster_selector =
                Some(serde_json::from_value(json!({"matchLabels": {"env": env}})).unwrap());
            bundle
        };
        let targeted = |bundle: &Bundle| index.read(|state| cache.targeted(bundle, state)).unwrap();
        let first = targeted(&stored("u1", 1, "prod"));
        assert_eq!(names(&first), ["a"]);
        // The spec is not read again while the generation stays: the API server moves it with every
        // spec change (the test below pins that of the embedded one).
        assert!(Arc::ptr_eq(&first, &targeted(&stored("u1", 1, "dev"))));
        // A new generation, or a re-created Bundle (new uid), is targeted again.
        let second = targeted(&stored("u1", 2, "dev"));
        assert_eq!(names(&second), ["b"]);
        let third = targeted(&stored("u2", 2, "dev"));
        assert!(!Arc::ptr_eq(&second, &third));
        // So is one whose namespace's restriction selector changed.
        let selector = fleet_target::selector::LabelSelector::from_labels([("team", "web")]);
        assert!(cache.namespace_selectors.set(NS, Some(selector.clone())));
        assert!(!cache.namespace_selectors.set(NS, Some(selector)));
        let fourth = targeted(&stored("u2", 2, "dev"));
        assert!(!Arc::ptr_eq(&third, &fourth));
        assert!(Arc::ptr_eq(&fourth, &targeted(&stored("u2", 2, "dev"))));
        assert!(cache.namespace_selectors.set(NS, None));
        assert!(!Arc::ptr_eq(&fourth, &targeted(&stored("u2", 2, "dev"))));
    }
}
