//! The scheduler scenarios of `placement.md` §C that apply to a one-shot scheduler (S1–S27 and
//! the OCM taint scenarios), on KubeFleet's fixture: seven eligible clusters in three regions,
//! one unhealthy and one leaving. Each case is named after its scenario.

use serde_json::{Value, json};

use super::*;
use crate::model::{ClusterHealth, ClusterInfo, HealthCondition, TaintEffect, time};
use fleet_api::{ClusterScore as CustomScore, ClusterTaint};

const NOW: i64 = 1_000_000;
const NS: &str = "fleet-default";

/// A `PickN` policy for `n` clusters.
fn pick_n(n: u32) -> Value {
    json!({"type": "PickN", "numberOfClusters": n})
}

/// A `PickN` policy for `n` clusters with one preferred cluster affinity term: `preference` with `weight`.
fn pick_n_preferring(n: u32, weight: i32, preference: Value) -> Value {
    json!({"type": "PickN", "numberOfClusters": n, "affinity": {"clusterAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": weight, "preference": preference}]
    }}})
}

fn healthy() -> ClusterHealth {
    ClusterHealth {
        joined: true,
        leaving: false,
        last_heartbeat: Some(NOW - 10),
        healthy: Some(HealthCondition {
            status: true,
            last_transition: NOW - 3600,
        }),
    }
}

/// KubeFleet's scheduler fixture (`test/scheduler/suite_test.go`).
fn fixture() -> Vec<ClusterInfo> {
    let rows: [(&str, &str, &str, Option<&str>); 9] = [
        ("cluster-1-east-prod", "east", "prod", Some("2")),
        ("cluster-2-east-prod", "east", "prod", Some("4")),
        ("cluster-3-east-canary", "east", "canary", Some("6")),
        ("cluster-4-central-prod", "central", "prod", Some("2")),
        ("cluster-5-central-prod", "central", "prod", Some("8")),
        ("cluster-6-west-prod", "west", "prod", Some("2")),
        ("cluster-7-west-canary", "west", "canary", Some("8")),
        ("unhealthy-cluster-east-prod", "east", "prod", Some("1")),
        ("left-cluster-central-prod", "central", "prod", None),
    ];
    rows.iter()
        .map(|(name, region, env, nodes)| {
            let mut c = ClusterInfo::new(NS, name, [("region", *region), ("env", *env)]);
            if let Some(n) = nodes {
                c.properties
                    .insert("kubernetes-fleet.io/node-count".into(), n.to_string());
            }
            c.health = Some(healthy());
            c
        })
        .map(|mut c| {
            if c.name.starts_with("unhealthy") {
                c.health.as_mut().unwrap().healthy = Some(HealthCondition {
                    status: false,
                    last_transition: NOW - 3600,
                });
            }
            if c.name.starts_with("left") {
                c.health.as_mut().unwrap().leaving = true;
            }
            if c.name == "cluster-1-east-prod" {
                c.resource_usage.capacity.insert("cpu".into(), "4".into());
                c.resource_usage
                    .allocatable
                    .insert("cpu".into(), "3".into());
                c.resource_usage.available.insert("cpu".into(), "2".into());
            }
            c
        })
        .collect()
}

/// `c1`…`c7`, `unhealthy`, `left` for the fixture's names.
fn short(name: &str) -> String {
    match name.strip_prefix("cluster-") {
        Some(rest) => format!("c{}", &rest[..1]),
        None => name.split('-').next().unwrap_or(name).to_string(),
    }
}

fn key(short_name: &str) -> ClusterKey {
    let full = fixture()
        .into_iter()
        .find(|c| self::short(&c.name) == short_name)
        .map(|c| c.name)
        .unwrap_or_else(|| short_name.to_string());
    ClusterKey::new(NS, full)
}

fn existing(
    short_name: &str,
    state: PlacementState,
    obsolete: bool,
    score: Option<(i64, i64)>,
) -> ExistingPlacement {
    ExistingPlacement {
        cluster: key(short_name),
        state,
        obsolete,
        score: score.map(|(ts, a)| ClusterScore {
            topology_spread: ts,
            affinity: a,
            existing_placement: 0,
        }),
    }
}

fn run_on(
    clusters: &[ClusterInfo],
    policy: Value,
    existing: &[ExistingPlacement],
    now: i64,
) -> ScheduleResult {
    let policy: PlacementPolicy = serde_json::from_value(policy).expect("policy");
    let refs: Vec<&ClusterInfo> = clusters.iter().collect();
    schedule(&ScheduleInput {
        policy: &policy,
        candidates: &refs,
        existing,
        now,
        eligibility: EligibilityConfig::default(),
    })
    .expect("schedule")
}

fn run(policy: Value, existing: &[ExistingPlacement]) -> ScheduleResult {
    run_on(&fixture(), policy, existing, NOW)
}

fn selected(r: &ScheduleResult) -> Vec<String> {
    r.selected.iter().map(|d| short(&d.cluster.name)).collect()
}

fn removed(r: &ScheduleResult) -> Vec<String> {
    r.removed.iter().map(|d| short(&d.cluster.name)).collect()
}

fn score_of(r: &ScheduleResult, s: &str) -> Option<ClusterScore> {
    r.selected
        .iter()
        .find(|d| short(&d.cluster.name) == s)
        .and_then(|d| d.score)
}

/// The selection table: scenario, policy, existing placements, expected selected and removed
/// clusters (sorted by name), and whether the policy is fulfilled.
#[test]
fn scenario_selection_table() {
    use PlacementState::*;
    struct Case {
        id: &'static str,
        policy: Value,
        existing: Vec<ExistingPlacement>,
        selected: &'static [&'static str],
        removed: &'static [&'static str],
        fulfilled: bool,
    }
    // Three scheduled placements (scores 5, 5, 1) and a bound one (score 9), for the scale-in cases.
    let four_placed = || {
        vec![
            existing("c1", Scheduled, false, Some((0, 5))),
            existing("c2", Scheduled, false, Some((0, 5))),
            existing("c3", Scheduled, false, Some((0, 1))),
            existing("c4", Bound, false, Some((0, 9))),
        ]
    };
    let cases = vec![
        Case {
            id: "S1 PickN 3, no preferences",
            policy: pick_n(3),
            existing: vec![],
            selected: &["c5", "c6", "c7"],
            removed: &[],
            fulfilled: true,
        },
        Case {
            id: "S2 PickN 10, not enough clusters",
            policy: pick_n(10),
            existing: vec![],
            selected: &["c1", "c2", "c3", "c4", "c5", "c6", "c7"],
            removed: &[],
            fulfilled: false,
        },
        Case {
            id: "S3 PickN 0",
            policy: pick_n(0),
            existing: vec![],
            selected: &[],
            removed: &[],
            fulfilled: true,
        },
        Case {
            id: "S4 PickN 4 with a preferred term",
            policy: pick_n_preferring(
                4,
                10,
                json!({"labelSelector": {"matchLabels": {"region": "central"}, "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]}]}}),
            ),
            existing: vec![],
            selected: &["c4", "c5", "c6", "c7"],
            removed: &[],
            fulfilled: true,
        },
        Case {
            id: "S5 PickN 2 with a required spread over regions",
            policy: json!({"type": "PickN", "numberOfClusters": 2, "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "region", "whenUnsatisfiable": "DoNotSchedule"}]}),
            existing: vec![],
            selected: &["c5", "c7"],
            removed: &[],
            fulfilled: true,
        },
        Case {
            id: "S9 PickN 3, ascending sorter on node-count",
            policy: pick_n_preferring(
                3,
                100,
                json!({"propertySorter": {"name": "kubernetes-fleet.io/node-count", "sortOrder": "Ascending"}}),
            ),
            existing: vec![],
            selected: &["c1", "c4", "c6"],
            removed: &[],
            fulfilled: true,
        },
        Case {
            id: "S11 required property selector (allocatable cpu ≥ 3)",
            policy: json!({"type": "PickAll", "affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": [
                {"propertySelector": {"matchExpressions": [{"name": "resources.kubernetes-fleet.io/allocatable-cpu", "operator": "Ge", "values": ["3"]}]}}
            ]}}}}),
            existing: vec![],
            selected: &["c1"],
            removed: &[],
            fulfilled: true,
        },
        Case {
            id: "S17 PickFixed with mixed targets",
            policy: json!({"type": "PickFixed", "clusterNames": ["cluster-1-east-prod", "cluster-2-east-prod", "cluster-4-central-prod", "cluster-5-central-prod", "cluster-6-west-prod", "unhealthy-cluster-east-prod", "left-cluster-central-prod", "non-existent-cluster"]}),
            existing: vec![],
            selected: &["c1", "c2", "c4", "c5", "c6"],
            removed: &[],
            fulfilled: false,
        },
        Case {
            id: "S23a downscale with an obsolete placement (desired 1, present 1, obsolete 1)",
            policy: pick_n(1),
            existing: vec![
                existing("c1", Bound, false, None),
                existing("c2", Bound, true, None),
            ],
            selected: &["c1"],
            removed: &["c2"],
            fulfilled: true,
        },
        Case {
            id: "S23b downscale to 0",
            policy: pick_n(0),
            existing: vec![existing("c1", Bound, false, None)],
            selected: &[],
            removed: &["c1"],
            fulfilled: true,
        },
        Case {
            id: "S23c nothing to downscale",
            policy: pick_n(1),
            existing: vec![existing("c1", Bound, false, None)],
            selected: &["c1"],
            removed: &[],
            fulfilled: true,
        },
        Case {
            id: "S24 scale-in 4 → 2 trims scheduled placements, lowest score first",
            policy: pick_n(2),
            existing: four_placed(),
            selected: &["c2", "c4"],
            removed: &["c1", "c3"],
            fulfilled: true,
        },
        Case {
            id: "S24 scale-in 4 → 1 keeps the rolled-out placement",
            policy: pick_n(1),
            existing: four_placed(),
            selected: &["c4"],
            removed: &["c1", "c2", "c3"],
            fulfilled: true,
        },
        Case {
            id: "S25 policy change: incumbents win ties",
            policy: pick_n_preferring(
                2,
                10,
                json!({"labelSelector": {"matchLabels": {"region": "east"}}}),
            ),
            existing: vec![
                existing("c1", Bound, true, None),
                existing("c2", Bound, true, None),
            ],
            selected: &["c1", "c2"],
            removed: &[],
            fulfilled: true,
        },
        Case {
            id: "S27 PickAll with nothing matching",
            policy: json!({"type": "PickAll", "affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": [
                {"labelSelector": {"matchLabels": {"region": "mars"}}}
            ]}}}}),
            existing: vec![],
            selected: &[],
            removed: &[],
            fulfilled: true,
        },
        Case {
            id: "PickAll places on every eligible cluster",
            policy: json!({}),
            existing: vec![],
            selected: &["c1", "c2", "c3", "c4", "c5", "c6", "c7"],
            removed: &[],
            fulfilled: true,
        },
        Case {
            id: "placements on clusters no longer targeted are removed",
            policy: json!({}),
            existing: vec![existing("gone", Bound, false, None)],
            selected: &["c1", "c2", "c3", "c4", "c5", "c6", "c7"],
            removed: &["gone"],
            fulfilled: true,
        },
    ];
    for case in cases {
        let r = run(case.policy.clone(), &case.existing);
        assert_eq!(selected(&r), case.selected, "{}: selected", case.id);
        assert_eq!(removed(&r), case.removed, "{}: removed", case.id);
        assert_eq!(
            r.condition.fulfilled, case.fulfilled,
            "{}: fulfilled",
            case.id
        );
    }
}

#[test]
fn s1_status_lists_the_filtered_clusters() {
    let r = run(pick_n(3), &[]);
    assert_eq!(r.condition.reason, "SchedulingPolicyFulfilled");
    assert_eq!(
        r.condition.message,
        "found all clusters needed as specified by the placement policy, found 3 cluster(s)"
    );
    let lines: Vec<String> = r.unselected.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        [
            "cluster \"fleet-default/cluster-4-central-prod\" does not score high enough (affinity score: 0, topology spread score: 0)",
            "cluster \"fleet-default/cluster-3-east-canary\" does not score high enough (affinity score: 0, topology spread score: 0)",
            "cluster \"fleet-default/cluster-2-east-prod\" does not score high enough (affinity score: 0, topology spread score: 0)",
            "cluster \"fleet-default/cluster-1-east-prod\" does not score high enough (affinity score: 0, topology spread score: 0)",
            "cluster \"fleet-default/left-cluster-central-prod\" filtered by Eligibility: cluster has left the fleet",
            "cluster \"fleet-default/unhealthy-cluster-east-prod\" filtered by Eligibility: cluster has been unhealthy for 3600s",
        ]
    );
    assert!(r.selected.iter().all(|d| d.origin == Origin::New));
}

#[test]
fn s2_unfulfilled_message_counts() {
    let r = run(pick_n(10), &[]);
    assert_eq!(r.condition.reason, "SchedulingPolicyUnfulfilled");
    assert_eq!(
        r.condition.message,
        "could not find all clusters needed as specified by the placement policy, found 7 of 10 cluster(s)"
    );
    assert_eq!((r.condition.wanted, r.condition.found), (Some(10), 7));
    assert_eq!(r.unselected.len(), 2);
}

#[test]
fn s3_zero_clusters_message() {
    let r = run(pick_n(0), &[]);
    assert_eq!(
        r.condition.message,
        "found all clusters needed as specified by the placement policy, found 0 cluster(s)"
    );
}

#[test]
fn s4_affinity_scores() {
    let r = run(
        pick_n_preferring(
            4,
            10,
            json!({"labelSelector": {"matchLabels": {"region": "central"}}}),
        ),
        &[],
    );
    assert_eq!(score_of(&r, "c4").map(|s| s.affinity), Some(10));
    assert_eq!(score_of(&r, "c5").map(|s| s.affinity), Some(10));
    assert_eq!(score_of(&r, "c7").map(|s| s.affinity), Some(0));
}

#[test]
fn s5_spread_scores_and_the_violating_cluster() {
    let r = run(
        json!({"type": "PickN", "numberOfClusters": 2, "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "region"}]}),
        &[],
    );
    assert_eq!(score_of(&r, "c7").map(|s| s.topology_spread), Some(-1));
    assert_eq!(score_of(&r, "c5").map(|s| s.topology_spread), Some(0));
    assert!(r.unselected.iter().any(|u| u.to_string()
        == "cluster \"fleet-default/cluster-6-west-prod\" filtered by TopologySpread: violated doNotSchedule topology spread constraint \"region\" (max skew 1)"));
}

#[test]
fn s5_spread_over_three_regions_picks_one_per_region() {
    let r = run(
        json!({"type": "PickN", "numberOfClusters": 3, "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "region"}]}),
        &[],
    );
    let regions: Vec<&str> = r
        .selected
        .iter()
        .map(|d| {
            if d.cluster.name.contains("east") {
                "east"
            } else if d.cluster.name.contains("west") {
                "west"
            } else {
                "central"
            }
        })
        .collect();
    let mut sorted = regions.clone();
    sorted.sort();
    assert_eq!(sorted, ["central", "east", "west"], "{:?}", selected(&r));
    // The same decision again (placements kept) still reports the others.
    let placed: Vec<ExistingPlacement> = r
        .selected
        .iter()
        .map(|d| d.to_existing(PlacementState::Bound))
        .collect();
    let again = run(
        json!({"type": "PickN", "numberOfClusters": 3, "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "region"}]}),
        &placed,
    );
    assert_eq!(selected(&again), selected(&r));
    assert_eq!(again.unselected_total, r.unselected_total);
    assert_eq!(again.unselected.len(), r.unselected.len());
}

#[test]
fn s9_sorter_scores() {
    let r = run(
        pick_n_preferring(
            7,
            100,
            json!({"propertySorter": {"name": "kubernetes-fleet.io/node-count", "sortOrder": "Ascending"}}),
        ),
        &[],
    );
    let scores: Vec<(String, i64)> = r
        .selected
        .iter()
        .map(|d| (short(&d.cluster.name), d.score.unwrap().affinity))
        .collect();
    assert_eq!(
        scores,
        [
            ("c1".into(), 86),
            ("c2".into(), 57),
            ("c3".into(), 29),
            ("c4".into(), 86),
            ("c5".into(), 0),
            ("c6".into(), 86),
            ("c7".into(), 0)
        ]
    );
}

#[test]
fn s12_s18_taints_filter_pick_all_but_not_pick_fixed() {
    let mut clusters = fixture();
    clusters[0].taints.push(ClusterTaint {
        key: "key1".into(),
        value: "value1".into(),
        effect: TaintEffect::NoSchedule.as_str().into(),
        time_added: None,
    });
    let r = run_on(
        &clusters,
        json!({"tolerations": [{"key": "key1", "operator": "Equal", "value": "value2"}]}),
        &[],
        NOW,
    );
    assert!(!selected(&r).contains(&"c1".to_string()));
    assert_eq!(
        r.unselected[0].to_string(),
        "cluster \"fleet-default/cluster-1-east-prod\" filtered by TaintToleration: taint key1=value1:NoSchedule cannot be tolerated"
    );
    let r = run_on(
        &clusters,
        json!({"type": "PickFixed", "clusterNames": ["cluster-1-east-prod"]}),
        &[],
        NOW,
    );
    assert_eq!(selected(&r), ["c1"]);
}

#[test]
fn s15_s16_taints_and_health_loss_do_not_evict() {
    use PlacementState::*;
    let placed: Vec<ExistingPlacement> = ["c1", "c2", "c3", "c4", "c5", "c6", "c7"]
        .iter()
        .map(|s| existing(s, Bound, false, None))
        .collect();
    let mut clusters = fixture();
    for c in clusters.iter_mut().take(2) {
        c.taints.push(ClusterTaint {
            key: "maintenance".into(),
            value: String::new(),
            effect: TaintEffect::NoSchedule.as_str().into(),
            time_added: time(NOW),
        });
    }
    clusters[2].health.as_mut().unwrap().healthy = Some(HealthCondition {
        status: false,
        last_transition: NOW - 7200,
    });
    clusters[3].labels.insert("env".into(), "changed".into());
    let r = run_on(
        &clusters,
        json!({"affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": [
            {"labelSelector": {"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "canary"]}]}}
        ]}}}}),
        &placed,
        NOW,
    );
    assert_eq!(selected(&r), ["c1", "c2", "c3", "c4", "c5", "c6", "c7"]);
    assert!(r.removed.is_empty());
    assert!(r.selected.iter().all(|d| d.origin == Origin::Kept));
}

#[test]
fn s17_pick_fixed_reasons_and_condition() {
    let r = run(
        json!({"type": "PickFixed", "clusterNames": ["cluster-1-east-prod", "unhealthy-cluster-east-prod", "left-cluster-central-prod", "non-existent-cluster"]}),
        &[],
    );
    let lines: Vec<String> = r.unselected.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        [
            "cluster \"fleet-default/unhealthy-cluster-east-prod\" is not eligible for placement yet: cluster has been unhealthy for 3600s",
            "cluster \"fleet-default/left-cluster-central-prod\" is not eligible for placement yet: cluster has left the fleet",
            "specified cluster \"non-existent-cluster\" is not found",
        ]
    );
    assert_eq!(
        r.condition.message,
        "could not find all clusters needed as specified by the placement policy, found 1 of 4 cluster(s)"
    );
}

#[test]
fn s25_incumbents_are_reselected_not_recreated() {
    use PlacementState::*;
    let r = run(
        pick_n_preferring(
            2,
            10,
            json!({"labelSelector": {"matchLabels": {"region": "east"}}}),
        ),
        &[
            existing("c1", Bound, true, None),
            existing("c2", Bound, true, None),
        ],
    );
    assert!(
        r.selected
            .iter()
            .all(|d| d.origin == Origin::Reselected(Bound))
    );
    assert_eq!(score_of(&r, "c1").map(|s| s.existing_placement), Some(1));
    // c3 matches the term equally but has no incumbent bonus.
    assert!(
        r.unselected
            .iter()
            .any(|u| u.cluster.ends_with("cluster-3-east-canary")
                && u.reason
                    == UnselectedReason::ScoreTooLow(ClusterScore {
                        topology_spread: 0,
                        affinity: 10,
                        existing_placement: 0
                    }))
    );
}

#[test]
fn s26_unscheduled_placement_is_restored_when_picked_again() {
    use PlacementState::*;
    let r = run(pick_n(1), &[existing("c7", Unscheduled, false, None)]);
    assert_eq!(selected(&r), ["c7"]);
    assert_eq!(r.selected[0].origin, Origin::Reselected(Unscheduled));
    assert!(r.removed.is_empty());
}

#[test]
fn o1_no_select_taints_with_three_wanted() {
    let mut clusters: Vec<ClusterInfo> = fixture().into_iter().take(3).collect();
    clusters[0].taints.push(ClusterTaint {
        key: "key1".into(),
        value: "value1".into(),
        effect: TaintEffect::NoSelect.as_str().into(),
        time_added: time(NOW),
    });
    clusters[1].taints.push(ClusterTaint {
        key: "key2".into(),
        value: "value2".into(),
        effect: TaintEffect::NoSelect.as_str().into(),
        time_added: time(NOW),
    });
    let r = run_on(
        &clusters,
        json!({"type": "PickN", "numberOfClusters": 3, "tolerations": [{"key": "key1", "operator": "Equal", "value": "value1"}]}),
        &[],
        NOW,
    );
    assert_eq!(selected(&r), ["c1", "c3"]);
    assert!(!r.condition.fulfilled);
    assert_eq!((r.condition.wanted, r.condition.found), (Some(3), 2));
}

#[test]
fn o8_existing_decision_is_kept_when_fewer_clusters_than_wanted() {
    let clusters: Vec<ClusterInfo> = fixture().into_iter().take(2).collect();
    let r = run_on(
        &clusters,
        pick_n(4),
        &[existing("c1", PlacementState::Bound, false, None)],
        NOW,
    );
    assert_eq!(selected(&r), ["c1", "c2"]);
    assert_eq!(r.selected[0].origin, Origin::Kept);
    assert_eq!(r.selected[1].origin, Origin::New);
    assert_eq!(r.condition.found, 2);
}

#[test]
fn o9_no_schedule_keeps_existing_but_blocks_new() {
    let mut clusters: Vec<ClusterInfo> = fixture().into_iter().take(2).collect();
    for c in &mut clusters {
        c.taints.push(ClusterTaint {
            key: "k".into(),
            value: String::new(),
            effect: TaintEffect::NoSchedule.as_str().into(),
            time_added: time(NOW),
        });
    }
    let r = run_on(
        &clusters,
        pick_n(2),
        &[existing("c1", PlacementState::Bound, false, None)],
        NOW,
    );
    assert_eq!(selected(&r), ["c1"]);
}

/// O10 and the OCM migration scenario: a maintenance `NoSelect` taint tolerated for 60 s; the
/// placement stays until then (with a requeue), then moves to another cluster.
#[test]
fn o10_maintenance_taint_moves_the_placement_after_toleration_seconds() {
    let mut clusters = fixture();
    let policy = json!({"type": "PickN", "numberOfClusters": 1, "tolerations": [{"key": "maintenance", "operator": "Exists", "tolerationSeconds": 60}]});
    let placed = [existing("c7", PlacementState::Bound, false, None)];
    clusters[6].taints.push(ClusterTaint {
        key: "maintenance".into(),
        value: String::new(),
        effect: TaintEffect::NoSelect.as_str().into(),
        time_added: time(NOW),
    });
    let r = run_on(&clusters, policy.clone(), &placed, NOW + 30);
    assert_eq!(selected(&r), ["c7"]);
    assert_eq!(r.requeue_at, Some(NOW + 60));
    let r = run_on(&clusters, policy, &placed, NOW + 60);
    assert_eq!(removed(&r), ["c7"]);
    assert_eq!(
        r.removed[0].reason,
        "taint maintenance:NoSelect cannot be tolerated"
    );
    assert_eq!(selected(&r), ["c6"]);
    assert_eq!(r.selected[0].origin, Origin::New);
}

#[test]
fn o11_unreachable_cluster_is_replaced() {
    let mut clusters = fixture();
    let now = NOW + 10_000;
    for c in &mut clusters {
        c.health.as_mut().unwrap().last_heartbeat = Some(now - 5);
    }
    clusters[6].health.as_mut().unwrap().last_heartbeat = Some(now - 400);
    let taint = taint::unreachable_taint(&clusters[6], now, &EligibilityConfig::default()).unwrap();
    clusters[6].taints.push(taint);
    let r = run_on(
        &clusters,
        pick_n(1),
        &[existing("c7", PlacementState::Bound, false, None)],
        now,
    );
    assert_eq!(removed(&r), ["c7"]);
    assert_eq!(selected(&r), ["c6"]);
}

#[test]
fn o21_expired_custom_scores_count_as_missing_and_warn() {
    let mut clusters: Vec<ClusterInfo> = fixture().into_iter().take(3).collect();
    for (c, (value, until)) in
        clusters
            .iter_mut()
            .zip([(30, Some(NOW - 1)), (40, None), (50, Some(NOW + 100))])
    {
        c.scores.push(CustomScore {
            name: "demo".into(),
            value,
            valid_until: until.and_then(time),
        });
    }
    let r = run_on(
        &clusters,
        pick_n_preferring(
            3,
            10,
            json!({"propertySorter": {"name": "demo", "sortOrder": "Descending"}}),
        ),
        &[],
        NOW,
    );
    let scores: Vec<(String, i64)> = r
        .selected
        .iter()
        .map(|d| (short(&d.cluster.name), d.score.unwrap().affinity))
        .collect();
    assert_eq!(
        scores,
        [("c1".into(), 0), ("c2".into(), 0), ("c3".into(), 10)]
    );
    assert_eq!(
        r.warnings,
        ["custom score fleet-default/cluster-1-east-prod/demo expired"]
    );
}

/// Issue 9's end-to-end shape, as one pure sequence: 2 → 4 → 1 changes only what it must.
#[test]
fn scale_two_four_one_changes_only_the_expected_clusters() {
    let decide = |n: u32, placed: &[ExistingPlacement]| {
        run(json!({"type": "PickN", "numberOfClusters": n}), placed)
    };
    let to_existing = |r: &ScheduleResult| -> Vec<ExistingPlacement> {
        r.selected
            .iter()
            .map(|d| d.to_existing(PlacementState::Bound))
            .collect()
    };
    let two = decide(2, &[]);
    assert_eq!(selected(&two), ["c6", "c7"]);
    let four = decide(4, &to_existing(&two));
    assert_eq!(selected(&four), ["c4", "c5", "c6", "c7"]);
    assert!(four.removed.is_empty());
    let one = decide(1, &to_existing(&four));
    assert_eq!(selected(&one), ["c7"]);
    assert_eq!(removed(&one), ["c4", "c5", "c6"]);
    // Scaled in, and again in the steady state, the other clusters are listed with their reason.
    assert_eq!(one.unselected_total + 1, fixture().len());
    let steady = decide(1, &to_existing(&one));
    assert_eq!(selected(&steady), ["c7"]);
    assert!(steady.removed.is_empty());
    assert_eq!(steady.unselected, one.unselected);
    assert!(!steady.unselected.is_empty());
}

#[test]
fn unselected_list_is_capped_at_twenty() {
    let clusters: Vec<ClusterInfo> = (0..30)
        .map(|i| ClusterInfo::new(NS, &format!("m{i:02}"), []))
        .collect();
    let r = run_on(&clusters, pick_n(1), &[], NOW);
    assert_eq!(r.unselected.len(), status::MAX_UNSELECTED);
    assert_eq!(r.unselected_total, 29);
    assert_eq!(selected(&r), ["m29"]);
}

#[test]
fn invalid_policy_is_an_error() {
    let policy: PlacementPolicy = serde_json::from_value(json!({"type": "PickN"})).unwrap();
    let err = schedule(&ScheduleInput {
        policy: &policy,
        candidates: &[],
        existing: &[],
        now: NOW,
        eligibility: EligibilityConfig::default(),
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "placement.numberOfClusters: required with type PickN"
    );
}

#[test]
fn fingerprint_ignores_number_of_clusters() {
    let a: PlacementPolicy = serde_json::from_value(pick_n(2)).unwrap();
    let b: PlacementPolicy = serde_json::from_value(pick_n(5)).unwrap();
    let c: PlacementPolicy = serde_json::from_value(
        json!({"type": "PickN", "numberOfClusters": 5, "tolerations": [{"operator": "Exists"}]}),
    )
    .unwrap();
    assert_eq!(scheduling_fingerprint(&a), scheduling_fingerprint(&b));
    assert_ne!(scheduling_fingerprint(&b), scheduling_fingerprint(&c));
}

/// The same input in any candidate or placement order gives the same decision.
#[test]
fn decisions_do_not_depend_on_input_order() {
    use PlacementState::*;
    let policy = json!({"type": "PickN", "numberOfClusters": 4,
    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "region", "whenUnsatisfiable": "ScheduleAnyway"}],
    "affinity": {"clusterAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 20, "preference": {"propertySorter": {"name": "kubernetes-fleet.io/node-count", "sortOrder": "Descending"}}}
    ]}}});
    let placed = vec![
        existing("c2", Bound, false, None),
        existing("c3", Scheduled, true, None),
    ];
    let clusters = fixture();
    let forward = run_on(&clusters, policy.clone(), &placed, NOW);
    let mut reversed_clusters = clusters.clone();
    reversed_clusters.reverse();
    let mut reversed_placed = placed.clone();
    reversed_placed.reverse();
    let backward = run_on(&reversed_clusters, policy, &reversed_placed, NOW);
    assert_eq!(forward, backward);
    assert_eq!(forward.selected.len(), 4);
}

/// A placement chosen earlier but never rolled out (`Unscheduled`, current policy) on top of a full set: it is
/// dropped, and the other clusters are still listed as unselected (with a spread, as the controller saw it).
#[test]
fn an_unscheduled_surplus_placement_is_dropped_and_the_rest_listed() {
    let policy = json!({
        "type": "PickN", "numberOfClusters": 3,
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "region", "whenUnsatisfiable": "ScheduleAnyway"}],
    });
    let first = run(policy.clone(), &[]);
    assert_eq!(first.selected.len(), 3);
    let mut placed: Vec<ExistingPlacement> = first
        .selected
        .iter()
        .map(|d| d.to_existing(PlacementState::Bound))
        .collect();
    let spare_cluster = fixture()
        .into_iter()
        .find(|c| c.name.starts_with("cluster-") && !selected(&first).contains(&short(&c.name)))
        .unwrap();
    let spare = short(&spare_cluster.name);
    placed.push(existing(&spare, PlacementState::Unscheduled, false, None));
    let again = run(policy, &placed);
    assert_eq!(selected(&again), selected(&first));
    assert_eq!(removed(&again), [spare.as_str()]);
    assert!(!again.unselected.is_empty());
    assert!(
        again
            .unselected
            .iter()
            .any(|u| u.to_string().contains(&spare_cluster.name)),
        "{:?}",
        again.unselected
    );
}
