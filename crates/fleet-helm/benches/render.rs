//! Render time per corpus chart: in-process (`render_chart`), and — when the binaries are there — the whole
//! `fleet helm template` process and the real `helm template`, with the ratios. Prints figures; asserts nothing.
//! `cargo bench -p fleet-helm --bench render` (corpus: `FLEET_HELM_CORPUS`, default `../shared/charts`;
//! `HELM` and `FLEET_BIN` name the binaries, defaulting to `.tools/bin/helm` and `target/release/fleet`; when there
//! is no release `fleet`, `FLEET_RENDER_EXAMPLE` (this crate's release `render` example, the same render path without
//! the CLI) stands in for the whole-process figure).

#[path = "../tests/support/mod.rs"]
#[allow(dead_code)]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time_process(bin: &Path, args: &[&str], runs: usize) -> Option<Duration> {
    let mut times = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let out = Command::new(bin).args(args).output().ok()?;
        if !out.status.success() {
            return None;
        }
        times.push(start.elapsed());
    }
    Some(median(times))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let corpus = std::env::var("FLEET_HELM_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("../shared/charts"));
    let helm = std::env::var("HELM")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join(".tools/bin/helm"));
    let fleet = std::env::var("FLEET_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("target/release/fleet"));
    let example = std::env::var("FLEET_RENDER_EXAMPLE")
        .map(PathBuf::from)
        .ok();
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    println!(
        "{:28} {:>10} {:>12} {:>10} {:>9} {:>9}",
        "chart", "in-proc ms", "fleet-proc ms", "helm ms", "helm/in", "helm/proc"
    );
    for (chart, set, dir, values) in support::combinations(&corpus) {
        if set != "default" && std::env::var("BENCH_ALL_SETS").is_err() {
            continue;
        }
        let mut times = Vec::new();
        let mut ok = true;
        for _ in 0..runs {
            let start = Instant::now();
            ok &= support::render(&dir, values.as_deref()).is_ok();
            times.push(start.elapsed());
        }
        let inproc = median(times);
        let dir_s = dir.to_string_lossy().to_string();
        let mut args = vec![
            "template",
            "rel",
            dir_s.as_str(),
            "-n",
            "default",
            "--kube-version",
            "v1.33.0",
        ];
        let vs = values.as_ref().map(|v| v.to_string_lossy().to_string());
        if let Some(v) = &vs {
            args.extend(["-f", v.as_str()]);
        }
        let helm_t = helm
            .is_file()
            .then(|| time_process(&helm, &args, runs))
            .flatten();
        let fleet_t = if fleet.is_file() {
            let mut fleet_args = vec!["helm"];
            fleet_args.extend(args.iter().copied());
            time_process(&fleet, &fleet_args, runs)
        } else if let Some(ex) = example.as_ref().filter(|e| e.is_file()) {
            let mut ex_args = vec![dir_s.as_str()];
            if let Some(v) = &vs {
                ex_args.push(v.as_str());
            }
            time_process(ex, &ex_args, runs)
        } else {
            None
        };
        let fmt = |d: Option<Duration>| {
            d.map(|d| format!("{:.1}", ms(d)))
                .unwrap_or_else(|| "-".into())
        };
        let ratio = |a: Option<Duration>, b: Duration| {
            a.map(|a| format!("{:.1}x", a.as_secs_f64() / b.as_secs_f64()))
                .unwrap_or_else(|| "-".into())
        };
        println!(
            "{:28} {:>10.2} {:>12} {:>10} {:>9} {:>9}{}",
            format!("{chart}/{set}"),
            ms(inproc),
            fmt(fleet_t),
            fmt(helm_t),
            ratio(helm_t, inproc),
            fleet_t
                .map(|f| ratio(helm_t, f))
                .unwrap_or_else(|| "-".into()),
            if ok { "" } else { "  (render error)" }
        );
    }
}
