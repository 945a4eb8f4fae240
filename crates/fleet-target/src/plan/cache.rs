//! Each Bundle's targeting ([`Targeted`]: its targeted clusters, their option sets and deploymentIDs)
//! kept between plans. Targeting reads only the Bundle's spec and labels, its namespace's
//! GitRepoRestriction selector and what [`FleetState::targeting_version`] counts (Clusters' targeting
//! fields, ClusterGroups, BundleNamespaceMappings, mapped namespaces), so a kept result holds while
//! those are the same: a plan woken by BundleDeployment status, or by a Cluster getting its namespace,
//! plans only the rollout and the writes.
//!
//! The spec is known by the Bundle's uid and `metadata.generation`: the API server moves the generation on
//! every change outside metadata and status (the Bundle CRD has the status subresource), and a
//! re-created Bundle has a new uid. A Bundle without either (never stored) is known by a hash of its spec.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

use fleet_api::Bundle;

use crate::TargetError;
use crate::bundle_spec::{BundleSpecParts, read_bundle_spec};
use crate::model::ClusterKey;
use crate::rollout::RolloutStrategy;
use crate::selector::LabelSelector;
use crate::targeting::{Target, TargetingContext, compute_targets};

use super::options::{Hashes, OptionSets, TypedOptions};
use super::state::{BundleKey, FleetState};

/// The guarded value, also when another thread panicked holding the lock.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// A Bundle's targeting (for a Bundle without a placement block): what stays the same between plans
/// until the Bundle or what targeting reads changes.
pub struct Targeted {
    pub(super) manifest_id: String,
    pub(super) rollout: RolloutStrategy,
    pub(super) paused: bool,
    /// The clusters that get a BundleDeployment, in targeting's order (sorted), each with the index
    /// of its option set in `options`.
    pub(super) chosen: Vec<(ClusterKey, usize)>,
    pub(super) options: Vec<TypedOptions>,
}

impl Targeted {
    /// The clusters that get a BundleDeployment, sorted.
    pub fn clusters(&self) -> impl Iterator<Item = &ClusterKey> {
        self.chosen.iter().map(|(cluster, _)| cluster)
    }

    /// Each chosen cluster with its deploymentID.
    pub(super) fn ids(&self) -> Vec<(&ClusterKey, &str)> {
        self.chosen
            .iter()
            .map(|(cluster, set)| (cluster, self.options[*set].deployment_id.as_str()))
            .collect()
    }
}

/// The Bundle's spec split into its parts.
pub(super) fn parts_of(bundle: &Bundle) -> Result<BundleSpecParts, TargetError> {
    static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();
    read_bundle_spec(
        bundle.metadata.namespace.as_deref().unwrap_or_default(),
        bundle.metadata.name.as_deref().unwrap_or_default(),
        bundle.metadata.labels.as_ref().unwrap_or(&NO_LABELS),
        &bundle.spec,
    )
}

/// Fleet targeting of `bundle` (without its placement stage) against `state`, with each target's
/// option set converted and hashed. The GitRepoRestrictions' `namespace_selector` goes on every
/// target's options after its customizations are merged, as Fleet's targeting puts it there.
pub fn targeted(
    bundle: &Bundle,
    namespace_selector: Option<&LabelSelector>,
    state: &FleetState,
    hashes: Hashes,
) -> Result<Targeted, TargetError> {
    let parts = parts_of(bundle)?;
    let namespaces = state.bundle_namespaces(&parts.targeting);
    let targeting = compute_targets(
        &state.clusters,
        &parts.targeting,
        &namespaces,
        &context_with(namespace_selector),
    )?;
    let manifest_id = (hashes.manifest_id)(&bundle.spec.resources);
    let sets = OptionSets::new(&manifest_id, hashes.deployment_id);
    Ok(Targeted::of(parts, &targeting.targets, sets))
}

impl Targeted {
    /// The Bundle's `targets` with their option sets (`sets` may know some already).
    pub(super) fn of(parts: BundleSpecParts, targets: &[Target], sets: OptionSets<'_>) -> Targeted {
        let chosen = targets
            .iter()
            .map(|t| (t.cluster.clone(), sets.index_of(t)))
            .collect();
        Targeted {
            manifest_id: sets.manifest_id.to_string(),
            options: sets.into_typed(),
            rollout: parts.rollout,
            paused: parts.paused,
            chosen,
        }
    }
}

/// What targeting takes from outside the Bundle: its namespace's GitRepoRestriction selector.
pub(super) fn context_with(namespace_selector: Option<&LabelSelector>) -> TargetingContext {
    TargetingContext {
        allowed_target_namespace_selector: namespace_selector.cloned(),
        ..TargetingContext::default()
    }
}

/// Kept targeting results, by Bundle.
#[derive(Default)]
pub struct TargetingCache {
    entries: Mutex<HashMap<BundleKey, (CacheKey, Arc<Targeted>)>>,
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
    /// `None` when the spec of an unstored Bundle does not serialize: it is then not kept.
    fn of(bundle: &Bundle) -> Option<Self> {
        let meta = &bundle.metadata;
        if let (Some(uid), Some(generation)) = (&meta.uid, meta.generation) {
            return Some(SpecVersion::Stored {
                uid: uid.clone(),
                generation,
            });
        }
        let mut hasher = std::hash::DefaultHasher::new();
        serde_json::to_vec(&bundle.spec).ok()?.hash(&mut hasher);
        Some(SpecVersion::Hashed(hasher.finish()))
    }
}

impl CacheKey {
    fn of(
        bundle: &Bundle,
        namespace_selector: Option<&LabelSelector>,
        state: &FleetState,
    ) -> Option<Self> {
        Some(CacheKey {
            spec: SpecVersion::of(bundle)?,
            labels: bundle.metadata.labels.clone().unwrap_or_default(),
            namespace_selector: namespace_selector.cloned(),
            targeting_version: state.targeting_version,
        })
    }
}

impl TargetingCache {
    /// `bundle`'s targeting against `state` (with its namespace's restriction selector): the kept one when
    /// nothing it reads changed, else computed (and kept). A targeting error is not kept.
    pub fn targeted(
        &self,
        bundle: &Bundle,
        selector: Option<&LabelSelector>,
        state: &FleetState,
        hashes: Hashes,
    ) -> Result<Arc<Targeted>, TargetError> {
        let key = (
            bundle.metadata.namespace.clone().unwrap_or_default(),
            bundle.metadata.name.clone().unwrap_or_default(),
        );
        let Some(cache_key) = CacheKey::of(bundle, selector, state) else {
            return Ok(Arc::new(targeted(bundle, selector, state, hashes)?));
        };
        if let Some((kept_key, kept)) = lock(&self.entries).get(&key)
            && *kept_key == cache_key
        {
            return Ok(kept.clone());
        }
        let fresh = Arc::new(targeted(bundle, selector, state, hashes)?);
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
    use crate::model::ClusterInfo;
    use crate::selector::SelectorExt;
    use serde_json::json;

    const NS: &str = "fleet-default";

    const HASHES: Hashes = Hashes {
        manifest_id: |_| "s-1".to_string(),
        deployment_id: |manifest_id, _| format!("{manifest_id}:o"),
    };

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

    fn cluster(name: &str, env: &str) -> ClusterInfo {
        ClusterInfo::new(NS, name, [("env", env)])
    }

    #[test]
    fn kept_targeting_holds_until_what_targeting_reads_changes() {
        let mut state = FleetState::default();
        let cache = TargetingCache::default();
        state.apply_cluster(cluster("a", "prod"), String::new());
        state.apply_cluster(cluster("b", "dev"), String::new());
        let app = bundle(json!({}));
        let targeted = |state: &FleetState| cache.targeted(&app, None, state, HASHES).unwrap();
        let first = targeted(&state);
        assert_eq!(names(&first), ["a"]);
        assert!(Arc::ptr_eq(&first, &targeted(&state)));

        // A namespace assigned, or what only placement reads, keeps it.
        state.apply_cluster(cluster("a", "prod"), "cluster-a".into());
        let mut zoned = cluster("b", "dev");
        zoned.properties.insert("zone".into(), "1".into());
        state.apply_cluster(zoned, String::new());
        assert!(Arc::ptr_eq(&first, &targeted(&state)));

        // A label change re-targets.
        state.apply_cluster(cluster("b", "prod"), String::new());
        let second = targeted(&state);
        assert_eq!(names(&second), ["a", "b"]);
        assert!(Arc::ptr_eq(&second, &targeted(&state)));

        // So does the Bundle's spec or labels.
        let mut changed = app.clone();
        changed.spec.paused = true;
        let third = cache.targeted(&changed, None, &state, HASHES).unwrap();
        assert!(!Arc::ptr_eq(&second, &third));
        let relabelled = bundle(json!({"team": "x"}));
        let fourth = cache.targeted(&relabelled, None, &state, HASHES).unwrap();
        assert!(!Arc::ptr_eq(&third, &fourth));

        // A deleted cluster leaves.
        state.delete_cluster(&ClusterKey::new(NS, "a"));
        assert_eq!(names(&targeted(&state)), ["b"]);
    }

    #[test]
    fn a_stored_bundle_is_known_by_uid_and_generation_labels_and_selector() {
        let mut state = FleetState::default();
        let cache = TargetingCache::default();
        state.apply_cluster(cluster("a", "prod"), String::new());
        state.apply_cluster(cluster("b", "dev"), String::new());
        let stored = |uid: &str, generation: i64, env: &str| {
            let mut bundle = bundle(json!({"fleet.cattle.io/repo-name": "repo"}));
            bundle.metadata.uid = Some(uid.to_string());
            bundle.metadata.generation = Some(generation);
            bundle.spec.targets[0].cluster_selector =
                Some(LabelSelector::from_labels([("env", env)]));
            bundle
        };
        let targeted = |bundle: &Bundle, selector: Option<&LabelSelector>| {
            cache.targeted(bundle, selector, &state, HASHES).unwrap()
        };
        let first = targeted(&stored("u1", 1, "prod"), None);
        assert_eq!(names(&first), ["a"]);
        // The spec is not read again while the generation stays: the API server moves it with every
        // spec change.
        assert!(Arc::ptr_eq(
            &first,
            &targeted(&stored("u1", 1, "dev"), None)
        ));
        // A new generation, or a re-created Bundle (new uid), is targeted again.
        let second = targeted(&stored("u1", 2, "dev"), None);
        assert_eq!(names(&second), ["b"]);
        let third = targeted(&stored("u2", 2, "dev"), None);
        assert!(!Arc::ptr_eq(&second, &third));
        // So is one whose namespace's restriction selector changed.
        let selector = LabelSelector::from_labels([("team", "web")]);
        let fourth = targeted(&stored("u2", 2, "dev"), Some(&selector));
        assert!(!Arc::ptr_eq(&third, &fourth));
        assert!(Arc::ptr_eq(
            &fourth,
            &targeted(&stored("u2", 2, "dev"), Some(&selector))
        ));
        assert!(!Arc::ptr_eq(
            &fourth,
            &targeted(&stored("u2", 2, "dev"), None)
        ));
    }
}
