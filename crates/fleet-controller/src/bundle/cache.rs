//! Each Bundle's targeting ([`Targeted`]: its targeted clusters, their option sets and deploymentIDs)
//! kept between reconciles. Targeting reads only the Bundle's spec and labels and what the index counts in
//! `targeting_version` (Clusters' targeting fields, ClusterGroups, BundleNamespaceMappings, mapped
//! namespaces), so a kept result holds while those are the same: a reconcile woken by BundleDeployment
//! status, or by a Cluster getting its namespace, plans only the rollout and the writes.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use fleet_api::Bundle;
use fleet_target::TargetError;
use kube::ResourceExt;

use crate::bundle::target::{Targeted, targeted};
use crate::context::lock;
use crate::index::{BundleKey, IndexState};

/// Kept targeting results, by Bundle.
#[derive(Default)]
pub struct TargetingCache {
    entries: Mutex<HashMap<BundleKey, (CacheKey, Arc<Targeted>)>>,
}

/// What a kept result was computed from.
#[derive(PartialEq)]
struct CacheKey {
    /// A hash of the spec as JSON (the spec itself can be large: it holds the resources).
    spec: u64,
    labels: BTreeMap<String, String>,
    targeting_version: u64,
}

impl CacheKey {
    fn of(bundle: &Bundle, state: &IndexState) -> Self {
        let mut hasher = std::hash::DefaultHasher::new();
        serde_json::to_vec(&bundle.spec)
            .unwrap_or_default()
            .hash(&mut hasher);
        CacheKey {
            spec: hasher.finish(),
            labels: bundle.labels().clone(),
            targeting_version: state.targeting_version,
        }
    }
}

impl TargetingCache {
    /// `bundle`'s targeting against `state`: the kept one when nothing it reads changed, else computed
    /// (and kept). A targeting error is not kept.
    pub fn targeted(
        &self,
        bundle: &Bundle,
        state: &IndexState,
    ) -> Result<Arc<Targeted>, TargetError> {
        let key = (bundle.namespace().unwrap_or_default(), bundle.name_any());
        let cache_key = CacheKey::of(bundle, state);
        if let Some((kept_key, kept)) = lock(&self.entries).get(&key)
            && *kept_key == cache_key
        {
            return Ok(kept.clone());
        }
        let fresh = Arc::new(targeted(bundle, state)?);
        lock(&self.entries).insert(key, (cache_key, fresh.clone()));
        Ok(fresh)
    }

    /// Forgets a deleted Bundle.
    pub fn forget(&self, key: &BundleKey) {
        lock(&self.entries).remove(key);
    }
}
