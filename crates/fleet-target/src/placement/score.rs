//! Scores and ordering. A cluster's score is the triple (topology spread, affinity, existing
//! placement bonus), compared **lexicographically** as KubeFleet does (spread dominates
//! affinity). Affinity sums the preferred terms: the full weight when a term's label selector
//! matches and it has no sorter; with a property sorter, the weight interpolated between the
//! minimum and maximum of the property over all candidate clusters (ineligible ones included),
//! rounded half away from zero — 0 when the cluster lacks the property or all values are equal.
//!
//! **Tie-break** (documented, deterministic): among equal scores the cluster whose name is
//! lexicographically *larger* wins, then the larger namespace — KubeFleet's rule, so its
//! scenarios hold unchanged (OCM breaks ties the other way).

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use crate::model::{ClusterInfo, ClusterKey, UnixSeconds};
use crate::selector::SelectorExt;

use super::filter::property_value;
use super::policy::{PreferredTerm, SortOrder};

/// A cluster's score; the derived order is lexicographic in field order.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterScore {
    pub topology_spread: i64,
    pub affinity: i64,
    /// 1 when the cluster already holds this placement from an older policy, else 0.
    pub existing_placement: i64,
}

/// Orders (score, cluster) pairs best first: higher score, then larger name, then larger
/// namespace.
pub fn best_first(a: (&ClusterScore, &ClusterKey), b: (&ClusterScore, &ClusterKey)) -> Ordering {
    best_first_by_name(
        (a.0, &a.1.name, &a.1.namespace),
        (b.0, &b.1.name, &b.1.namespace),
    )
}

/// [`best_first`] over (score, name, namespace), without building keys.
pub fn best_first_by_name(
    a: (&ClusterScore, &str, &str),
    b: (&ClusterScore, &str, &str),
) -> Ordering {
    b.0.cmp(a.0)
        .then_with(|| b.1.cmp(a.1))
        .then_with(|| b.2.cmp(a.2))
}

/// Preferred-affinity scorer with each sorter's property values read once per candidate and
/// their extrema precomputed over all candidates.
#[derive(Debug, Clone)]
pub struct AffinityScorer<'p> {
    terms: &'p [PreferredTerm],
    /// Per term with a sorter: each candidate's value and the (min, max) over the candidates.
    sorted: Vec<Option<SorterValues>>,
}

#[derive(Debug, Clone)]
struct SorterValues {
    values: Vec<Option<f64>>,
    extrema: Option<(f64, f64)>,
}

impl<'p> AffinityScorer<'p> {
    /// Prepares scoring of `candidates` (addressed by index in [`AffinityScorer::score`]).
    pub fn new(terms: &'p [PreferredTerm], candidates: &[&ClusterInfo], now: UnixSeconds) -> Self {
        let sorted = terms
            .iter()
            .map(|t| {
                let sorter = t.preference.property_sorter.as_ref()?;
                let values: Vec<Option<f64>> = candidates
                    .iter()
                    .map(|c| property_value(c, &sorter.name, now))
                    .collect();
                let extrema = values
                    .iter()
                    .flatten()
                    .fold(None, |acc: Option<(f64, f64)>, &v| {
                        Some(acc.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))))
                    });
                Some(SorterValues { values, extrema })
            })
            .collect();
        AffinityScorer { terms, sorted }
    }

    /// The affinity score of candidate `idx` (which is `cluster`).
    pub fn score(&self, idx: usize, cluster: &ClusterInfo) -> i64 {
        self.terms
            .iter()
            .zip(&self.sorted)
            .filter(|(t, _)| t.weight != 0)
            .map(|(t, sorted)| {
                let pref = &t.preference;
                if pref
                    .label_selector
                    .as_ref()
                    .is_some_and(|s| !s.matches(&cluster.labels))
                {
                    return 0;
                }
                let (Some(sorter), Some(sorted)) = (&pref.property_sorter, sorted) else {
                    return i64::from(t.weight);
                };
                let (Some((lo, hi)), Some(v)) = (sorted.extrema, sorted.values[idx]) else {
                    return 0;
                };
                interpolate(v, lo, hi, t.weight, sorter.sort_order)
            })
            .sum()
    }
}

/// `round((v−min)/(max−min)·w)` for Descending, `round((1−(v−min)/(max−min))·w)` for
/// Ascending; 0 when `min == max`.
pub fn interpolate(v: f64, min: f64, max: f64, weight: i32, order: SortOrder) -> i64 {
    if max <= min {
        return 0;
    }
    let ratio = (v - min) / (max - min);
    let ratio = match order {
        SortOrder::Descending => ratio,
        SortOrder::Ascending => 1.0 - ratio,
    };
    (ratio * f64::from(weight)).round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(ts: i64, a: i64, o: i64) -> ClusterScore {
        ClusterScore {
            topology_spread: ts,
            affinity: a,
            existing_placement: o,
        }
    }

    fn sorted(mut items: Vec<(ClusterScore, ClusterKey)>) -> Vec<String> {
        items.sort_by(|a, b| best_first((&a.0, &a.1), (&b.0, &b.1)));
        items.into_iter().map(|(_, k)| k.name).collect()
    }

    /// S6: equal scores sort by name, largest first.
    #[test]
    fn s6_tie_break() {
        let k = |n: &str| ClusterKey::new("ns", n);
        assert_eq!(
            sorted(vec![
                (score(0, 0, 0), k("cluster-3")),
                (score(0, 0, 0), k("cluster-4"))
            ]),
            ["cluster-4", "cluster-3"]
        );
    }

    /// S7: lexicographic ordering of (TS, A, O).
    #[test]
    fn s7_lexicographic() {
        let k = |n: &str| ClusterKey::new("ns", n);
        assert_eq!(
            sorted(vec![
                (score(0, 10, 0), k("c2")),
                (score(0, 10, 1), k("c1")),
                (score(1, 10, 1), k("c3")),
                (score(1, 20, 0), k("c4")),
                (score(2, 30, 0), k("c5")),
            ]),
            ["c5", "c4", "c3", "c1", "c2"]
        );
    }

    /// S8: spread dominates affinity.
    #[test]
    fn s8_spread_dominates() {
        let k = |n: &str| ClusterKey::new("ns", n);
        assert_eq!(
            sorted(vec![
                (score(1, 20, 0), k("bravelion")),
                (score(2, 10, 1), k("smartcat"))
            ])[0],
            "smartcat"
        );
    }

    /// S10: interpolation for v=4 between 2 and 7.
    #[test]
    fn s10_interpolation() {
        assert_eq!(interpolate(4.0, 2.0, 7.0, 7, SortOrder::Descending), 3);
        assert_eq!(interpolate(4.0, 2.0, 7.0, 8, SortOrder::Descending), 3);
        assert_eq!(interpolate(4.0, 2.0, 7.0, 8, SortOrder::Ascending), 5);
        assert_eq!(interpolate(4.0, 2.0, 7.0, 7, SortOrder::Ascending), 4);
        assert_eq!(interpolate(2.0, 2.0, 7.0, 100, SortOrder::Ascending), 100);
        assert_eq!(interpolate(7.0, 2.0, 7.0, 100, SortOrder::Ascending), 0);
        assert_eq!(interpolate(3.0, 3.0, 3.0, 100, SortOrder::Ascending), 0);
    }
}
