//! The latest placement decisions of the placed Bundles, for their GitRepos' status, and the
//! placement-relevant view of each Cluster, so that a change to one wakes the placed Bundles. A leaf: the
//! context holds it, the Bundle, Cluster and GitRepo reconcilers fill and read it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use fleet_target::model::{ClusterInfo, ClusterKey, HealthCondition};
use fleet_target::plan::placement::Outcome;

use crate::index::BundleKey;
use crate::sync::lock;

/// The latest placement outcome of every Bundle that has a placement block, with the GitRepo it
/// came from (label `fleet.cattle.io/repo-name`).
/// Also the placement-relevant view of each Cluster, so a change to one wakes the placed Bundles.
#[derive(Debug, Default)]
pub struct Decisions {
    outcomes: Mutex<BTreeMap<BundleKey, (Option<String>, Outcome)>>,
    /// Bundles with a placement block, marked before they plan: a cluster change seen while a Bundle's first
    /// plan is under way (before it has an outcome) must still wake it.
    placed: Mutex<BTreeSet<BundleKey>>,
    clusters: Mutex<BTreeMap<ClusterKey, ClusterInfo>>,
}

impl Decisions {
    /// Marks `bundle` as placed (or not) before it plans, so that [`Decisions::cluster_seen`] wakes it.
    pub fn planning(&self, bundle: &BundleKey, placed: bool) {
        let mut set = lock(&self.placed);
        if placed {
            set.insert(bundle.clone());
        } else {
            set.remove(bundle);
        }
    }

    /// Records `bundle`'s outcome (`None`: no placement block); true when it changed.
    pub fn record(
        &self,
        bundle: &BundleKey,
        repo: Option<&str>,
        outcome: Option<&Outcome>,
    ) -> bool {
        let mut map = lock(&self.outcomes);
        match outcome {
            Some(outcome) => {
                let entry = (repo.map(str::to_string), outcome.clone());
                map.insert(bundle.clone(), entry.clone()) != Some(entry)
            }
            None => map.remove(bundle).is_some(),
        }
    }

    /// Records the placement-relevant view of a cluster (`None`: gone); returns the placed Bundles to
    /// wake when it changed. The heartbeat time is left out: its running out shows as a taint.
    pub fn cluster_seen(&self, key: &ClusterKey, info: Option<&ClusterInfo>) -> Vec<BundleKey> {
        let view = info.map(|info| {
            let mut view = info.clone();
            if let Some(health) = view.health.as_mut() {
                health.last_heartbeat = None;
                health.healthy = health.healthy.map(|h| HealthCondition {
                    status: h.status,
                    last_transition: 0,
                });
            }
            view
        });
        let changed = {
            let mut clusters = lock(&self.clusters);
            let old = match &view {
                Some(view) => clusters.insert(key.clone(), view.clone()),
                None => clusters.remove(key),
            };
            old != view
        };
        if changed {
            let mut bundles: BTreeSet<BundleKey> = lock(&self.outcomes).keys().cloned().collect();
            bundles.extend(lock(&self.placed).iter().cloned());
            bundles.into_iter().collect()
        } else {
            Vec::new()
        }
    }

    /// The outcomes of GitRepo `namespace/repo`'s Bundles, by Bundle name.
    pub fn of_repo(&self, namespace: &str, repo: &str) -> Vec<(String, Outcome)> {
        lock(&self.outcomes)
            .iter()
            .filter(|(key, (r, _))| key.0 == namespace && r.as_deref() == Some(repo))
            .map(|(key, (_, o))| (key.1.clone(), o.clone()))
            .collect()
    }
}
