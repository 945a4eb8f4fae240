//! Prints the API server's throughput (creates/s, updates/s, gets/s) in-process and over loopback HTTP
//! through kube-rs clients (and in-process with a data dir, every write fsync'd), watch fan-out to 100 watchers, and resident memory holding 100,000 objects.
//! Run with `cargo bench -p fleet-apiserver --bench apiserver`. Targets (issue 3): >= 20,000 writes/s
//! in-process, >= 5,000 writes/s over loopback, 100,000 objects in < 500 MB. `BENCH_ONLY=in-process` (or
//! memory, loopback, durable, watch; comma-separated) runs some phases only; `BENCH_OBJECTS` sets the count.

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use fleet_apiserver::ApiServer;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;

/// The allocator the `fleet` binary uses, so the figures are the product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CONCURRENCY: usize = 16;

fn cm(name: &str) -> ConfigMap {
    serde_json::from_value(
        json!({"metadata": {"name": name, "labels": {"bench": "yes"}}, "data": {"k": "v"}}),
    )
    .unwrap()
}

/// CPU time (user + system) this process has used so far, in seconds: on a shared machine the wall-clock
/// rate depends on other load, the CPU cost per operation much less.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return f64::NAN;
    };
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// Operations per second and CPU microseconds per operation.
struct Rate {
    per_second: f64,
    cpu_us: f64,
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:>7.0}/s ({:>4.0} µs CPU)",
            self.per_second, self.cpu_us
        )
    }
}

/// Runs `total` operations with CONCURRENCY tasks.
async fn rate<F, Fut>(total: usize, op: F) -> Rate
where
    F: Fn(usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let start = Instant::now();
    let cpu_start = cpu_seconds();
    let mut tasks = Vec::new();
    for worker in 0..CONCURRENCY {
        let op = op.clone();
        tasks.push(tokio::spawn(async move {
            let mut i = worker;
            while i < total {
                op(i).await;
                i += CONCURRENCY;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    Rate {
        per_second: total as f64 / start.elapsed().as_secs_f64(),
        cpu_us: (cpu_seconds() - cpu_start) * 1e6 / total as f64,
    }
}

async fn crud_rates(label: &'static str, client: kube::Client, n: usize) {
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    let api = cms.clone();
    let creates = rate(n, move |i| {
        let api = api.clone();
        async move {
            api.create(&PostParams::default(), &cm(&format!("{label}-{i}")))
                .await
                .unwrap();
        }
    })
    .await;
    let api = cms.clone();
    let updates = rate(n, move |i| {
        let api = api.clone();
        async move {
            let patch = Patch::Merge(json!({"data": {"k": i.to_string()}}));
            api.patch(&format!("{label}-{i}"), &PatchParams::default(), &patch)
                .await
                .unwrap();
        }
    })
    .await;
    let api = cms.clone();
    let gets = rate(n, move |i| {
        let api = api.clone();
        async move {
            api.get(&format!("{label}-{i}")).await.unwrap();
        }
    })
    .await;
    println!(
        "{label:>10}: creates {creates}   updates {updates}   gets {gets}   ({n} objects, {CONCURRENCY} concurrent clients; CPU includes the kube-rs client)"
    );
}

async fn watch_fan_out(server: &ApiServer, watchers: usize, writes: usize) {
    let client = server.client();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "fanout");
    let ns: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    ns.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "fanout"}})).unwrap(),
    )
    .await
    .unwrap();
    let rv = common::list_version(&cms).await;
    let mut tasks = Vec::new();
    for _ in 0..watchers {
        let stream = cms
            .watch(&WatchParams::default().timeout(120), &rv)
            .await
            .unwrap();
        tasks.push(tokio::spawn(async move {
            let mut stream = Box::pin(stream);
            let mut seen = 0;
            while seen < writes {
                match stream.next().await {
                    Some(Ok(WatchEvent::Added(_))) => seen += 1,
                    Some(Ok(_)) => {}
                    _ => break,
                }
            }
            seen
        }));
    }
    let start = Instant::now();
    for i in 0..writes {
        cms.create(&PostParams::default(), &cm(&format!("f-{i}")))
            .await
            .unwrap();
    }
    let mut delivered = 0;
    for t in tasks {
        delivered += t.await.unwrap();
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "watch fan-out: {writes} writes to {watchers} watchers, {delivered} events delivered in {secs:.2}s ({:.0} events/s)",
        delivered as f64 / secs
    );
}

fn rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .map(str::to_string)
        })
        .and_then(|l| {
            l.split_whitespace()
                .nth(1)
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

async fn memory_for(objects: usize) {
    let before = rss_mb();
    let server = ApiServer::in_memory();
    let cms: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let api = cms.clone();
    rate(objects, move |i| {
        let api = api.clone();
        async move {
            let c: ConfigMap = serde_json::from_value(json!({"metadata": {"name": format!("m-{i}"),
                "labels": {"app": "bench", "index": i.to_string()}}, "data": {"key": "value", "other": "some longer value here"}}))
            .unwrap();
            api.create(&PostParams::default(), &c).await.unwrap();
        }
    })
    .await;
    let after = rss_mb();
    println!(
        "memory: {} objects stored, resident {after:.0} MB (+{:.0} MB over the empty process)",
        server.object_count(),
        after - before
    );
}

/// Whether the phase `name` runs: all of them, unless `BENCH_ONLY` names some (comma-separated: memory,
/// in-process, loopback, durable, watch), e.g. to profile one.
fn runs(name: &str) -> bool {
    std::env::var("BENCH_ONLY").map_or(true, |only| only.split(',').any(|p| p == name))
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let n = std::env::var("BENCH_OBJECTS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(20_000);
        // First, so that the resident figure is that of a fresh process.
        if runs("memory") {
            memory_for(100_000).await;
        }
        if runs("in-process") {
            let server = ApiServer::in_memory();
            crud_rates("in-process", server.client(), n).await;
        }
        if runs("loopback") {
            let server = ApiServer::in_memory();
            let addr = server.spawn_loopback().await.unwrap();
            let config = kube::Config::new(format!("http://{addr}").parse().unwrap());
            crud_rates("loopback", kube::Client::try_from(config).unwrap(), n / 2).await;
        }
        if runs("durable") {
            let dir =
                std::env::temp_dir().join(format!("fleet-apiserver-bench-{}", std::process::id()));
            let durable = ApiServer::new(fleet_apiserver::Config {
                data_dir: Some(dir.clone()),
                ..Default::default()
            })
            .unwrap();
            crud_rates("durable", durable.client(), n / 4).await;
            let _ = std::fs::remove_dir_all(&dir);
        }
        if runs("watch") {
            watch_fan_out(&ApiServer::in_memory(), 100, 1000).await;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    });
}
