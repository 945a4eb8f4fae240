//! Scale benchmark: one GitRepo with B bundles (default 50) targeting C simulated clusters (default 1,000)
//! on the embedded API server, with a light simulated agent that reports every BundleDeployment applied
//! and ready. Prints the time until all B×C BundleDeployments exist, until all are Ready, and the peak
//! resident memory of the controller.
//!
//! The controller runs in a child process (this same binary, started with
//! `FLEET_BENCH_CONTROLLER_KUBECONFIG`) talking to the embedded API server over loopback HTTP, exactly as
//! `fleet controller` would, so its peak RSS (`VmHWM` of the child, read from `/proc/<pid>/status` before
//! it is stopped) is the controller's own; the API server and the simulated agents run in the parent,
//! whose peak RSS is printed separately. Both run on mimalloc, as the `fleet` binary does.
//!
//! `cargo bench -p fleet-controller --bench scale`; `FLEET_BENCH_CLUSTERS` / `FLEET_BENCH_BUNDLES` scale it.
//! `FLEET_BENCH_LOG` (a `RUST_LOG`-style filter, e.g. `fleet_controller=info`) prints the controller
//! process's tracing to stderr.
//! `FLEET_BENCH_CONTROLLER_WRAPPER` (a command and its arguments, split on spaces) starts the controller
//! process under another program, e.g. `heaptrack -o /tmp/controller` for a heap profile (heaptrack sees
//! only malloc: comment out the global allocator below for that run).
//! The controller child turns transparent huge pages off as `fleet controller` does
//! (`fleet_controller::process::prefer_small_pages`); `FLEET_BENCH_THP=1` keeps them, for comparison.

use std::collections::HashSet;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fleet_api::BundleDeployment;
use fleet_controller::Settings;
use fleet_controller::metrics::Metrics;
use fleet_testing::{GitFixture, TestCluster};
use futures::{StreamExt, TryStreamExt, stream};
use kube::api::{Api, PostParams};
use kube::runtime::watcher::{self, Event};
use kube::{Client, ResourceExt};
use serde_json::json;

/// The `fleet` binary's allocator (`crates/fleet-cli/src/main.rs`), so that the controller process's peak
/// RSS is what the product's would be.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const NS: &str = "fleet-default";

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Peak resident memory (`VmHWM`) of process `pid` (`"self"` for this one), in MiB.
fn peak_rss_mib(pid: &str) -> f64 {
    proc_status_mib(pid, "VmHWM:")
}

/// Resident memory (`VmRSS`) of process `pid` now, in MiB.
fn rss_mib(pid: &str) -> f64 {
    proc_status_mib(pid, "VmRSS:")
}

/// A `kB` field of `/proc/<pid>/status`, in MiB (0 when unreadable).
fn proc_status_mib(pid: &str, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}

/// CPU time (user + system) process `pid` (`"self"` for this one) used so far, in seconds (Linux clock
/// ticks of 1/100 s).
fn cpu_seconds(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces) start at field 3; utime and stime are 14 and 15.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

async fn create_clusters(client: &Client, count: usize) {
    let api: Api<fleet_api::Cluster> = Api::namespaced(client.clone(), NS);
    stream::iter(0..count)
        .map(|i| {
            let api = api.clone();
            async move {
                let cluster = serde_json::from_value(json!({
                    "apiVersion": "fleet.cattle.io/v1alpha1",
                    "kind": "Cluster",
                    "metadata": {"name": format!("c{i:05}"), "namespace": NS, "labels": {"env": "bench"}},
                    "spec": {},
                }))
                .expect("cluster");
                api.create(&PostParams::default(), &cluster).await.map(|_| ())
            }
        })
        .buffer_unordered(32)
        .try_collect::<Vec<()>>()
        .await
        .expect("create clusters");
}

/// The simulated agents: report each BundleDeployment applied and ready at its deploymentID; returns when
/// `expected` are Ready, with the time all existed.
async fn simulate_agents(client: Client, expected: usize, start: Instant) -> (Duration, Duration) {
    let mut seen: HashSet<String> = HashSet::new();
    let mut ready: HashSet<String> = HashSet::new();
    let mut all_created = None;
    let mut events = watcher::watcher(
        Api::<BundleDeployment>::all(client.clone()),
        watcher::Config::default(),
    )
    .boxed();
    let (report_tx, mut report_rx) = tokio::sync::mpsc::unbounded_channel::<BundleDeployment>();
    let reporter = tokio::spawn(async move {
        let mut pending = Vec::new();
        while let Some(bd) = report_rx.recv().await {
            pending.push(bd);
            while let Ok(more) = report_rx.try_recv() {
                pending.push(more);
            }
            stream::iter(pending.drain(..).map(|bd| {
                let client = client.clone();
                async move {
                    let _ = fleet_testing::report_ready(&client, &bd).await;
                }
            }))
            .buffer_unordered(32)
            .collect::<Vec<()>>()
            .await;
        }
    });
    while let Some(event) = events.next().await {
        let bd = match event {
            Ok(Event::Apply(bd) | Event::InitApply(bd)) => bd,
            _ => continue,
        };
        let key = format!("{}/{}", bd.namespace().unwrap_or_default(), bd.name_any());
        let new = seen.insert(key.clone());
        if new && (seen.len() == 1 || seen.len().is_multiple_of((expected / 10).max(1))) {
            println!(
                "{} BundleDeployments after {:.1} s",
                seen.len(),
                start.elapsed().as_secs_f64()
            );
        }
        if all_created.is_none() && seen.len() >= expected {
            all_created = Some(start.elapsed());
            println!(
                "all {expected} BundleDeployments exist after {:.1} s",
                start.elapsed().as_secs_f64()
            );
        }
        let status = bd.status.clone().unwrap_or_default();
        if status.ready && status.applied_deployment_id == bd.spec.deployment_id {
            ready.insert(key);
            if ready.len() >= expected {
                break;
            }
        } else {
            let _ = report_tx.send(bd);
        }
    }
    reporter.abort();
    (all_created.unwrap_or_default(), start.elapsed())
}

/// The child process: the controller alone, against the hub in the kubeconfig, until stdin closes.
fn run_controller_child(kubeconfig: &Path, git_cache: &Path) {
    // The parent reads this process's figures by this pid (not the wrapper's, when there is one).
    std::fs::write(pid_file(git_cache), std::process::id().to_string()).expect("write pid file");
    // As `fleet controller` starts.
    if std::env::var_os("FLEET_BENCH_THP").is_none() {
        fleet_controller::process::prefer_small_pages();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    if let Ok(filter) = std::env::var("FLEET_BENCH_LOG") {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::stderr)
            .init();
    }
    runtime.block_on(async move {
        let kubeconfig = kube::config::Kubeconfig::read_from(kubeconfig).expect("kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("client config");
        let client = Client::try_from(config).expect("client");
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        // A plain thread, so that a blocked read never holds the runtime's shutdown.
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = std::io::stdin().read_to_end(&mut sink);
            let _ = stop_tx.send(());
        });
        let settings = Settings {
            git_cache_dir: git_cache.to_path_buf(),
            ..Settings::default()
        };
        fleet_controller::run(
            client,
            settings,
            Arc::new(Metrics::new()),
            async move {
                let _ = stop_rx.await;
            },
            |_| {},
        )
        .await;
    });
}

/// Where the controller process writes its pid, beside the git cache.
fn pid_file(git_cache: &Path) -> std::path::PathBuf {
    git_cache.with_file_name("controller.pid")
}

fn start_controller_child(kubeconfig: &Path, git_cache: &Path) -> Child {
    let bench = std::env::current_exe().expect("bench binary");
    let wrapper = std::env::var("FLEET_BENCH_CONTROLLER_WRAPPER").unwrap_or_default();
    let mut command = match wrapper.split_whitespace().collect::<Vec<_>>().split_first() {
        Some((program, args)) => {
            let mut command = Command::new(program);
            command.args(args).arg(&bench);
            command
        }
        None => Command::new(&bench),
    };
    command
        .env("FLEET_BENCH_CONTROLLER_KUBECONFIG", kubeconfig)
        .env("FLEET_BENCH_GIT_CACHE", git_cache)
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the controller process")
}

fn main() {
    if let (Some(kubeconfig), Some(cache)) = (
        std::env::var_os("FLEET_BENCH_CONTROLLER_KUBECONFIG"),
        std::env::var_os("FLEET_BENCH_GIT_CACHE"),
    ) {
        run_controller_child(Path::new(&kubeconfig), Path::new(&cache));
        return;
    }
    let clusters = env_number("FLEET_BENCH_CLUSTERS", 1000);
    let bundles = env_number("FLEET_BENCH_BUNDLES", 50);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let hub = TestCluster::with_fleet_crds().await;
        let client = hub.client.clone();
        let ns = serde_json::from_value(json!({"metadata": {"name": NS}})).expect("namespace");
        Api::<k8s_openapi::api::core::v1::Namespace>::all(client.clone())
            .create(&PostParams::default(), &ns)
            .await
            .expect("create namespace");
        create_clusters(&client, clusters).await;
        let git = GitFixture::new();
        for b in 0..bundles {
            git.write(
                &format!("b{b:02}/configmap.yaml"),
                &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b{b:02}\ndata:\n  k: v\n"),
            );
            git.write(&format!("b{b:02}/fleet.yaml"), "defaultNamespace: bench\n");
        }
        git.commit("bench");
        let paths: Vec<String> = (0..bundles).map(|b| format!("b{b:02}")).collect();
        let repo = serde_json::from_value(json!({
            "apiVersion": "fleet.cattle.io/v1alpha1",
            "kind": "GitRepo",
            "metadata": {"name": "bench", "namespace": NS},
            "spec": {"repo": git.url(), "branch": "main", "paths": paths,
                     "targets": [{"clusterSelector": {"matchLabels": {"env": "bench"}}}]},
        }))
        .expect("gitrepo");
        let cache = tempfile::tempdir().expect("temp dir");
        let (addr, kubeconfig) = hub.serve_loopback().await;
        let kubeconfig_file = cache.path().join("hub.kubeconfig");
        std::fs::write(&kubeconfig_file, kubeconfig).expect("write kubeconfig");
        let git_cache = cache.path().join("git");
        let start = Instant::now();
        Api::<fleet_api::GitRepo>::namespaced(client.clone(), NS)
            .create(&PostParams::default(), &repo)
            .await
            .expect("create gitrepo");
        let mut controller = start_controller_child(&kubeconfig_file, &git_cache);
        let expected = clusters * bundles;
        let (created, all_ready) = simulate_agents(client.clone(), expected, start).await;
        let pid = std::fs::read_to_string(pid_file(&git_cache))
            .unwrap_or_else(|_| controller.id().to_string());
        let controller_peak = peak_rss_mib(&pid);
        let controller_rss = rss_mib(&pid);
        let controller_cpu = cpu_seconds(&pid);
        println!(
            "{bundles} bundles x {clusters} clusters = {expected} BundleDeployments: all created after {:.1} s, all Ready after {:.1} s",
            created.as_secs_f64(),
            all_ready.as_secs_f64()
        );
        println!(
            "peak RSS of the controller process (talking to the hub at http://{addr}): {controller_peak:.0} MiB ({controller_rss:.0} MiB when all are Ready)"
        );
        println!(
            "peak RSS of the bench process (embedded API server + simulated agents): {:.0} MiB",
            peak_rss_mib("self")
        );
        println!(
            "CPU time until all Ready: controller {controller_cpu:.1} s, bench process (API server + agents) {:.1} s",
            cpu_seconds("self")
        );
        drop(controller.stdin.take());
        let _ = controller.wait();
    });
}
