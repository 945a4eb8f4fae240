//! Topology spread (KubeFleet's rules). Domains are the values of `topologyKey` among all
//! candidate clusters (domains with no placement count 0). For a cluster in a domain with
//! `count`, with `s` the smallest count, `s2` the second smallest, `L` the largest and
//! `skew = L − s`:
//! - `L == s`: change +1, violated iff `skew + 1 > maxSkew`;
//! - `count == s` and `s ≠ s2`: change −1, violated iff `skew − 1 > maxSkew`;
//! - `count == L`: change +1, violated iff `skew + 1 > maxSkew`;
//! - otherwise: change 0, violated iff `skew > maxSkew`.
//!
//! `DoNotSchedule` constraints are checked first; a violation filters the cluster. Otherwise the
//! topology score decreases by the change, and a violated `ScheduleAnyway` constraint costs 1000.
//! A cluster without the key scores 0 for that constraint.

use std::collections::HashMap;

use crate::model::ClusterInfo;

use super::policy::{TopologySpreadConstraint, WhenUnsatisfiable};

const SCHEDULE_ANYWAY_PENALTY: i64 = 1000;

/// Smallest, second smallest and largest domain count of one constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkewStats {
    smallest: i64,
    second: i64,
    largest: i64,
}

impl SkewStats {
    /// Stats of a list of domain counts (`None` when there are no domains).
    pub fn of(counts: &[i64]) -> Option<Self> {
        let mut iter = counts.iter().copied();
        let first = iter.next()?;
        let (mut smallest, mut second, mut largest) = (first, i64::MAX, first);
        for c in iter {
            if c < smallest {
                second = smallest;
                smallest = c;
            } else if c < second {
                second = c;
            }
            largest = largest.max(c);
        }
        if second == i64::MAX {
            second = smallest;
        }
        Some(SkewStats {
            smallest,
            second,
            largest,
        })
    }

    /// Whether placing in a domain with `count` violates `max_skew`, and the skew change.
    pub fn will_violate(&self, count: i64, max_skew: i64) -> (bool, i64) {
        let (s, s2, l) = (self.smallest, self.second, self.largest);
        let skew = l - s;
        if l == s {
            (skew + 1 > max_skew, 1)
        } else if count == s && s != s2 {
            (skew - 1 > max_skew, -1)
        } else if count == l {
            (skew + 1 > max_skew, 1)
        } else {
            (skew > max_skew, 0)
        }
    }
}

/// Whether placing in a domain with `count` violates `max_skew`, and the skew change.
pub fn will_violate(counts: &[i64], count: i64, max_skew: i64) -> (bool, i64) {
    SkewStats::of(counts).map_or((false, 0), |s| s.will_violate(count, max_skew))
}

/// Per-constraint domain counts, updated as clusters are picked. Clusters are addressed by
/// their domain indices ([`SpreadState::domains_of`]) so that evaluating many clusters many
/// times costs no lookups.
#[derive(Debug, Clone)]
pub struct SpreadState<'p> {
    constraints: &'p [TopologySpreadConstraint],
    /// For each constraint: domain value → index into `counts`.
    index: Vec<HashMap<String, usize>>,
    counts: Vec<Vec<i64>>,
}

/// The spread evaluation of one cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpreadVerdict {
    /// Violates the `DoNotSchedule` constraint with this index.
    Violated(usize),
    /// Topology spread score.
    Score(i64),
}

/// A cluster's domain (index) under each constraint; `None` without the topology label.
pub type Domains = Vec<Option<usize>>;

impl<'p> SpreadState<'p> {
    /// Domains from `clusters` (all candidates), counts from `placed`.
    pub fn new<'c>(
        constraints: &'p [TopologySpreadConstraint],
        clusters: impl Iterator<Item = &'c ClusterInfo> + Clone,
        placed: impl Iterator<Item = &'c ClusterInfo>,
    ) -> Self {
        let index: Vec<HashMap<String, usize>> = constraints
            .iter()
            .map(|c| {
                let values: std::collections::BTreeSet<&String> = clusters
                    .clone()
                    .filter_map(|cl| cl.labels.get(&c.topology_key))
                    .collect();
                values
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| (v.clone(), i))
                    .collect()
            })
            .collect();
        let counts = index.iter().map(|m| vec![0; m.len()]).collect();
        let mut state = SpreadState {
            constraints,
            index,
            counts,
        };
        for cl in placed {
            let domains = state.domains_of(cl);
            state.place(&domains);
        }
        state
    }

    /// The cluster's domain under each constraint.
    pub fn domains_of(&self, cluster: &ClusterInfo) -> Domains {
        self.constraints
            .iter()
            .zip(&self.index)
            .map(|(c, m)| {
                cluster
                    .labels
                    .get(&c.topology_key)
                    .and_then(|v| m.get(v).copied())
            })
            .collect()
    }

    /// Records a placement in these domains.
    pub fn place(&mut self, domains: &[Option<usize>]) {
        for (counts, d) in self.counts.iter_mut().zip(domains) {
            if let Some(i) = d {
                counts[*i] += 1;
            }
        }
    }

    /// Skew statistics of each constraint, for evaluating many clusters.
    pub fn snapshot(&self) -> Vec<Option<SkewStats>> {
        self.counts.iter().map(|c| SkewStats::of(c)).collect()
    }

    /// Evaluates a cluster (by its domains) against every constraint.
    pub fn evaluate(
        &self,
        domains: &[Option<usize>],
        stats: &[Option<SkewStats>],
    ) -> SpreadVerdict {
        let mut score = 0;
        for pass in [
            WhenUnsatisfiable::DoNotSchedule,
            WhenUnsatisfiable::ScheduleAnyway,
        ] {
            for (i, c) in self.constraints.iter().enumerate() {
                if c.when_unsatisfiable != pass {
                    continue;
                }
                let (Some(d), Some(st)) = (domains[i], stats[i]) else {
                    continue;
                };
                let (violated, change) = st.will_violate(self.counts[i][d], c.max_skew);
                match (violated, pass) {
                    (true, WhenUnsatisfiable::DoNotSchedule) => return SpreadVerdict::Violated(i),
                    (true, WhenUnsatisfiable::ScheduleAnyway) => score -= SCHEDULE_ANYWAY_PENALTY,
                    (false, _) => score -= change,
                }
            }
        }
        SpreadVerdict::Score(score)
    }

    /// The status message for a violated constraint.
    pub fn violation_message(&self, constraint: usize) -> String {
        let c = &self.constraints[constraint];
        format!(
            "violated doNotSchedule topology spread constraint {:?} (max skew {})",
            c.topology_key, c.max_skew
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// S21: counts {1,1,3}, placing in a count-1 domain with maxSkew 1.
    #[test]
    fn s21_skew_already_violated() {
        assert_eq!(will_violate(&[1, 1, 3], 1, 1), (true, 0));
    }

    /// S22: counts {1,2,5}, placing in the 5-domain.
    #[test]
    fn s22_placing_in_the_largest_domain() {
        assert_eq!(will_violate(&[1, 2, 5], 5, 5), (false, 1));
        assert_eq!(will_violate(&[1, 2, 5], 5, 2), (true, 1));
    }

    #[test]
    fn will_violate_table() {
        assert_eq!(will_violate(&[0, 0, 0], 0, 1), (false, 1));
        assert_eq!(will_violate(&[1, 1, 1], 1, 0), (true, 1));
        assert_eq!(will_violate(&[0, 1, 1], 0, 1), (false, -1));
        assert_eq!(will_violate(&[0, 1, 2], 1, 1), (true, 0));
        assert_eq!(will_violate(&[], 0, 1), (false, 0));
    }

    /// S20: three constraints over five clusters with placements on c1 and c5.
    #[test]
    fn s20_combined_constraints() {
        let c = |name: &str, labels: &[(&'static str, &'static str)]| {
            ClusterInfo::new("ns", name, labels.iter().copied())
        };
        let clusters = [
            c("c1", &[("k1", "v1"), ("k2", "v1"), ("k3", "v1")]),
            c("c2", &[("k1", "v2"), ("k2", "v1"), ("k3", "v2")]),
            c("c3", &[("k1", "v2"), ("k2", "v2"), ("k3", "v2")]),
            c("c4", &[("k1", "v2"), ("k2", "v2"), ("k3", "v1")]),
            c("c5", &[("k3", "v1")]),
        ];
        let constraint = |key: &str, skew: i64, when: WhenUnsatisfiable| TopologySpreadConstraint {
            max_skew: skew,
            topology_key: key.into(),
            when_unsatisfiable: when,
        };
        let constraints = [
            constraint("k1", 1, WhenUnsatisfiable::DoNotSchedule),
            constraint("k2", 1, WhenUnsatisfiable::ScheduleAnyway),
            constraint("k3", 2, WhenUnsatisfiable::ScheduleAnyway),
        ];
        let placed = [&clusters[0], &clusters[4]];
        let state = SpreadState::new(&constraints, clusters.iter(), placed.into_iter());
        let stats = state.snapshot();
        let verdicts: Vec<SpreadVerdict> = clusters
            .iter()
            .map(|cl| state.evaluate(&state.domains_of(cl), &stats))
            .collect();
        assert_eq!(
            state.violation_message(0),
            "violated doNotSchedule topology spread constraint \"k1\" (max skew 1)"
        );
        assert_eq!(
            verdicts,
            [
                SpreadVerdict::Violated(0),
                SpreadVerdict::Score(-998),
                SpreadVerdict::Score(3),
                SpreadVerdict::Score(-998),
                SpreadVerdict::Score(-1000),
            ]
        );
    }
}
