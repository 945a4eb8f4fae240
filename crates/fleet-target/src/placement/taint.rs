//! Taints and tolerations. A new placement needs every `NoSchedule` and `NoSelect` taint
//! tolerated; an existing placement only loses its cluster to a `NoSelect` taint that is no
//! longer tolerated. A toleration with `tolerationSeconds` covers a taint only until
//! `timeAdded + tolerationSeconds` (a taint without `timeAdded` counts as added now), so the
//! placement moves after that time; the scheduler reports when to look again.
//! Matching: `Exists` with an empty key matches every key, `Equal` needs key and value equal,
//! an unset effect matches every effect. Also: the automatic `unreachable` taint.

use fleet_api::ClusterTaint;

use crate::model::{ClusterInfo, TaintEffect, UnixSeconds, show_taint, time, unix};

use super::filter::EligibilityConfig;
use super::policy::{Toleration, TolerationOperator};
use super::unfit::Unfit;

/// Key of the taint put on clusters whose heartbeat is older than the timeout.
pub const UNREACHABLE_TAINT_KEY: &str = "fleet.cattle.io/unreachable";

/// Whether the toleration's key, operator, value and effect match the taint (with its parsed
/// `effect`), ignoring time.
pub fn matches(toleration: &Toleration, taint: &ClusterTaint, effect: TaintEffect) -> bool {
    let effect = toleration.effect.is_none_or(|e| e == effect);
    let key = match toleration.operator {
        TolerationOperator::Exists => toleration.key.is_empty() || toleration.key == taint.key,
        TolerationOperator::Equal => toleration.key == taint.key && toleration.value == taint.value,
    };
    effect && key
}

/// Until when the tolerations cover `taint`: `Err(())` when they do not (now), `Ok(None)` when
/// without limit, `Ok(Some(t))` when until `t` (exclusive).
fn covered_until(
    tolerations: &[Toleration],
    taint: &ClusterTaint,
    effect: TaintEffect,
    now: UnixSeconds,
) -> Result<Option<UnixSeconds>, ()> {
    let mut best: Result<Option<UnixSeconds>, ()> = Err(());
    let added = taint.time_added.as_ref().map_or(now, unix);
    for t in tolerations.iter().filter(|t| matches(t, taint, effect)) {
        let until = t.toleration_seconds.map(|s| added.saturating_add(s));
        match until {
            None => return Ok(None),
            Some(u) if now < u => {
                best = Ok(Some(best.ok().flatten().map_or(u, |b| b.max(u))));
            }
            Some(_) => {}
        }
    }
    best
}

fn check(
    cluster: &ClusterInfo,
    tolerations: &[Toleration],
    now: UnixSeconds,
    effects: &[TaintEffect],
) -> Result<Option<UnixSeconds>, Unfit> {
    let mut earliest: Option<UnixSeconds> = None;
    for taint in &cluster.taints {
        let effect = TaintEffect::of(taint)?;
        if !effects.contains(&effect) {
            continue;
        }
        match covered_until(tolerations, taint, effect, now) {
            Err(()) => return Err(Unfit::Untolerated(show_taint(taint))),
            Ok(Some(until)) => earliest = Some(earliest.map_or(until, |e| e.min(until))),
            Ok(None) => {}
        }
    }
    Ok(earliest)
}

/// Filter for a new placement: the first untolerated taint fails it, as does a taint with an
/// unknown effect. On success, returns the earliest time a toleration stops covering a taint, if
/// any.
pub fn check_new_placement(
    cluster: &ClusterInfo,
    tolerations: &[Toleration],
    now: UnixSeconds,
) -> Result<Option<UnixSeconds>, Unfit> {
    check(
        cluster,
        tolerations,
        now,
        &[TaintEffect::NoSchedule, TaintEffect::NoSelect],
    )
}

/// Check for an existing placement: only `NoSelect` taints evict (a taint with an unknown effect
/// is reported, as for a new placement). On success, returns when a toleration stops covering one
/// (when the placement would move), if ever.
pub fn check_existing_placement(
    cluster: &ClusterInfo,
    tolerations: &[Toleration],
    now: UnixSeconds,
) -> Result<Option<UnixSeconds>, Unfit> {
    check(cluster, tolerations, now, &[TaintEffect::NoSelect])
}

/// The automatic `NoSelect` taint for a cluster whose heartbeat is older than the timeout
/// (stamped at the moment it expired), or `None` while it is reachable or has no health data.
pub fn unreachable_taint(
    cluster: &ClusterInfo,
    now: UnixSeconds,
    config: &EligibilityConfig,
) -> Option<ClusterTaint> {
    let health = cluster.health.as_ref()?;
    let expired_at = match health.last_heartbeat {
        None => now,
        Some(at) if now.saturating_sub(at) > config.heartbeat_timeout_seconds => {
            at.saturating_add(config.heartbeat_timeout_seconds)
        }
        Some(_) => return None,
    };
    Some(ClusterTaint {
        key: UNREACHABLE_TAINT_KEY.into(),
        value: String::new(),
        effect: TaintEffect::NoSelect.as_str().into(),
        time_added: time(expired_at),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ClusterHealth;

    fn taint(key: &str, value: &str, effect: TaintEffect, added: Option<i64>) -> ClusterTaint {
        ClusterTaint {
            key: key.into(),
            value: value.into(),
            effect: effect.as_str().into(),
            time_added: added.and_then(time),
        }
    }

    fn tol(
        key: &str,
        op: TolerationOperator,
        value: &str,
        effect: Option<TaintEffect>,
        secs: Option<i64>,
    ) -> Toleration {
        Toleration {
            key: key.into(),
            operator: op,
            value: value.into(),
            effect,
            toleration_seconds: secs,
        }
    }

    fn cluster(taints: Vec<ClusterTaint>) -> ClusterInfo {
        let mut c = ClusterInfo::new("ns", "c", []);
        c.taints = taints;
        c
    }

    use TaintEffect::*;
    use TolerationOperator::*;

    /// S12: a taint whose value differs from the toleration's is not tolerated.
    #[test]
    fn s12_taint_not_tolerated() {
        let c = cluster(vec![taint("key1", "value1", NoSchedule, None)]);
        let t = [tol("key1", Equal, "value2", Some(NoSchedule), None)];
        assert_eq!(
            check_new_placement(&c, &t, 0),
            Err(Unfit::Untolerated("key1=value1:NoSchedule".into()))
        );
    }

    /// S13: `Exists` without key or effect tolerates everything.
    #[test]
    fn s13_exists_tolerates_all() {
        let c = cluster(vec![
            taint("a", "1", NoSchedule, None),
            taint("b", "", NoSelect, None),
        ]);
        assert_eq!(
            check_new_placement(&c, &[tol("", Exists, "", None, None)], 0),
            Ok(None)
        );
    }

    /// S14: empty values match with `Equal`.
    #[test]
    fn s14_empty_values() {
        let c = cluster(vec![taint("key1", "", NoSchedule, None)]);
        assert_eq!(
            check_new_placement(&c, &[tol("key1", Equal, "", None, None)], 0),
            Ok(None)
        );
    }

    /// O1-style: NoSelect taints need a matching toleration; other keys are not covered.
    #[test]
    fn o1_no_select_needs_a_toleration() {
        let t = [tol("key1", Equal, "value1", None, None)];
        let c1 = cluster(vec![taint("key1", "value1", NoSelect, None)]);
        let c2 = cluster(vec![taint("key2", "value2", NoSelect, None)]);
        assert_eq!(check_new_placement(&c1, &t, 0), Ok(None));
        assert_eq!(
            check_new_placement(&c2, &t, 0),
            Err(Unfit::Untolerated("key2=value2:NoSelect".into()))
        );
    }

    /// O10: tolerationSeconds 10, taints added 8, 9 and 10 seconds ago.
    #[test]
    fn o10_toleration_seconds() {
        let now = 1000;
        let t = [tol("key1", Exists, "", None, Some(10))];
        let at = |ago: i64| cluster(vec![taint("key1", "v", NoSelect, Some(now - ago))]);
        assert_eq!(check_existing_placement(&at(8), &t, now), Ok(Some(now + 2)));
        assert_eq!(check_existing_placement(&at(9), &t, now), Ok(Some(now + 1)));
        assert_eq!(
            check_existing_placement(&at(10), &t, now),
            Err(Unfit::Untolerated("key1=v:NoSelect".into()))
        );
    }

    /// S15: NoSchedule taints never evict an existing placement.
    #[test]
    fn s15_no_schedule_does_not_evict() {
        let c = cluster(vec![taint("maintenance", "", NoSchedule, Some(0))]);
        assert_eq!(check_existing_placement(&c, &[], 100), Ok(None));
        assert!(check_new_placement(&c, &[], 100).is_err());
    }

    #[test]
    fn effect_restricts_the_toleration() {
        let c = cluster(vec![taint("k", "v", NoSelect, None)]);
        assert!(
            check_new_placement(&c, &[tol("k", Equal, "v", Some(NoSchedule), None)], 0).is_err()
        );
        assert!(check_new_placement(&c, &[tol("k", Equal, "v", Some(NoSelect), None)], 0).is_ok());
    }

    /// O11-style: the automatic taint appears once the heartbeat is older than the timeout.
    #[test]
    fn automatic_unreachable_taint() {
        let config = EligibilityConfig::default();
        let mut c = ClusterInfo::new("ns", "c", []);
        assert_eq!(unreachable_taint(&c, 1000, &config), None);
        c.health = Some(ClusterHealth {
            joined: true,
            last_heartbeat: Some(1000),
            ..Default::default()
        });
        assert_eq!(unreachable_taint(&c, 1300, &config), None);
        assert_eq!(
            unreachable_taint(&c, 1301, &config),
            Some(taint(UNREACHABLE_TAINT_KEY, "", NoSelect, Some(1300)))
        );
    }

    /// A taint whose effect is neither NoSchedule nor NoSelect keeps new placements away and is
    /// reported, whatever the tolerations.
    #[test]
    fn unknown_effect_is_reported() {
        let mut bad = taint("k", "v", NoSchedule, None);
        bad.effect = "NoExecute".into();
        let c = cluster(vec![bad]);
        let err = check_new_placement(&c, &[tol("", Exists, "", None, None)], 0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "taint k=v:NoExecute has an unknown effect (expected NoSchedule or NoSelect)"
        );
        assert_eq!(check_existing_placement(&c, &[], 0), Err(err));
    }
}
