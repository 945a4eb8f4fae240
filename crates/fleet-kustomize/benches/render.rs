//! Renders every fixture of `testdata/kustomize` in-process and, when the real kubectl is present
//! (`.tools/bin/kubectl`, or `$KUBECTL`), times `kubectl kustomize` on the same input; prints both and the ratio.
//! Run with `cargo bench -p fleet-kustomize`.

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use fleet_kustomize::{Options, build};

fn kubectl() -> Option<PathBuf> {
    let path = std::env::var_os("KUBECTL")
        .map(PathBuf::from)
        .unwrap_or_else(|| support::fixtures_root().join("../../.tools/bin/kubectl"));
    path.is_file().then_some(path)
}

fn per_iteration(mut f: impl FnMut(), min_total: Duration, max_iters: u32) -> Duration {
    f();
    let start = Instant::now();
    let mut n = 0;
    while n < max_iters && (n == 0 || start.elapsed() < min_total) {
        f();
        n += 1;
    }
    start.elapsed() / n
}

/// A large synthetic kustomization: a base of `n` Deployments, each with its generated ConfigMap, and an overlay
/// with namespace, prefix, labels, images and a patch on every Deployment.
fn synthetic(n: usize) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    let mut resources = String::new();
    let mut kust = String::from("resources:\n- deployments.yaml\nconfigMapGenerator:\n");
    for i in 0..n {
        resources.push_str(&format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app{i}\nspec:\n  selector:\n    \
             matchLabels: {{app: app{i}}}\n  template:\n    metadata:\n      labels: {{app: app{i}}}\n    spec:\n      \
             containers:\n      - name: c\n        image: nginx:1\n        envFrom:\n        - configMapRef: {{name: cfg{i}}}\n"
        ));
        kust.push_str(&format!("- name: cfg{i}\n  literals: [k={i}]\n"));
    }
    files.insert("base/deployments.yaml".to_string(), resources.into_bytes());
    files.insert("base/kustomization.yaml".to_string(), kust.into_bytes());
    let overlay = "resources: [../base]\nnamespace: prod\nnamePrefix: p-\nlabels:\n- pairs: {env: prod}\n  includeSelectors: true\n\
                   images:\n- name: nginx\n  newTag: \"2\"\npatches:\n- target: {kind: Deployment}\n  patch: |-\n    \
                   - op: add\n      path: /spec/replicas\n      value: 3\n";
    files.insert(
        "overlay/kustomization.yaml".to_string(),
        overlay.as_bytes().to_vec(),
    );
    files
}

fn main() {
    for n in [100, 1000] {
        let files = synthetic(n);
        let objects = build(&files, "overlay", &Options::default())
            .expect("the synthetic kustomization builds");
        assert_eq!(objects.len(), 2 * n);
        let t = per_iteration(
            || {
                let _ = std::hint::black_box(build(&files, "overlay", &Options::default()));
            },
            Duration::from_millis(500),
            100,
        );
        println!(
            "synthetic overlay, {n} Deployments + {n} generated ConfigMaps: {:.1}ms per build",
            t.as_secs_f64() * 1e3
        );
    }

    let kubectl = kubectl();
    if kubectl.is_none() {
        println!("kubectl not found: printing in-process figures only");
    }
    println!(
        "{:<40} {:>12} {:>14} {:>10}",
        "fixture", "ours", "kubectl", "ratio"
    );
    let (mut ours_total, mut theirs_total) = (Duration::ZERO, Duration::ZERO);
    let mut ratios = Vec::new();
    for f in support::fixtures()
        .into_iter()
        .filter(|f| f.expected.is_some())
    {
        let ours = per_iteration(
            || {
                let _ = std::hint::black_box(build(&f.files, &f.build_dir, &Options::default()));
            },
            Duration::from_millis(200),
            10_000,
        );
        ours_total += ours;
        let theirs = kubectl.as_ref().map(|k| {
            let dir = f.dir.join("input");
            let target = if f.build_dir.is_empty() {
                ".".to_string()
            } else {
                f.build_dir.clone()
            };
            per_iteration(
                || {
                    let _ = Command::new(k)
                        .arg("kustomize")
                        .arg(&target)
                        .current_dir(&dir)
                        .output();
                },
                Duration::from_millis(300),
                5,
            )
        });
        match theirs {
            Some(t) => {
                theirs_total += t;
                let ratio = t.as_secs_f64() / ours.as_secs_f64();
                ratios.push(ratio);
                println!(
                    "{:<40} {:>10.1}µs {:>12.1}ms {:>9.0}×",
                    f.name,
                    ours.as_secs_f64() * 1e6,
                    t.as_secs_f64() * 1e3,
                    ratio
                );
            }
            None => println!(
                "{:<40} {:>10.1}µs {:>14} {:>10}",
                f.name,
                ours.as_secs_f64() * 1e6,
                "-",
                "-"
            ),
        }
    }
    if !ratios.is_empty() {
        ratios.sort_by(f64::total_cmp);
        println!(
            "total: ours {:.2}ms, kubectl {:.1}ms; ratio overall {:.0}×, minimum {:.0}×, median {:.0}×",
            ours_total.as_secs_f64() * 1e3,
            theirs_total.as_secs_f64() * 1e3,
            theirs_total.as_secs_f64() / ours_total.as_secs_f64(),
            ratios[0],
            ratios[ratios.len() / 2]
        );
    }
}
