//! Render time per corpus chart: in-process (`render_chart`), the whole `fleet helm template` process and the real
//! `helm template` process, measured in the same run (process runs interleaved, so both see the same machine load),
//! with the ratios and a closing "N of M charts ≥ 10×" line (the target: the whole process at least 10×
//! faster than helm). Wall times are medians; CPU times (user + system, from the kernel's accounting of waited-for
//! children, 10 ms ticks averaged over the runs) are means. Prints figures; asserts nothing.
//!
//! `cargo bench -p fleet-helm --bench render`. Environment:
//! - `FLEET_HELM_CORPUS`: the corpus (default `../shared/charts`);
//! - `HELM`, `FLEET_BIN`: the binaries (default `.tools/bin/helm` and `$CARGO_TARGET_DIR/release/fleet`, else
//!   `target/release/fleet`);
//! - `BENCH_RUNS` (default 5); `BENCH_ALL_SETS=1` for every values set, not only each chart's defaults;
//! - `BENCH_CHARTS=a,b` to measure only those charts.

// Each bench uses one of its two readers.
#[allow(dead_code)]
mod cpu;

#[path = "../tests/support/mod.rs"]
#[allow(dead_code)]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The `fleet` binary's allocator (see `crates/fleet-cli/src/main.rs`), so the in-process figures, and profiles of
/// this bench, show the allocation costs the CLI has.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The target ratio.
const TARGET: f64 = 10.0;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Accumulated timings of one binary over the runs.
#[derive(Default)]
struct ProcessTimes {
    wall: Vec<Duration>,
    cpu: Duration,
    failed: bool,
}

impl ProcessTimes {
    fn run(&mut self, bin: &Path, args: &[&str]) {
        let before = cpu::children();
        let start = Instant::now();
        let ok = Command::new(bin)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        self.wall.push(start.elapsed());
        if let (Some(b), Some(a)) = (before, cpu::children()) {
            self.cpu += a.saturating_sub(b);
        }
        self.failed |= !ok;
    }

    /// Median wall time and mean CPU time, unless a run failed.
    fn summary(&self) -> Option<(Duration, Duration)> {
        (!self.failed && !self.wall.is_empty())
            .then(|| (median(self.wall.clone()), self.cpu / self.wall.len() as u32))
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

fn ratio(num: Duration, den: Duration) -> f64 {
    num.as_secs_f64() / den.as_secs_f64().max(1e-9)
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let env_path = |key: &str| std::env::var(key).ok().map(PathBuf::from);
    let corpus = env_path("FLEET_HELM_CORPUS").unwrap_or_else(|| root.join("../shared/charts"));
    let helm = env_path("HELM").unwrap_or_else(|| root.join(".tools/bin/helm"));
    let fleet = env_path("FLEET_BIN").unwrap_or_else(|| {
        env_path("CARGO_TARGET_DIR")
            .unwrap_or_else(|| root.join("target"))
            .join("release/fleet")
    });
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5)
        .max(1);
    let all_sets = std::env::var("BENCH_ALL_SETS").is_ok();
    let only: Option<Vec<String>> = std::env::var("BENCH_CHARTS")
        .ok()
        .map(|c| c.split(',').map(str::to_string).collect());
    let (have_fleet, have_helm) = (fleet.is_file(), helm.is_file());
    if !have_fleet {
        println!(
            "no release fleet binary at {} (cargo build --release -p fleet-cli, or set FLEET_BIN)",
            fleet.display()
        );
    }
    if !have_helm {
        println!(
            "no helm binary at {} (make tools, or set HELM)",
            helm.display()
        );
    }
    println!(
        "{:44} {:>8} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}",
        "chart/values", "in-proc", "fleet", "fleet cpu", "helm", "helm cpu", "x wall", "x cpu"
    );
    let (mut measured, mut reached_wall, mut reached_cpu) = (0, 0, 0);
    for (chart, set, dir, values) in support::combinations(&corpus) {
        if (set != "default" && !all_sets) || only.as_ref().is_some_and(|o| !o.contains(&chart)) {
            continue;
        }
        let mut inproc = Vec::new();
        let mut ok = true;
        for _ in 0..runs {
            let start = Instant::now();
            ok &= support::render(&dir, values.as_deref()).is_ok();
            inproc.push(start.elapsed());
        }
        let dir_s = dir.to_string_lossy().to_string();
        let vs = values.as_ref().map(|v| v.to_string_lossy().to_string());
        let mut helm_args = vec![
            "template",
            "rel",
            dir_s.as_str(),
            "-n",
            "default",
            "--kube-version",
            "v1.33.0",
        ];
        if let Some(v) = &vs {
            helm_args.extend(["-f", v.as_str()]);
        }
        let mut fleet_args = vec!["helm"];
        fleet_args.extend(helm_args.iter().copied());
        let (mut fleet_t, mut helm_t) = (ProcessTimes::default(), ProcessTimes::default());
        for _ in 0..runs {
            if have_fleet {
                fleet_t.run(&fleet, &fleet_args);
            }
            if have_helm {
                helm_t.run(&helm, &helm_args);
            }
        }
        let (f, h) = (fleet_t.summary(), helm_t.summary());
        let show = |t: Option<(Duration, Duration)>| match t {
            Some((wall, cpu)) => (ms(wall), ms(cpu)),
            None => ("-".into(), "-".into()),
        };
        let ((fw, fc), (hw, hc)) = (show(f), show(h));
        let (mut x_wall, mut x_cpu) = ("-".to_string(), "-".to_string());
        if let (Some((f_wall, f_cpu)), Some((h_wall, h_cpu))) = (f, h) {
            let (w, c) = (ratio(h_wall, f_wall), ratio(h_cpu, f_cpu));
            measured += 1;
            reached_wall += usize::from(w >= TARGET);
            reached_cpu += usize::from(c >= TARGET);
            x_wall = format!("{w:.1}x");
            x_cpu = if f_cpu.is_zero() {
                "-".into()
            } else {
                format!("{c:.1}x")
            };
        }
        println!(
            "{:44} {:>8} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}{}",
            format!("{chart}/{set}"),
            ms(median(inproc)),
            fw,
            fc,
            hw,
            hc,
            x_wall,
            x_cpu,
            if ok { "" } else { "  (render error)" }
        );
    }
    println!(
        "{reached_wall} of {measured} charts >= {TARGET}x (whole fleet process vs helm, median wall time); \
         {reached_cpu} of {measured} by CPU time"
    );
}
