//! Commit-to-applied latency in dev mode (issue #8): 10 simulated clusters, 20 commits each delivered
//! (a) by a webhook — an HTTP POST of a GitHub push event to the controller's webhook receiver, the
//! GitRepo polling only hourly — and (b) by polling, with the GitRepo's `pollingInterval: 2s`.
//! A commit changes one ConfigMap value; it counts as applied when every one of the 10 clusters holds the
//! new value (seen by a watch per cluster). Prints p50, p95, min and max per delivery path.
//!
//! Run: `cargo bench -p fleet-dev --bench latency`.

use std::path::Path;
use std::time::{Duration, Instant};

use fleet_dev::cluster::AgentTiming;
use fleet_dev::snapshot::SnapshotRepo;
use fleet_dev::{Dev, DevOptions, RepoRequest, RepoSource, Tuning};
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::watch;

const CLUSTERS: usize = 10;
const COMMITS: u64 = 20;
const POLLING_INTERVAL: &str = "2s";

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(bench());
}

async fn bench() {
    let temp = tempfile::tempdir().expect("temp dir");
    let webhook_repo = content_repo(temp.path(), "webhook");
    let polling_repo = content_repo(temp.path(), "polling");
    let request = |name: &str, repo: &SnapshotRepo, interval: &str| {
        RepoRequest {
        source: RepoSource::Url(repo.url()),
        name: Some(name.to_string()),
        spec: json!({
            "branch": "main",
            "pollingInterval": interval,
            "targets": [{"clusterSelector": {"matchExpressions": [{"key": "env", "operator": "Exists"}]}}],
        })
        .as_object()
        .cloned()
        .unwrap_or_default(),
    }
    };
    let started = Instant::now();
    let dev = Dev::start(DevOptions {
        clusters: CLUSTERS,
        repos: vec![
            request("bench-webhook", &webhook_repo.0, "1h"),
            request("bench-polling", &polling_repo.0, POLLING_INTERVAL),
        ],
        data_dir: temp.path().join("dev"),
        tuning: Tuning {
            agent: AgentTiming {
                monitor_interval: Duration::from_secs(2),
                checkin_interval: Duration::from_secs(5),
            },
            ..Tuning::default()
        },
    })
    .await
    .expect("dev mode starts");
    dev.wait_ready(Duration::from_secs(300))
        .await
        .expect("both GitRepos deployed");
    println!(
        "dev mode with {CLUSTERS} clusters up and both GitRepos Ready in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let webhook = measure(&dev, &webhook_repo, "webhook", |commit| {
        let (url, repo_url) = (dev.webhook_url(), webhook_repo.0.url());
        async move { post_push(&url, &repo_url, &commit).await }
    })
    .await;
    report(
        "webhook (GitHub push event POSTed to the receiver)",
        webhook,
    );
    let polling = measure(&dev, &polling_repo, "polling", |_| async {}).await;
    report(
        &format!("polling (GitRepo pollingInterval {POLLING_INTERVAL})"),
        polling,
    );
    dev.shutdown().await;
}

/// A snapshot repository and the folder it is made from (one ConfigMap whose value is the commit number).
fn content_repo(root: &Path, name: &str) -> (SnapshotRepo, std::path::PathBuf) {
    let folder = root.join(format!("{name}-content"));
    write_value(&folder, name, 0);
    let repo = SnapshotRepo::init(&root.join(format!("{name}.git"))).expect("init");
    repo.commit_dir(&folder, &["main".to_string()], "0")
        .expect("commit");
    (repo, folder)
}

fn write_value(folder: &Path, name: &str, value: u64) {
    std::fs::create_dir_all(folder).expect("mkdir");
    std::fs::write(
        folder.join("fleet.yaml"),
        format!("defaultNamespace: bench-{name}\n"),
    )
    .expect("write fleet.yaml");
    std::fs::write(
        folder.join("cm.yaml"),
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bench\ndata:\n  value: \"{value}\"\n"
        ),
    )
    .expect("write cm.yaml");
}

/// Makes COMMITS commits, announcing each with `announce`, and returns each commit-to-applied latency.
async fn measure<F, Fut>(
    dev: &Dev,
    repo: &(SnapshotRepo, std::path::PathBuf),
    name: &str,
    announce: F,
) -> Vec<Duration>
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let seen: Vec<watch::Receiver<u64>> = dev
        .clusters()
        .iter()
        .map(|c| watch_value(c.client(), format!("bench-{name}")))
        .collect();
    let mut latencies = Vec::new();
    for value in 1..=COMMITS {
        write_value(&repo.1, name, value);
        let commit = repo
            .0
            .commit_dir(&repo.1, &["main".to_string()], &value.to_string())
            .expect("commit")
            .expect("a new commit");
        let start = Instant::now();
        announce(commit).await;
        for receiver in &seen {
            let mut receiver = receiver.clone();
            tokio::time::timeout(Duration::from_secs(120), receiver.wait_for(|v| *v >= value))
                .await
                .unwrap_or_else(|_| panic!("{name}: commit {value} not applied within 120 s"))
                .expect("watch alive");
        }
        latencies.push(start.elapsed());
    }
    latencies
}

/// The latest `data.value` of ConfigMap `bench` in `namespace` on one cluster, as a watch sees it.
fn watch_value(cluster: kube::Client, namespace: String) -> watch::Receiver<u64> {
    let (tx, rx) = watch::channel(0);
    tokio::spawn(async move {
        let api: Api<ConfigMap> = Api::namespaced(cluster, &namespace);
        let config = watcher::Config::default().fields("metadata.name=bench");
        let mut objects = watcher(api, config)
            .default_backoff()
            .applied_objects()
            .boxed();
        while let Some(object) = objects.next().await {
            let value = object
                .ok()
                .and_then(|cm| cm.data)
                .and_then(|data| data.get("value").and_then(|v| v.parse().ok()));
            if let Some(value) = value {
                tx.send_modify(|v| *v = (*v).max(value));
            }
        }
    });
    rx
}

/// POSTs a GitHub push event for `commit` on `main` of `repo_url` to the webhook receiver.
async fn post_push(url: &str, repo_url: &str, commit: &str) {
    let body = json!({
        "ref": "refs/heads/main",
        "after": commit,
        "repository": {"clone_url": repo_url, "html_url": repo_url},
    })
    .to_string();
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (host, path) = rest.split_once('/').expect("a path");
    let mut stream = tokio::net::TcpStream::connect(host).await.expect("connect");
    let request = format!(
        "POST /{path} HTTP/1.1\r\nHost: {host}\r\nX-GitHub-Event: push\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream
        .write_all(request.as_bytes())
        .await
        .expect("send webhook");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .expect("read response");
    assert!(
        response.starts_with("HTTP/1.1 200") && response.contains("1 GitRepo(s) triggered"),
        "webhook answered: {response}"
    );
}

fn report(what: &str, mut latencies: Vec<Duration>) {
    latencies.sort();
    let at = |q: f64| {
        let index = ((latencies.len() as f64 * q).ceil() as usize).clamp(1, latencies.len()) - 1;
        latencies[index].as_secs_f64() * 1000.0
    };
    println!(
        "{what}: {} commits to {CLUSTERS} clusters: p50 {:.0} ms, p95 {:.0} ms, min {:.0} ms, max {:.0} ms",
        latencies.len(),
        at(0.5),
        at(0.95),
        latencies.first().map_or(0.0, |d| d.as_secs_f64() * 1000.0),
        latencies.last().map_or(0.0, |d| d.as_secs_f64() * 1000.0),
    );
}
