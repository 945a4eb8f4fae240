//! Benchmark: Fleet targeting and rollout planning of 50 bundles over 1,000 clusters (the
//! controller benchmark's shape: 50,000 targets), with customizations, `${ }` templating and
//! partitions. Prints the time for all bundles and per target.
//! Run with `cargo bench -p fleet-target --bench targeting`.

use std::collections::BTreeMap;
mod support;

use std::hint::black_box;
use std::time::Instant;

use fleet_target::index::ClusterIndex;
use fleet_target::model::{ClusterGroupInfo, ClusterInfo};
use fleet_target::pipeline::{BundlePlanInput, plan_bundle};
use fleet_target::rollout::RolloutStrategy;
use fleet_target::selector::{LabelSelector, SelectorExt};
use fleet_target::targeting::{TargetingBundle, TargetingContext};

const NS: &str = "fleet-default";
const CLUSTERS: usize = 1_000;
const BUNDLES: usize = 50;

fn index() -> ClusterIndex {
    let envs = ["dev", "staging", "prod"];
    ClusterIndex::new(
        (0..CLUSTERS).map(|i| {
            let region = format!("region-{}", i % 7);
            ClusterInfo::new(
                NS,
                &format!("cluster-{i:04}"),
                [
                    ("env", envs[i % 3]),
                    ("region", region.as_str()),
                    ("fleet.cattle.io/benchmark", "true"),
                ],
            )
        }),
        [ClusterGroupInfo {
            name: "benchmark".into(),
            namespace: NS.into(),
            labels: [("tier".to_string(), "bench".to_string())].into(),
            selector: Some(LabelSelector::from_labels([(
                "fleet.cattle.io/benchmark",
                "true",
            )])),
        }],
    )
}

fn bundle(i: usize) -> TargetingBundle {
    serde_json::from_value(serde_json::json!({
        "name": format!("bundle-{i:02}"),
        "namespace": NS,
        "options": {"defaultNamespace": "bench", "helm": {"chart": "app", "values": {
            "replicas": 1, "image": {"tag": "v1"},
            "cluster": "${ .ClusterName }", "region": "global.fleet.clusterLabels.region"
        }}},
        "targets": [
            {"name": "prod", "clusterSelector": {"matchLabels": {"env": "prod"}}, "helm": {"values": {"replicas": 3}}},
            {"name": "dev", "clusterSelector": {"matchExpressions": [{"key": "env", "operator": "In", "values": ["dev", "staging"]}]}, "helm": {"values": {"debug": true}}},
            {"name": "bench", "clusterGroup": "benchmark"}
        ],
        "targetRestrictions": [{"name": "bench", "clusterGroup": "benchmark"}]
    }))
    .expect("bundle")
}

fn main() {
    let index = index();
    let bundles: Vec<TargetingBundle> = (0..BUNDLES).map(bundle).collect();
    let namespaces = [NS.to_string()];
    let deployments = BTreeMap::new();
    let rollout = RolloutStrategy::default();
    let context = TargetingContext::default();
    let run = || {
        let mut targets = 0;
        for b in &bundles {
            let input = BundlePlanInput {
                bundle: b,
                namespaces: &namespaces,
                context: &context,
                placement: None,
                rollout: &rollout,
                paused: false,
                deployments: &deployments,
            };
            let plan = plan_bundle(&index, &input, &|t| format!("s-manifest:{}", t.target_name))
                .expect("plan");
            targets += black_box(plan).targets.len();
        }
        targets
    };
    let targets = run();
    let rounds = 3;
    let (start, cpu_start) = (Instant::now(), support::cpu_ns());
    for _ in 0..rounds {
        black_box(run());
    }
    let total = start.elapsed().as_secs_f64() * 1000.0 / f64::from(rounds);
    let cpu = cpu_start
        .zip(support::cpu_ns())
        .map(|(a, b)| format!("{:.1} ms CPU, ", (b - a) as f64 / 1e6 / f64::from(rounds)))
        .unwrap_or_default();
    println!(
        "{BUNDLES} bundles × {CLUSTERS} clusters: {cpu}{total:.1} ms wall for {targets} targets ({:.2} µs wall per target)",
        total * 1000.0 / targets as f64
    );
}
