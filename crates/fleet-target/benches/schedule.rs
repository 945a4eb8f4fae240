//! Benchmark: one PickN scheduling decision with required and preferred affinity (label and
//! property sorter) and a topology spread constraint over 10,000 clusters. Prints milliseconds
//! per decision (target: under 50 ms). Run with `cargo bench -p fleet-target --bench schedule`.

mod support;

use std::hint::black_box;
use std::time::Instant;

use fleet_target::model::{ClusterHealth, ClusterInfo, HealthCondition};
use fleet_target::placement::{
    EligibilityConfig, ExistingPlacement, PlacementPolicy, PlacementState, ScheduleInput, schedule,
};

const CLUSTERS: usize = 10_000;
const NOW: i64 = 1_000_000;
const ROUNDS: usize = 20;

fn fleet() -> Vec<ClusterInfo> {
    let envs = ["prod", "staging", "dev"];
    (0..CLUSTERS)
        .map(|i| {
            let region = format!("region-{}", (i / 3) % 12);
            let zone = format!("zone-{}", (i / 7) % 36);
            let mut c = ClusterInfo::new(
                "fleet-default",
                &format!("cluster-{i:05}"),
                [
                    ("region", region.as_str()),
                    ("zone", zone.as_str()),
                    ("env", envs[i % 3]),
                ],
            );
            c.properties.insert(
                "kubernetes-fleet.io/node-count".into(),
                ((i * 7919) % 97 + 1).to_string(),
            );
            c.resource_usage
                .allocatable
                .insert("cpu".into(), format!("{}", (i * 31) % 64 + 1));
            c.health = Some(ClusterHealth {
                joined: true,
                leaving: false,
                last_heartbeat: Some(NOW - (i as i64 % 60)),
                healthy: Some(HealthCondition {
                    status: i % 50 != 0,
                    last_transition: NOW - 3600,
                }),
            });
            c
        })
        .collect()
}

fn policy(n: u32) -> PlacementPolicy {
    serde_json::from_value(serde_json::json!({
        "type": "PickN",
        "numberOfClusters": n,
        "affinity": {"clusterAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": [
                {"labelSelector": {"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "staging"]}]},
                 "propertySelector": {"matchExpressions": [{"name": "resources.kubernetes-fleet.io/allocatable-cpu", "operator": "Ge", "values": ["4"]}]}}
            ]},
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "preference": {"labelSelector": {"matchLabels": {"env": "prod"}}}},
                {"weight": 30, "preference": {"propertySorter": {"name": "kubernetes-fleet.io/node-count", "sortOrder": "Descending"}}}
            ]
        }},
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "region", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}
        ]
    }))
    .expect("policy")
}

fn measure(
    label: &str,
    clusters: &[&ClusterInfo],
    policy: &PlacementPolicy,
    existing: &[ExistingPlacement],
) {
    let input = ScheduleInput {
        policy,
        candidates: clusters,
        existing,
        now: NOW,
        eligibility: EligibilityConfig::default(),
    };
    let warm = schedule(&input).expect("schedule");
    let (start, cpu_start) = (Instant::now(), support::cpu_ns());
    for _ in 0..ROUNDS {
        black_box(schedule(black_box(&input)).expect("schedule"));
    }
    let per = start.elapsed().as_secs_f64() * 1000.0 / ROUNDS as f64;
    let cpu = cpu_start
        .zip(support::cpu_ns())
        .map(|(a, b)| format!("{:.2} ms CPU, ", (b - a) as f64 / 1e6 / ROUNDS as f64))
        .unwrap_or_default();
    println!(
        "{label}: {cpu}{per:.2} ms wall per scheduling decision ({} clusters, {} selected, fulfilled={})",
        clusters.len(),
        warm.selected.len(),
        warm.condition.fulfilled
    );
}

fn main() {
    let clusters = fleet();
    let refs: Vec<&ClusterInfo> = clusters.iter().collect();
    measure(
        "PickN 10, affinity + spread, fresh",
        &refs,
        &policy(10),
        &[],
    );
    measure(
        "PickN 36, affinity + spread, fresh",
        &refs,
        &policy(36),
        &[],
    );
    let first = schedule(&ScheduleInput {
        policy: &policy(10),
        candidates: &refs,
        existing: &[],
        now: NOW,
        eligibility: EligibilityConfig::default(),
    })
    .expect("schedule");
    let existing: Vec<ExistingPlacement> = first
        .selected
        .iter()
        .map(|d| d.to_existing(PlacementState::Bound))
        .collect();
    measure(
        "PickN 10 → 20 scale-out with 10 incumbents",
        &refs,
        &policy(20),
        &existing,
    );
    measure(
        "PickN 10 steady state (nothing to do)",
        &refs,
        &policy(10),
        &existing,
    );
}
