//! Operations: bootstrap of `fleet-local` (a GitRepo without targets lands on the `local` cluster through
//! the `default` group), metrics after reconciles, and leader election over a Lease.

mod support;

use std::time::Duration;

use fleet_api::Cluster;
use fleet_controller::cluster::bootstrap::{LOCAL_WORKSPACE, bootstrap};
use fleet_controller::leader::LeaderElection;
use fleet_testing::GitFixture;
use kube::api::{Api, PostParams};
use serde_json::json;

use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bootstrap_local_cluster_receives_a_gitrepo_without_targets() {
    let hub = hub().await;
    let client = hub.client.clone();
    bootstrap(&client).await.unwrap();
    bootstrap(&client).await.expect("bootstrap is idempotent");
    let git = GitFixture::new();
    git.write(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    );
    git.commit("one");
    let repo: fleet_api::GitRepo = serde_json::from_value(json!({
        "apiVersion": "fleet.cattle.io/v1alpha1",
        "kind": "GitRepo",
        "metadata": {"name": "local-repo", "namespace": LOCAL_WORKSPACE},
        "spec": {"repo": git.url(), "branch": "main"},
    }))
    .unwrap();
    Api::<fleet_api::GitRepo>::namespaced(client.clone(), LOCAL_WORKSPACE)
        .create(&PostParams::default(), &repo)
        .await
        .unwrap();
    let controller = RunningController::start(client.clone()).await;
    let local_ns = "cluster-fleet-local-local-1a3d67d0a899";
    eventually("the local cluster's namespace", || async {
        let cluster = Api::<Cluster>::namespaced(client.clone(), LOCAL_WORKSPACE)
            .get("local")
            .await
            .ok()?;
        (cluster.status?.namespace == local_ns).then_some(())
    })
    .await;
    let bds = eventually("a BundleDeployment on local", || async {
        let bds = deployments(&client).await;
        (!bds.is_empty()).then_some(bds)
    })
    .await;
    assert_eq!(
        bds.keys().cloned().collect::<Vec<_>>(),
        [("local".to_string(), "local-repo".to_string())]
    );
    let text = controller.context.metrics.encode();
    assert!(
        text.contains("fleet_controller_reconciles_total{controller=\"bundle\"}"),
        "{text}"
    );
    assert!(
        text.contains("fleet_controller_git_fetch_bytes_total"),
        "{text}"
    );
    controller.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_leader_at_a_time_and_takeover_after_expiry() {
    let hub = hub().await;
    let client = hub.client.clone();
    let a = LeaderElection::new(
        client.clone(),
        NS,
        "fleet-controller",
        "a",
        Duration::from_secs(1),
    );
    let b = LeaderElection::new(
        client.clone(),
        NS,
        "fleet-controller",
        "b",
        Duration::from_secs(1),
    );
    assert!(a.try_take().await.unwrap());
    assert!(
        !b.try_take().await.unwrap(),
        "b must not take a lease a just renewed"
    );
    assert!(a.try_take().await.unwrap(), "a renews its own lease");
    // a stops renewing: once the lease expires, b takes over and a no longer holds it.
    eventually("b takes the expired lease", || async {
        b.try_take().await.unwrap().then_some(())
    })
    .await;
    assert!(!a.try_take().await.unwrap());
}

/// A git remote that accepts connections and never answers: a fetch from it hangs.
async fn silent_git_server() -> (String, tokio::sync::mpsc::UnboundedReceiver<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/repo.git", listener.local_addr().unwrap());
    let (accepted, connections) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
            let _ = accepted.send(());
        }
    });
    (url, connections)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_does_not_wait_for_a_hung_git_fetch() {
    let hub = hub().await;
    let client = hub.client.clone();
    let (url, mut connections) = silent_git_server().await;
    create_gitrepo(&client, "hung", json!({"repo": url, "branch": "main"})).await;
    let controller = RunningController::start(client.clone()).await;
    // The GitRepo's reconcile is now inside the fetch, which will not return.
    connections
        .recv()
        .await
        .expect("the controller connects to the remote");
    controller.stop().await;
    // Abandoned, not failed: no error was written into the GitRepo's status.
    let repo = gitrepo(&client, "hung").await;
    assert_eq!(condition(&repo, "GitPolling"), None);
}
