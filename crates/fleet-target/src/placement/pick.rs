//! PickAll, PickFixed and PickN over the filtered and scored candidates, with the stability
//! rules: existing placements under the current policy are kept (only an untolerated `NoSelect`
//! taint, or the cluster leaving the targets, removes them); PickN scales out by adding the best
//! new clusters one at a time (re-evaluating topology spread after each pick) and scales in by
//! trimming not-yet-rolled-out placements first, then rolled-out ones, lowest score first
//! (unknown scores before any score, then smaller name first).
//!
//! Candidates are addressed by their index in key order, so a decision over 10,000 clusters
//! allocates per cluster only what it reports.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{ClusterInfo, ClusterKey};

use super::filter::{check_eligibility, check_required_affinity};
use super::policy::PlacementType;
use super::score::{AffinityScorer, ClusterScore, best_first_by_name};
use super::spread::{Domains, SpreadState, SpreadVerdict};
use super::status::{self, Stage, Unselected, UnselectedReason};
use super::taint::{check_existing_placement, check_new_placement};
use super::{
    Decision, ExistingPlacement, Origin, PlacementState, Removal, ScheduleInput, ScheduleResult,
};

/// Existing placements sorted into what stays, what is reconsidered and what goes.
struct Classified<'a> {
    /// Current-policy placements (with their candidate index) that stay unless scaled in.
    kept: Vec<(&'a ExistingPlacement, usize)>,
    /// Obsolete or unscheduled placements on live clusters, by candidate index: candidates like
    /// any other, picking one again reuses it.
    reconsidered: BTreeMap<usize, &'a ExistingPlacement>,
    removed: Vec<Removal>,
}

struct Run<'a, 'i> {
    input: &'i ScheduleInput<'a>,
    /// Candidates in key order, without duplicates.
    candidates: Vec<&'a ClusterInfo>,
}

/// A cluster that passed the filters, waiting to be picked.
struct Entry {
    idx: usize,
    affinity: i64,
    bonus: i64,
    domains: Domains,
    /// The `DoNotSchedule` constraint it violated at the last evaluation.
    violated: Option<usize>,
}

/// Runs the policy's picker (the policy is already validated).
pub(super) fn run(input: &ScheduleInput<'_>) -> ScheduleResult {
    let mut candidates: Vec<&ClusterInfo> = input.candidates.to_vec();
    // Callers usually pass clusters in index (key) order already.
    if !candidates.is_sorted_by(|a, b| sort_key(a) <= sort_key(b)) {
        candidates.sort_by(|a, b| sort_key(a).cmp(&sort_key(b)));
    }
    candidates.dedup_by(|a, b| sort_key(a) == sort_key(b));
    let run = Run { input, candidates };
    let classified = run.classify();
    let mut result = match input.policy.placement_type {
        PlacementType::PickAll => run.pick_all(classified),
        PlacementType::PickFixed => run.pick_fixed(classified),
        PlacementType::PickN => run.pick_n(classified),
    };
    if input.policy.placement_type != PlacementType::PickFixed {
        result.requeue_at = result
            .selected
            .iter()
            .filter_map(|d| run.index_of(&d.cluster))
            .filter_map(|i| {
                check_existing_placement(run.candidates[i], &input.policy.tolerations, input.now)
                    .ok()
                    .flatten()
            })
            .min();
    }
    result
}

/// A cluster's key as borrowed strings (the order of [`ClusterKey`]).
fn sort_key(c: &ClusterInfo) -> (&str, &str) {
    (c.namespace.as_str(), c.name.as_str())
}

fn removal(e: &ExistingPlacement, reason: impl Into<String>) -> Removal {
    Removal {
        cluster: e.cluster.clone(),
        state: e.state,
        reason: reason.into(),
    }
}

impl<'a> Run<'a, '_> {
    fn index_of(&self, key: &ClusterKey) -> Option<usize> {
        self.candidates
            .binary_search_by(|c| sort_key(c).cmp(&(key.namespace.as_str(), key.name.as_str())))
            .ok()
    }

    fn key(&self, idx: usize) -> ClusterKey {
        self.candidates[idx].key()
    }

    fn classify(&self) -> Classified<'a> {
        let policy = self.input.policy;
        let mut seen = BTreeSet::new();
        let mut out = Classified {
            kept: Vec::new(),
            reconsidered: BTreeMap::new(),
            removed: Vec::new(),
        };
        for e in self.input.existing {
            if !seen.insert(&e.cluster) {
                out.removed
                    .push(removal(e, "duplicate placement on the same cluster"));
                continue;
            }
            let Some(idx) = self.index_of(&e.cluster) else {
                out.removed
                    .push(removal(e, "cluster is no longer targeted by the bundle"));
                continue;
            };
            let cluster = self.candidates[idx];
            if cluster.health.as_ref().is_some_and(|h| h.leaving) {
                out.removed.push(removal(e, "cluster has left the fleet"));
                continue;
            }
            if policy.placement_type != PlacementType::PickFixed
                && let Err(reason) =
                    check_existing_placement(cluster, &policy.tolerations, self.input.now)
            {
                out.removed.push(removal(e, reason.to_string()));
                continue;
            }
            if e.obsolete || e.state == PlacementState::Unscheduled {
                out.reconsidered.insert(idx, e);
            } else if policy.placement_type == PlacementType::PickFixed
                && !policy.cluster_names.contains(&e.cluster.name)
            {
                out.removed
                    .push(removal(e, "cluster is not in clusterNames"));
            } else {
                out.kept.push((e, idx));
            }
        }
        out
    }

    /// Affinity, eligibility and taint filters for a cluster that would get a new placement.
    fn filter_new(&self, cluster: &ClusterInfo) -> Result<(), (Stage, String)> {
        let (policy, now) = (self.input.policy, self.input.now);
        check_required_affinity(cluster, policy.required_terms(), now)
            .map_err(|m| (Stage::ClusterAffinity, m.to_string()))?;
        check_eligibility(cluster, now, &self.input.eligibility)
            .map_err(|m| (Stage::Eligibility, m.to_string()))?;
        check_new_placement(cluster, &policy.tolerations, now)
            .map_err(|m| (Stage::TaintToleration, m.to_string()))?;
        Ok(())
    }

    fn decision(
        &self,
        classified: &Classified<'_>,
        idx: usize,
        score: Option<ClusterScore>,
    ) -> Decision {
        Decision {
            cluster: self.key(idx),
            origin: classified
                .reconsidered
                .get(&idx)
                .map_or(Origin::New, |e| Origin::Reselected(e.state)),
            score,
        }
    }

    /// Removes every reconsidered placement that was not selected again.
    fn drop_unpicked(classified: &mut Classified<'_>, picked: &BTreeSet<usize>, reason: &str) {
        for (idx, e) in &classified.reconsidered {
            if !picked.contains(idx) {
                classified.removed.push(removal(e, reason));
            }
        }
    }

    fn kept_decisions(classified: &Classified<'_>) -> Vec<Decision> {
        classified
            .kept
            .iter()
            .map(|(e, _)| Decision {
                cluster: e.cluster.clone(),
                origin: Origin::Kept,
                score: e.score,
            })
            .collect()
    }

    fn kept_set(classified: &Classified<'_>) -> BTreeSet<usize> {
        classified.kept.iter().map(|(_, i)| *i).collect()
    }

    /// Builds the result; `unselected_total` counts every unselected cluster, also those the
    /// capped list leaves out.
    fn result(
        selected: Vec<Decision>,
        classified: Classified<'_>,
        unselected: Vec<Unselected>,
        unselected_total: usize,
        wanted: Option<usize>,
    ) -> ScheduleResult {
        let found = selected.len();
        ScheduleResult {
            selected,
            removed: classified.removed,
            unselected: status::cap(unselected),
            unselected_total,
            condition: status::condition(wanted, found),
            requeue_at: None,
            warnings: Vec::new(),
        }
    }

    fn pick_all(&self, mut classified: Classified<'a>) -> ScheduleResult {
        let kept = Self::kept_set(&classified);
        let scorer = AffinityScorer::new(
            self.input.policy.preferred_terms(),
            &self.candidates,
            self.input.now,
        );
        let mut selected = Self::kept_decisions(&classified);
        let mut picked = BTreeSet::new();
        let mut filtered = Vec::new();
        for (idx, cluster) in self.candidates.iter().enumerate() {
            if kept.contains(&idx) {
                continue;
            }
            match self.filter_new(cluster) {
                Ok(()) => {
                    let score = ClusterScore {
                        affinity: scorer.score(idx, cluster),
                        ..ClusterScore::default()
                    };
                    selected.push(self.decision(&classified, idx, Some(score)));
                    picked.insert(idx);
                }
                Err((stage, message)) => {
                    filtered.push(status::filtered(&self.key(idx), stage, message));
                }
            }
        }
        Self::drop_unpicked(
            &mut classified,
            &picked,
            "no longer passes the placement policy's filters",
        );
        let total = filtered.len();
        Self::result(selected, classified, filtered, total, None)
    }

    fn pick_fixed(&self, mut classified: Classified<'a>) -> ScheduleResult {
        let kept = Self::kept_set(&classified);
        let mut selected = Self::kept_decisions(&classified);
        let mut picked = BTreeSet::new();
        let mut unselected = Vec::new();
        let mut names = BTreeSet::new();
        for name in &self.input.policy.cluster_names {
            if !names.insert(name) {
                continue;
            }
            let matching: Vec<usize> = (0..self.candidates.len())
                .filter(|&i| &self.candidates[i].name == name)
                .collect();
            if matching.is_empty() {
                unselected.push(Unselected {
                    cluster: name.clone(),
                    reason: UnselectedReason::NotFound,
                });
            }
            for idx in matching {
                if kept.contains(&idx) {
                    continue;
                }
                match check_eligibility(
                    self.candidates[idx],
                    self.input.now,
                    &self.input.eligibility,
                ) {
                    Ok(()) => {
                        selected.push(self.decision(&classified, idx, None));
                        picked.insert(idx);
                    }
                    Err(m) => unselected.push(Unselected {
                        cluster: self.key(idx).to_string(),
                        reason: UnselectedReason::NotEligible(m.to_string()),
                    }),
                }
            }
        }
        Self::drop_unpicked(
            &mut classified,
            &picked,
            "cluster is not a valid target of clusterNames",
        );
        // Every unselected entry is one name that could not be placed.
        let wanted = selected.len() + unselected.len();
        let total = unselected.len();
        Self::result(selected, classified, unselected, total, Some(wanted))
    }

    fn pick_n(&self, mut classified: Classified<'a>) -> ScheduleResult {
        let n = self.input.policy.number_of_clusters.unwrap_or(0) as usize;
        if n <= classified.kept.len() {
            self.scale_in(&mut classified, n);
        }
        // Picks what is missing (nothing when there are enough), drops reconsidered placements that are not
        // picked again, and ranks every other cluster for the unselected list.
        self.scale_out(classified, n)
    }

    /// Trims `present − n` current placements (if the policy asks for fewer) and drops
    /// obsolete ones; nothing happens when there is nothing to trim or drop.
    fn scale_in(&self, classified: &mut Classified<'a>, n: usize) {
        let present = classified.kept.len();
        let obsolete = classified
            .reconsidered
            .values()
            .filter(|e| e.obsolete)
            .count();
        if present - n + obsolete == 0 {
            return;
        }
        for e in classified.reconsidered.values() {
            classified
                .removed
                .push(removal(e, "placement policy changed"));
        }
        classified.reconsidered.clear();
        let mut order: Vec<&ExistingPlacement> = classified.kept.iter().map(|(e, _)| *e).collect();
        order.sort_by(|a, b| {
            let rolled_out = |e: &ExistingPlacement| e.state == PlacementState::Bound;
            rolled_out(a)
                .cmp(&rolled_out(b))
                .then_with(|| a.score.cmp(&b.score))
                .then_with(|| a.cluster.name.cmp(&b.cluster.name))
                .then_with(|| a.cluster.namespace.cmp(&b.cluster.namespace))
        });
        let trimmed: BTreeSet<&ClusterKey> =
            order.iter().take(present - n).map(|e| &e.cluster).collect();
        for (e, _) in &classified.kept {
            if trimmed.contains(&e.cluster) {
                classified
                    .removed
                    .push(removal(e, format!("scaled in to {n} cluster(s)")));
            }
        }
        classified
            .kept
            .retain(|(e, _)| !trimmed.contains(&e.cluster));
    }

    fn scale_out(&self, mut classified: Classified<'a>, n: usize) -> ScheduleResult {
        let policy = self.input.policy;
        let kept = Self::kept_set(&classified);
        let scorer =
            AffinityScorer::new(policy.preferred_terms(), &self.candidates, self.input.now);
        let constraints = &policy.topology_spread_constraints;
        let mut spread = SpreadState::new(
            constraints,
            self.candidates.iter().copied(),
            classified.kept.iter().map(|(_, i)| self.candidates[*i]),
        );
        let mut filtered: Vec<(usize, Stage, String)> = Vec::new();
        let mut pool: Vec<Entry> = Vec::new();
        for (idx, cluster) in self.candidates.iter().enumerate() {
            if kept.contains(&idx) {
                continue;
            }
            match self.filter_new(cluster) {
                Ok(()) => pool.push(Entry {
                    idx,
                    affinity: scorer.score(idx, cluster),
                    bonus: classified.reconsidered.get(&idx).map_or(0, |e| {
                        i64::from(e.obsolete && e.state != PlacementState::Unscheduled)
                    }),
                    domains: spread.domains_of(cluster),
                    violated: None,
                }),
                Err((stage, message)) => filtered.push((idx, stage, message)),
            }
        }
        let mut selected = Self::kept_decisions(&classified);
        let mut picked = BTreeSet::new();
        let mut need = n - classified.kept.len();
        let mut scored: Vec<(ClusterScore, usize)> = Vec::with_capacity(pool.len());
        while need > 0 {
            self.score_pool(&spread, &mut pool, &mut scored);
            if scored.is_empty() {
                break;
            }
            // With spread constraints, pick one at a time; without, the best `need` at once.
            let by_rank =
                |a: &(ClusterScore, usize), b: &(ClusterScore, usize)| self.rank(&pool, a, b);
            let chosen: Vec<(ClusterScore, usize)> = if constraints.is_empty() {
                if scored.len() > need {
                    scored.select_nth_unstable_by(need, by_rank);
                    scored.truncate(need);
                }
                scored.sort_by(by_rank);
                scored.clone()
            } else {
                scored.iter().copied().min_by(by_rank).into_iter().collect()
            };
            for (score, pos) in &chosen {
                let entry = &pool[*pos];
                spread.place(&entry.domains);
                picked.insert(entry.idx);
                selected.push(self.decision(&classified, entry.idx, Some(*score)));
                need -= 1;
            }
            pool.retain(|e| !picked.contains(&e.idx));
        }
        Self::drop_unpicked(
            &mut classified,
            &picked,
            "does not score high enough under the new placement policy",
        );
        // Whoever is left in the pool lost: rank them against the final spread.
        self.score_pool(&spread, &mut pool, &mut scored);
        let scored_total = scored.len();
        if scored.len() > status::MAX_UNSELECTED {
            scored.select_nth_unstable_by(status::MAX_UNSELECTED, |a, b| self.rank(&pool, a, b));
            scored.truncate(status::MAX_UNSELECTED);
        }
        scored.sort_by(|a, b| self.rank(&pool, a, b));
        let mut unselected: Vec<Unselected> = scored
            .iter()
            .take(status::MAX_UNSELECTED)
            .map(|(score, pos)| Unselected {
                cluster: self.key(pool[*pos].idx).to_string(),
                reason: UnselectedReason::ScoreTooLow(*score),
            })
            .collect();
        filtered.extend(pool.iter().filter_map(|e| {
            e.violated
                .map(|c| (e.idx, Stage::TopologySpread, spread.violation_message(c)))
        }));
        filtered.sort_by_key(|(idx, _, _)| *idx);
        let total = scored_total + filtered.len();
        unselected.extend(
            filtered
                .into_iter()
                .take(status::MAX_UNSELECTED)
                .map(|(idx, stage, m)| status::filtered(&self.key(idx), stage, m)),
        );
        Self::result(selected, classified, unselected, total, Some(n))
    }

    /// Best-first order of two scored pool entries (score, position in `pool`).
    fn rank(
        &self,
        pool: &[Entry],
        a: &(ClusterScore, usize),
        b: &(ClusterScore, usize),
    ) -> std::cmp::Ordering {
        let (ca, cb) = (
            self.candidates[pool[a.1].idx],
            self.candidates[pool[b.1].idx],
        );
        best_first_by_name(
            (&a.0, &ca.name, &ca.namespace),
            (&b.0, &cb.name, &cb.namespace),
        )
    }

    /// Evaluates topology spread for every pool entry: violators are marked, the others land in
    /// `scored` as (score, position in pool).
    fn score_pool(
        &self,
        spread: &SpreadState<'_>,
        pool: &mut [Entry],
        scored: &mut Vec<(ClusterScore, usize)>,
    ) {
        let stats = spread.snapshot();
        scored.clear();
        for (pos, entry) in pool.iter_mut().enumerate() {
            match spread.evaluate(&entry.domains, &stats) {
                SpreadVerdict::Violated(c) => entry.violated = Some(c),
                SpreadVerdict::Score(ts) => {
                    entry.violated = None;
                    scored.push((
                        ClusterScore {
                            topology_spread: ts,
                            affinity: entry.affinity,
                            existing_placement: entry.bonus,
                        },
                        pos,
                    ));
                }
            }
        }
    }
}
