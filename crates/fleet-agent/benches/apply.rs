//! Agent benchmark against embedded API servers (hub and downstream, in-process), counting every request the
//! agent makes with a tower layer on its clients:
//! 1. one BundleDeployment of 500 resources: time from publishing to `Ready`, and requests made;
//! 2. an idle agent with 50 ready BundleDeployments: requests per minute with the default configuration
//!    (readiness and drift come from watches on the applied kinds; the safety-net resync is 30 minutes), so
//!    the only requests are the watches' reconnects.
//!
//! Run: `cargo bench -p fleet-agent --bench apply` (add `--profile dev` on a loaded machine; say which).

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use fleet_agent::{Agent, AgentConfig, Downstream, Scope};
use fleet_testing::TestCluster;

fn counted(cluster: &TestCluster, counter: &Arc<AtomicUsize>, user: Option<&str>) -> kube::Client {
    let counter = counter.clone();
    let user = user.map(str::to_string);
    let service = tower::ServiceBuilder::new()
        .map_request(move |mut req: http::Request<kube::client::Body>| {
            counter.fetch_add(1, Ordering::Relaxed);
            if let Some(user) = &user {
                req.headers_mut()
                    .insert("Impersonate-User", user.parse().expect("header"));
            }
            req
        })
        .service(cluster.server.service());
    kube::Client::new(service, "default")
}

struct Counted {
    hub: Arc<AtomicUsize>,
    downstream: Arc<AtomicUsize>,
}

impl Counted {
    fn total(&self) -> usize {
        self.hub.load(Ordering::Relaxed) + self.downstream.load(Ordering::Relaxed)
    }
    fn reset(&self) {
        self.hub.store(0, Ordering::Relaxed);
        self.downstream.store(0, Ordering::Relaxed);
    }
}

fn start(hub: &TestCluster, downstream: &TestCluster) -> Counted {
    let counts = Counted {
        hub: Arc::default(),
        downstream: Arc::default(),
    };
    let hub_client = counted(hub, &counts.hub, None);
    let cluster = downstream.clone();
    let counter = counts.downstream.clone();
    let factory = Downstream::new(Arc::new(move |user: Option<&str>| {
        counted(&cluster, &counter, user)
    }));
    let config = AgentConfig::new(
        hub_client,
        CLUSTER_NS,
        Scope::new("cattle-fleet-system", ""),
    );
    tokio::spawn(Agent::new(config, factory).run());
    counts
}

async fn large_bundle() {
    let hub = hub().await;
    let downstream = TestCluster::empty();
    let counts = start(&hub, &downstream);
    let files: Vec<(String, String)> = (0..500)
        .map(|i| {
            (
                format!("cm-{i:03}.yaml"),
                config_map(&format!("cm-{i:03}"), &i.to_string()),
            )
        })
        .collect();
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, c)| (n.as_str(), c.as_str()))
        .collect();
    let began = Instant::now();
    let id = publish(&hub.client, "large", &borrowed, options_in("bench"), |_| {}).await;
    let status = wait_status(&hub.client, "large", "500 resources ready", |s| {
        s.applied_deployment_id == id && s.ready
    })
    .await;
    let elapsed = began.elapsed();
    println!(
        "500 resources: Ready after {:.2}s; agent requests: {} (hub {}, downstream {}); resources in status: {}",
        elapsed.as_secs_f64(),
        counts.total(),
        counts.hub.load(Ordering::Relaxed),
        counts.downstream.load(Ordering::Relaxed),
        status.resources.len()
    );
}

async fn idle_agent() {
    let hub = hub().await;
    let downstream = TestCluster::empty();
    let counts = start(&hub, &downstream);
    for i in 0..50 {
        let files: Vec<(String, String)> = (0..3)
            .map(|j| {
                (
                    format!("cm-{j}.yaml"),
                    config_map(&format!("b{i}-cm-{j}"), "v"),
                )
            })
            .collect();
        let borrowed: Vec<(&str, &str)> = files
            .iter()
            .map(|(n, c)| (n.as_str(), c.as_str()))
            .collect();
        publish(
            &hub.client,
            &format!("bundle-{i:02}"),
            &borrowed,
            options_in("idle"),
            |_| {},
        )
        .await;
    }
    for i in 0..50 {
        wait_status(&hub.client, &format!("bundle-{i:02}"), "ready", |s| s.ready).await;
    }
    counts.reset();
    let window = Duration::from_secs(60);
    tokio::time::sleep(window).await;
    println!(
        "idle agent, 50 BundleDeployments x 3 objects: {} requests in {}s (hub {}, downstream {}) = {:.2} per BundleDeployment per minute",
        counts.total(),
        window.as_secs(),
        counts.hub.load(Ordering::Relaxed),
        counts.downstream.load(Ordering::Relaxed),
        counts.total() as f64 / 50.0
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        large_bundle().await;
        idle_agent().await;
    });
}
