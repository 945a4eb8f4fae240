//! Reads a synthetic in-memory monorepo of 1,000 bundles × 10 manifests into Bundles (discovery, fleet.yaml,
//! resources, targets, manifest IDs) and prints bundles per second. Target: ≥ 2,000 bundles/s.

use std::time::Instant;

use fleet_bundle::tree::MemoryTree;
use fleet_bundle::{ReadOptions, hash, read_bundles};

const BUNDLES: usize = 1_000;
const MANIFESTS: usize = 10;
const ROUNDS: usize = 5;

fn monorepo() -> MemoryTree {
    let mut tree = MemoryTree::new();
    tree.add_file("README.md", "# synthetic monorepo\n");
    for b in 0..BUNDLES {
        let dir = format!("apps/team-{:02}/app-{b:04}", b % 20);
        tree.add_file(
            &format!("{dir}/fleet.yaml"),
            format!(
                "defaultNamespace: app-{b}\nlabels:\n  app: app-{b}\ntargetCustomizations:\n- name: prod\n  clusterSelector:\n    matchLabels:\n      env: prod\n  namespace: app-{b}-prod\n"
            ),
        );
        for m in 0..MANIFESTS {
            tree.add_file(
                &format!("{dir}/manifests/cm-{m:02}.yaml"),
                format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-{b}-cm-{m}\n  labels:\n    app: app-{b}\ndata:\n  index: \"{m}\"\n  payload: {}\n",
                    "x".repeat(200)
                ),
            );
        }
    }
    tree
}

fn main() {
    let tree = monorepo();
    let options = ReadOptions {
        repo_name: "monorepo".to_string(),
        ..ReadOptions::default()
    };
    let mut best = f64::MAX;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let bundles = read_bundles(&tree, &[], &options).expect("synthetic monorepo reads");
        let ids: usize = bundles
            .iter()
            .map(|b| hash::manifest_id(&b.spec.resources).len())
            .sum();
        let elapsed = start.elapsed().as_secs_f64();
        assert_eq!(bundles.len(), BUNDLES);
        assert!(ids > 0);
        best = best.min(elapsed);
    }
    println!(
        "read {BUNDLES} bundles x {MANIFESTS} manifests: best of {ROUNDS} rounds {:.1} ms, {:.0} bundles/s (target >= 2000)",
        best * 1000.0,
        BUNDLES as f64 / best
    );
}
