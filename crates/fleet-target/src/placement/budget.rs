//! The rolling-update budget for placed bundles (KubeFleet's rollout controller): which placed
//! BundleDeployments may be removed, updated in place, or rolled out now.
//!
//! `target` is the number of placed clusters (PickAll), `len(clusterNames)` (PickFixed) or N
//! (PickN); `maxUnavailable` and `maxSurge` (default 25% each) are scaled against it rounding
//! up. With `ready` the ready placements, `canBeReady` the non-failed ones that exist,
//! `canBeUnavailable` the ready ones already being deleted:
//! - `maxToRemove = (ready − canBeUnavailable) − (target − maxUnavailable)`,
//! - `maxToAdd = (target + maxSurge) − canBeReady`.
//!
//! Failed out-of-date placements are always updated; then, within `maxToRemove`, unscheduled
//! placements are removed and out-of-date ones updated in place; then up to `maxToAdd` scheduled
//! placements are rolled out. The rest wait ("stale"). A placement whose readiness cannot be
//! tracked counts as ready `unavailablePeriodSeconds` (default 60) after it became available.
//!
//! This budget decides which placed BundleDeployments may change at all; Fleet's partitions
//! ([`crate::rollout`]) then apply to those, so the two combine rather than replace each other.

use crate::error::TargetError;
use crate::intstr::{IntOrPercent, IntOrPercentExt};
use crate::model::{ClusterKey, UnixSeconds};

use super::input::PlacementState;
use fleet_api::PlacementStrategy;

const DEFAULT_UNAVAILABLE_PERIOD: i64 = 60;

/// Readiness of a placed BundleDeployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    Ready,
    NotReady,
    /// Available, but its readiness cannot be tracked; available since this time.
    Untrackable {
        available_since: UnixSeconds,
    },
}

/// One placed BundleDeployment as the budget sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedDeployment {
    pub cluster: ClusterKey,
    pub state: PlacementState,
    pub deleting: bool,
    pub readiness: Readiness,
    /// Its last apply failed.
    pub failed: bool,
    /// It runs the latest bundle version.
    pub up_to_date: bool,
}

/// What the budget allows now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RollPlan {
    /// Unscheduled placements to delete now.
    pub remove: Vec<ClusterKey>,
    /// Rolled-out placements to update in place now.
    pub update: Vec<ClusterKey>,
    /// Scheduled placements to roll out now.
    pub roll_out: Vec<ClusterKey>,
    /// Out-of-date or scheduled placements held back by the budget.
    pub stale: Vec<ClusterKey>,
    /// Look again then (an untrackable placement becomes ready).
    pub requeue_at: Option<UnixSeconds>,
    pub max_unavailable: i64,
    pub max_surge: i64,
}

/// Plans one pass of the rolling update over `placed` (input order is kept within each list).
pub fn plan_roll(
    placed: &[PlacedDeployment],
    strategy: &PlacementStrategy,
    target: usize,
    now: UnixSeconds,
) -> Result<RollPlan, TargetError> {
    let quarter = IntOrPercent::percent(25);
    let max_unavailable = strategy
        .max_unavailable
        .as_ref()
        .unwrap_or(&quarter)
        .scaled_round_up(target, "placement.strategy.maxUnavailable")?;
    let max_surge = strategy
        .max_surge
        .as_ref()
        .unwrap_or(&quarter)
        .scaled_round_up(target, "placement.strategy.maxSurge")?;
    let period = strategy
        .unavailable_period_seconds
        .unwrap_or(DEFAULT_UNAVAILABLE_PERIOD);
    let mut plan = RollPlan {
        max_unavailable,
        max_surge,
        ..RollPlan::default()
    };
    let is_ready = |p: &PlacedDeployment, requeue: &mut Option<UnixSeconds>| match p.readiness {
        Readiness::Ready => true,
        Readiness::NotReady => false,
        Readiness::Untrackable { available_since } => {
            let ready_at = available_since.saturating_add(period);
            if now >= ready_at {
                true
            } else {
                *requeue = Some(requeue.map_or(ready_at, |r| r.min(ready_at)));
                false
            }
        }
    };
    let (mut ready, mut can_be_ready, mut can_be_unavailable) = (0i64, 0i64, 0i64);
    let (mut failed_updates, mut remove_candidates, mut update_candidates, mut roll_candidates) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for p in placed {
        match p.state {
            PlacementState::Scheduled => {
                if !p.deleting {
                    roll_candidates.push(p.cluster.clone());
                }
            }
            PlacementState::Unscheduled | PlacementState::Bound => {
                let r = is_ready(p, &mut plan.requeue_at);
                if !p.failed {
                    can_be_ready += 1;
                }
                ready += i64::from(r);
                if p.deleting {
                    can_be_unavailable += i64::from(r);
                } else if p.state == PlacementState::Unscheduled {
                    remove_candidates.push(p.cluster.clone());
                } else if !p.up_to_date && p.failed {
                    failed_updates.push(p.cluster.clone());
                } else if !p.up_to_date {
                    update_candidates.push(p.cluster.clone());
                }
            }
        }
    }
    let target = target as i64;
    let mut max_to_remove = (ready - can_be_unavailable) - (target - max_unavailable);
    let max_to_add = (target + max_surge) - can_be_ready;
    plan.update = failed_updates;
    for key in remove_candidates {
        if max_to_remove > 0 {
            plan.remove.push(key);
            max_to_remove -= 1;
        }
    }
    for key in update_candidates {
        if max_to_remove > 0 {
            plan.update.push(key);
            max_to_remove -= 1;
        } else {
            plan.stale.push(key);
        }
    }
    for (i, key) in roll_candidates.into_iter().enumerate() {
        if (i as i64) < max_to_add {
            plan.roll_out.push(key);
        } else {
            plan.stale.push(key);
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placed(
        i: usize,
        state: PlacementState,
        deleting: bool,
        readiness: Readiness,
        failed: bool,
        up_to_date: bool,
    ) -> PlacedDeployment {
        PlacedDeployment {
            cluster: ClusterKey::new("ns", format!("c{i}")),
            state,
            deleting,
            readiness,
            failed,
            up_to_date,
        }
    }

    fn names(keys: &[ClusterKey]) -> Vec<&str> {
        keys.iter().map(|k| k.name.as_str()).collect()
    }

    fn strategy(max_unavailable: i32, max_surge: i32) -> PlacementStrategy {
        PlacementStrategy {
            max_unavailable: Some(IntOrPercent::Int(max_unavailable)),
            max_surge: Some(IntOrPercent::Int(max_surge)),
            unavailable_period_seconds: None,
        }
    }

    use PlacementState::*;
    use Readiness::*;

    /// R1: maxUnavailable 0 blocks in-place updates.
    #[test]
    fn r1_max_unavailable_zero_blocks_updates() {
        let p: Vec<_> = (0..5)
            .map(|i| placed(i, Bound, false, Ready, false, false))
            .collect();
        let plan = plan_roll(&p, &strategy(0, 3), 5, 0).unwrap();
        assert!(plan.update.is_empty());
        assert_eq!(plan.stale.len(), 5);
    }

    /// R2: failed deployments bypass the budget.
    #[test]
    fn r2_failed_bypass_budget() {
        let mut p = vec![placed(0, Bound, false, NotReady, true, false)];
        p.extend((1..5).map(|i| placed(i, Bound, false, NotReady, false, false)));
        let plan = plan_roll(&p, &strategy(1, 0), 5, 0).unwrap();
        assert_eq!(names(&plan.update), ["c0"]);
        assert_eq!(names(&plan.stale), ["c1", "c2", "c3", "c4"]);
    }

    /// R3: remove within maxUnavailable.
    #[test]
    fn r3_remove_within_max_unavailable() {
        let p = vec![
            placed(0, Unscheduled, true, Ready, false, true),
            placed(1, Unscheduled, false, Ready, false, true),
            placed(2, Scheduled, false, NotReady, false, false),
            placed(3, Scheduled, false, NotReady, false, false),
        ];
        let plan = plan_roll(&p, &strategy(2, 0), 2, 0).unwrap();
        assert_eq!(names(&plan.remove), ["c1"]);
        assert!(plan.roll_out.is_empty());
        assert_eq!(names(&plan.stale), ["c2", "c3"]);
    }

    /// R4: add within maxSurge.
    #[test]
    fn r4_add_within_max_surge() {
        let p = vec![
            placed(0, Unscheduled, true, NotReady, false, true),
            placed(1, Unscheduled, false, NotReady, false, true),
            placed(2, Scheduled, false, NotReady, false, false),
            placed(3, Scheduled, false, NotReady, false, false),
        ];
        let plan = plan_roll(&p, &strategy(0, 1), 2, 0).unwrap();
        assert_eq!(names(&plan.roll_out), ["c2"]);
        assert_eq!(names(&plan.stale), ["c3"]);
        assert!(plan.remove.is_empty());
    }

    /// R5: downscale removes both unscheduled placements.
    #[test]
    fn r5_downscale() {
        let p = vec![
            placed(0, Bound, true, Ready, false, true),
            placed(1, Bound, false, Ready, false, true),
            placed(2, Unscheduled, false, Ready, false, true),
            placed(3, Unscheduled, false, Ready, false, true),
        ];
        let plan = plan_roll(&p, &strategy(1, 0), 2, 0).unwrap();
        assert_eq!(names(&plan.remove), ["c2", "c3"]);
    }

    /// R6: 25% of 8 rounds up to 2, so two in-place updates per pass; 25% of 7 is also 2.
    #[test]
    fn r6_percent_rounding() {
        let p: Vec<_> = (0..8)
            .map(|i| placed(i, Bound, false, Ready, false, false))
            .collect();
        let plan = plan_roll(&p, &PlacementStrategy::default(), 8, 0).unwrap();
        assert_eq!((plan.max_unavailable, plan.max_surge), (2, 2));
        assert_eq!(plan.update.len(), 2);
        assert_eq!(plan.stale.len(), 6);
        let plan = plan_roll(&p[..7], &PlacementStrategy::default(), 7, 0).unwrap();
        assert_eq!(plan.max_unavailable, 2);
    }

    /// R7: untrackable availability counts after unavailablePeriodSeconds.
    #[test]
    fn r7_untrackable_availability() {
        let now = 1000;
        let p = vec![
            placed(
                0,
                Bound,
                false,
                Untrackable {
                    available_since: now - 30,
                },
                false,
                false,
            ),
            placed(1, Bound, false, Ready, false, true),
        ];
        let s = PlacementStrategy {
            max_unavailable: Some(IntOrPercent::Int(1)),
            ..Default::default()
        };
        let plan = plan_roll(&p, &s, 2, now).unwrap();
        // Not ready yet: ready = 1, maxToRemove = 1 − (2 − 1) = 0.
        assert!(plan.update.is_empty());
        assert_eq!(plan.requeue_at, Some(now + 30));
        let plan = plan_roll(&p, &s, 2, now + 31).unwrap();
        assert_eq!(names(&plan.update), ["c0"]);
        assert_eq!(plan.requeue_at, None);
    }
}
