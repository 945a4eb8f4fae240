//! Incremental status aggregation: a [`Tally`] counts the BundleDeployments of one aggregate (a GitRepo,
//! a cluster namespace) by state and keeps the non-ready ones sorted by name, so that a BundleDeployment
//! change costs O(log n) and building a summary costs O(10) instead of a scan over every
//! BundleDeployment. The index updates tallies from watch deltas ([`crate::index`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use fleet_api::{BundleState, BundleSummary, ResourceCounts};
use fleet_target::model::ClusterKey;

use super::resources::{RepoResources, add_counts, counts_of, sub_counts};
use super::stored::StoredDeployment;
use super::summary::{MAX_NON_READY, non_ready_entry};

/// BundleDeployments of one aggregate by state.
#[derive(Debug, Default)]
pub struct Tally {
    desired: i64,
    ready: i64,
    /// Count per known non-ready state (Fleet's rank as the key).
    counts: BTreeMap<u8, i64>,
    /// Non-ready BundleDeployments by rank, then by the name the summary lists them under.
    non_ready: BTreeMap<u8, BTreeMap<String, (BundleState, Arc<StoredDeployment>)>>,
    /// The sum of the BundleDeployments' `resourceCounts`.
    resource_counts: ResourceCounts,
}

impl Tally {
    /// Counts `bd`, listed as `name`, in `state`.
    pub fn add(&mut self, name: &str, state: &BundleState, bd: &Arc<StoredDeployment>) {
        self.desired += 1;
        add_counts(&mut self.resource_counts, &counts_of(bd));
        match state {
            BundleState::Ready => self.ready += 1,
            BundleState::Other(_) => {}
            known => {
                *self.counts.entry(known.rank()).or_default() += 1;
                self.non_ready
                    .entry(known.rank())
                    .or_default()
                    .insert(name.to_string(), (known.clone(), Arc::clone(bd)));
            }
        }
    }

    /// Removes what [`Tally::add`] counted for `name` in `state` (`bd` as it was added).
    pub fn remove(&mut self, name: &str, state: &BundleState, bd: &StoredDeployment) {
        self.desired -= 1;
        sub_counts(&mut self.resource_counts, &counts_of(bd));
        match state {
            BundleState::Ready => self.ready -= 1,
            BundleState::Other(_) => {}
            known => {
                let rank = known.rank();
                if let Some(count) = self.counts.get_mut(&rank) {
                    *count -= 1;
                    if *count == 0 {
                        self.counts.remove(&rank);
                    }
                }
                if let Some(names) = self.non_ready.get_mut(&rank) {
                    names.remove(name);
                    if names.is_empty() {
                        self.non_ready.remove(&rank);
                    }
                }
            }
        }
    }

    /// Nothing counted.
    pub fn is_empty(&self) -> bool {
        self.desired == 0
    }

    /// Every counted BundleDeployment is Ready.
    pub fn all_ready(&self) -> bool {
        self.ready == self.desired
    }

    pub fn desired(&self) -> i64 {
        self.desired
    }

    pub fn ready(&self) -> i64 {
        self.ready
    }

    /// The sum of the counted BundleDeployments' `resourceCounts`.
    pub fn resource_counts(&self) -> &ResourceCounts {
        &self.resource_counts
    }

    /// The summary a full scan in name order would build: counts per state and the first
    /// [`MAX_NON_READY`] non-ready entries by name.
    pub fn summary(&self) -> BundleSummary {
        let mut summary = BundleSummary {
            desired_ready: self.desired,
            ready: self.ready,
            ..BundleSummary::default()
        };
        for (rank, count) in &self.counts {
            let counter = match rank {
                7 => &mut summary.err_applied,
                6 => &mut summary.wait_applied,
                5 => &mut summary.modified,
                4 => &mut summary.out_of_sync,
                3 => &mut summary.pending,
                2 => &mut summary.not_ready,
                _ => continue,
            };
            *counter = *count;
        }
        let mut first: Vec<(&String, &(BundleState, Arc<StoredDeployment>))> = self
            .non_ready
            .values()
            .flat_map(|names| names.iter().take(MAX_NON_READY))
            .collect();
        first.sort_by(|a, b| a.0.cmp(b.0));
        summary.non_ready_resources = first
            .into_iter()
            .take(MAX_NON_READY)
            .map(|(name, (state, bd))| non_ready_entry(name, state, Some(bd.as_ref())))
            .collect();
        summary
    }

    /// The highest-ranked non-ready state and the first BundleDeployment (by name) in it.
    pub fn worst(&self) -> Option<(&BundleState, &Arc<StoredDeployment>)> {
        self.non_ready
            .values()
            .next_back()
            .and_then(|names| names.values().next())
            .map(|(state, bd)| (state, bd))
    }
}

/// A GitRepo's tally, plus per-cluster counts for `readyClusters` / `desiredReadyClusters` and
/// `perClusterResourceCounts`, and the objects for `resources`.
#[derive(Debug, Default)]
pub struct RepoTally {
    pub tally: Tally,
    /// Per cluster: (BundleDeployments, those not Ready).
    clusters: BTreeMap<ClusterKey, (i64, i64)>,
    /// Per cluster: the sum of its BundleDeployments' `resourceCounts`.
    cluster_counts: BTreeMap<ClusterKey, ResourceCounts>,
    pub resources: RepoResources,
}

impl RepoTally {
    pub fn add(
        &mut self,
        name: &str,
        cluster: &ClusterKey,
        state: &BundleState,
        bd: &Arc<StoredDeployment>,
    ) {
        self.tally.add(name, state, bd);
        let entry = self.clusters.entry(cluster.clone()).or_default();
        entry.0 += 1;
        if *state != BundleState::Ready {
            entry.1 += 1;
        }
        add_counts(
            self.cluster_counts.entry(cluster.clone()).or_default(),
            &counts_of(bd),
        );
        self.resources.add(name, cluster, bd);
    }

    /// Removes what [`RepoTally::add`] counted (`bd` as it was added).
    pub fn remove(
        &mut self,
        name: &str,
        cluster: &ClusterKey,
        state: &BundleState,
        bd: &StoredDeployment,
    ) {
        self.tally.remove(name, state, bd);
        self.resources.remove(name, cluster, bd);
        if let Some(entry) = self.clusters.get_mut(cluster) {
            entry.0 -= 1;
            if *state != BundleState::Ready {
                entry.1 -= 1;
            }
            if entry.0 <= 0 {
                self.clusters.remove(cluster);
                self.cluster_counts.remove(cluster);
            } else if let Some(counts) = self.cluster_counts.get_mut(cluster) {
                sub_counts(counts, &counts_of(bd));
            }
        }
    }

    /// `perClusterResourceCounts`: every cluster with a BundleDeployment of the repo, as
    /// `namespace/name`, with the sum of their `resourceCounts`.
    pub fn per_cluster_resource_counts(&self) -> BTreeMap<String, ResourceCounts> {
        self.cluster_counts
            .iter()
            .map(|(cluster, counts)| (cluster.to_string(), counts.clone()))
            .collect()
    }

    /// Clusters with at least one BundleDeployment of the repo.
    pub fn desired_clusters(&self) -> i64 {
        self.clusters.len() as i64
    }

    /// Clusters whose BundleDeployments of the repo are all Ready.
    pub fn ready_clusters(&self) -> i64 {
        self.clusters.values().filter(|(_, bad)| *bad == 0).count() as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::summary::increment;
    use fleet_api::{BundleDeployment, BundleDeploymentSpec};

    fn bd() -> Arc<StoredDeployment> {
        Arc::new(StoredDeployment::unshared(BundleDeployment::new(
            "b",
            BundleDeploymentSpec::default(),
        )))
    }

    #[test]
    fn the_tally_builds_the_summary_a_full_scan_builds() {
        let states = [
            BundleState::Pending,
            BundleState::Ready,
            BundleState::ErrApplied,
            BundleState::NotReady,
            BundleState::WaitApplied,
        ];
        let mut tally = Tally::default();
        let mut entries = Vec::new();
        for i in 0..40 {
            let state = states[i % states.len()].clone();
            let name = format!("ns/c{:02}", (i * 7) % 40);
            tally.add(&name, &state, &bd());
            entries.push((name, state));
        }
        // Move some around and remove others, as watch deltas would.
        for (name, state) in entries.iter_mut().take(8) {
            tally.remove(name, state, &bd());
            *state = BundleState::Ready;
            tally.add(name, state, &bd());
        }
        let (gone, gone_state) = entries.pop().unwrap();
        tally.remove(&gone, &gone_state, &bd());
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut scanned = BundleSummary::default();
        let plain = bd();
        for (name, state) in &entries {
            increment(&mut scanned, name, state, Some(&*plain));
        }
        assert_eq!(tally.summary(), scanned);
        assert_eq!(tally.desired(), 39);
        let (worst, _) = tally.worst().unwrap();
        assert_eq!(*worst, BundleState::ErrApplied);
        assert!(!tally.all_ready());
    }

    #[test]
    fn repo_tally_counts_ready_clusters() {
        let mut repo = RepoTally::default();
        let a = ClusterKey::new("ns", "a");
        let b = ClusterKey::new("ns", "b");
        repo.add("x/1", &a, &BundleState::Ready, &bd());
        repo.add("x/2", &a, &BundleState::NotReady, &bd());
        repo.add("y/1", &b, &BundleState::Ready, &bd());
        assert_eq!((repo.ready_clusters(), repo.desired_clusters()), (1, 2));
        repo.remove("x/2", &a, &BundleState::NotReady, &bd());
        assert_eq!((repo.ready_clusters(), repo.desired_clusters()), (2, 2));
        repo.remove("y/1", &b, &BundleState::Ready, &bd());
        assert_eq!(repo.desired_clusters(), 1);
    }
}
