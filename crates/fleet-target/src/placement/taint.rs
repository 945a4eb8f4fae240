//! Taints and tolerations. A new placement needs every `NoSchedule` and `NoSelect` taint
//! tolerated; an existing placement only loses its cluster to a `NoSelect` taint that is no
//! longer tolerated. A toleration with `tolerationSeconds` covers a taint only until
//! `timeAdded + tolerationSeconds` (a taint without `timeAdded` counts as added now), so the
//! placement moves after that time; the scheduler reports when to look again.
//! Matching: `Exists` with an empty key matches every key, `Equal` needs key and value equal,
//! an unset effect matches every effect. Also: the automatic `unreachable` taint.

use crate::model::{ClusterInfo, Taint, TaintEffect, UnixSeconds};

use super::filter::EligibilityConfig;
use super::policy::{Toleration, TolerationOperator};

/// Key of the taint put on clusters whose heartbeat is older than the timeout.
pub const UNREACHABLE_TAINT_KEY: &str = "fleet.cattle.io/unreachable";

/// Whether the toleration's key, operator, value and effect match the taint (ignoring time).
pub fn matches(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration.effect.is_none_or(|e| e == taint.effect);
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
    taint: &Taint,
    now: UnixSeconds,
) -> Result<Option<UnixSeconds>, ()> {
    let mut best: Result<Option<UnixSeconds>, ()> = Err(());
    for t in tolerations.iter().filter(|t| matches(t, taint)) {
        let until = t
            .toleration_seconds
            .map(|s| taint.time_added.unwrap_or(now).saturating_add(s));
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
) -> Result<Option<UnixSeconds>, String> {
    let mut earliest: Option<UnixSeconds> = None;
    for taint in cluster
        .taints
        .iter()
        .filter(|t| effects.contains(&t.effect))
    {
        match covered_until(tolerations, taint, now) {
            Err(()) => return Err(format!("taint {taint} cannot be tolerated")),
            Ok(Some(until)) => earliest = Some(earliest.map_or(until, |e| e.min(until))),
            Ok(None) => {}
        }
    }
    Ok(earliest)
}

/// Filter for a new placement: the first untolerated taint fails it. On success, returns the
/// earliest time a toleration stops covering a taint, if any.
pub fn check_new_placement(
    cluster: &ClusterInfo,
    tolerations: &[Toleration],
    now: UnixSeconds,
) -> Result<Option<UnixSeconds>, String> {
    check(
        cluster,
        tolerations,
        now,
        &[TaintEffect::NoSchedule, TaintEffect::NoSelect],
    )
}

/// Check for an existing placement: only `NoSelect` taints evict. On success, returns when a
/// toleration stops covering one (when the placement would move), if ever.
pub fn check_existing_placement(
    cluster: &ClusterInfo,
    tolerations: &[Toleration],
    now: UnixSeconds,
) -> Result<Option<UnixSeconds>, String> {
    check(cluster, tolerations, now, &[TaintEffect::NoSelect])
}

/// The automatic `NoSelect` taint for a cluster whose heartbeat is older than the timeout
/// (stamped at the moment it expired), or `None` while it is reachable or has no health data.
pub fn unreachable_taint(
    cluster: &ClusterInfo,
    now: UnixSeconds,
    config: &EligibilityConfig,
) -> Option<Taint> {
    let health = cluster.health.as_ref()?;
    let expired_at = match health.last_heartbeat {
        None => now,
        Some(at) if now.saturating_sub(at) > config.heartbeat_timeout_seconds => {
            at.saturating_add(config.heartbeat_timeout_seconds)
        }
        Some(_) => return None,
    };
    Some(Taint {
        key: UNREACHABLE_TAINT_KEY.into(),
        value: String::new(),
        effect: TaintEffect::NoSelect,
        time_added: Some(expired_at),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ClusterHealth;

    fn taint(key: &str, value: &str, effect: TaintEffect, added: Option<i64>) -> Taint {
        Taint {
            key: key.into(),
            value: value.into(),
            effect,
            time_added: added,
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

    fn cluster(taints: Vec<Taint>) -> ClusterInfo {
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
            Err("taint key1=value1:NoSchedule cannot be tolerated".into())
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
            Err("taint key2=value2:NoSelect cannot be tolerated".into())
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
            Err("taint key1=v:NoSelect cannot be tolerated".into())
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
}
