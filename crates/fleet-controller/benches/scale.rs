//! Scale benchmark: one GitRepo with B bundles (default 50) targeting C simulated clusters (default 1,000)
//! on the embedded API server, with a light simulated agent that reports every BundleDeployment applied
//! and ready. Prints the time until all B×C BundleDeployments exist, until all are Ready, and the peak
//! resident memory of this process (controller, API server and simulator together).
//!
//! `cargo bench -p fleet-controller --bench scale`; `FLEET_BENCH_CLUSTERS` / `FLEET_BENCH_BUNDLES` scale it.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fleet_api::BundleDeployment;
use fleet_controller::Settings;
use fleet_controller::metrics::Metrics;
use fleet_testing::{GitFixture, TestCluster};
use futures::{StreamExt, TryStreamExt, stream};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::watcher::{self, Event};
use kube::{Client, ResourceExt};
use serde_json::json;

const NS: &str = "fleet-default";

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
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
                    let api: Api<BundleDeployment> = Api::namespaced(client, &bd.namespace().unwrap_or_default());
                    let status = json!({
                        "apiVersion": "fleet.cattle.io/v1alpha1",
                        "kind": "BundleDeployment",
                        "status": {
                            "appliedDeploymentID": bd.spec.deployment_id,
                            "ready": true,
                            "nonModified": true,
                            "conditions": [{"type": "Deployed", "status": "True"}, {"type": "Ready", "status": "True"}],
                        },
                    });
                    let _ = api
                        .patch_status(&bd.name_any(), &PatchParams::apply("simulated-agent").force(), &Patch::Apply(&status))
                        .await;
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
        seen.insert(key.clone());
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

fn main() {
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
        let settings = Settings {
            git_cache_dir: cache.path().to_path_buf(),
            ..Settings::default()
        };
        let rss_before = peak_rss_mib();
        let start = Instant::now();
        Api::<fleet_api::GitRepo>::namespaced(client.clone(), NS)
            .create(&PostParams::default(), &repo)
            .await
            .expect("create gitrepo");
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let controller = tokio::spawn(fleet_controller::run(
            client.clone(),
            settings,
            Arc::new(Metrics::new()),
            async move {
                let _ = stop_rx.await;
            },
            |_| {},
        ));
        let expected = clusters * bundles;
        let (created, all_ready) = simulate_agents(client.clone(), expected, start).await;
        println!(
            "{bundles} bundles x {clusters} clusters = {expected} BundleDeployments: all created after {:.1} s, all Ready after {:.1} s",
            created.as_secs_f64(),
            all_ready.as_secs_f64()
        );
        println!(
            "peak RSS of the process (controller + embedded API server + simulator): {:.0} MiB (before the GitRepo: {:.0} MiB)",
            peak_rss_mib(),
            rss_before
        );
        let _ = stop_tx.send(());
        let _ = controller.await;
    });
}
