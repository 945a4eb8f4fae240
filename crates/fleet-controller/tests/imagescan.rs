//! When ImageScans are scanned, against a real registry (Debian's `docker-registry`, filled with the real
//! `helm push`): the controller watches them instead of listing them again and again, scans one when it appears
//! (also when re-created under the same name) or its spec changes, not again before its interval, and never
//! while it is suspended.

mod support;

#[path = "../../fleet-chart-source/tests/servers/mod.rs"]
mod servers;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use fleet_api::ImageScan;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;
use servers::{Registry, package_chart};
use support::*;

fn push_tag(registry: &Registry, home: &Path, version: &str) {
    let archive = package_chart(
        home,
        &home.join("src"),
        "app",
        version,
        &home.join("served"),
    );
    registry.push(home, &archive, "team");
}

/// Creates the ImageScan `name` of `image` (tag name `name`, semver `>=1.0.0`).
async fn create_scan(
    scans: &Api<ImageScan>,
    name: &str,
    image: &str,
    interval: &str,
    suspend: bool,
) {
    let scan: ImageScan = serde_json::from_value(json!({
        "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "ImageScan",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"tagName": name, "image": image, "interval": interval, "suspend": suspend,
                 "policy": {"semver": {"range": ">=1.0.0"}}},
    }))
    .unwrap();
    scans.create(&PostParams::default(), &scan).await.unwrap();
}

/// Merges `spec` into the spec of the ImageScan `name`.
async fn merge_spec(scans: &Api<ImageScan>, name: &str, spec: serde_json::Value) {
    let patch = Patch::Merge(json!({ "spec": spec }));
    scans
        .patch(name, &PatchParams::default(), &patch)
        .await
        .unwrap();
}

/// A client of `hub` that counts the cluster-wide lists of ImageScans (not the watches).
fn counting_client(hub: &fleet_testing::TestCluster, lists: Arc<AtomicUsize>) -> kube::Client {
    let service = tower::ServiceBuilder::new()
        .map_request(move |request: http::Request<kube::client::Body>| {
            let uri = request.uri();
            let watch = uri
                .query()
                .is_some_and(|query| query.split('&').any(|pair| pair.starts_with("watch=")));
            if request.method() == http::Method::GET
                && uri.path() == "/apis/fleet.cattle.io/v1alpha1/imagescans"
                && !watch
            {
                lists.fetch_add(1, Ordering::SeqCst);
            }
            request
        })
        .service(hub.server.service());
    kube::Client::new(service, "default")
}

async fn scanned_tag(scans: &Api<ImageScan>, name: &str) -> Option<(String, Option<Time>)> {
    let status = scans.get_opt(name).await.ok()??.status?;
    (!status.latest_tag.is_empty()).then_some((status.latest_tag, status.last_scan_time))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scans_follow_spec_changes_and_intervals_without_listing_again() {
    let hub = hub().await;
    let home = tempfile::tempdir().unwrap();
    let registry = Registry::start(false);
    push_tag(&registry, home.path(), "1.0.0");
    let image = format!("{}/team/app", registry.host());
    let lists = Arc::new(AtomicUsize::new(0));
    let controller = RunningController::start(counting_client(&hub, lists.clone())).await;
    let scans: Api<ImageScan> = Api::namespaced(hub.client.clone(), NS);

    // A scan with a long interval is scanned when it appears; a suspended one is not.
    create_scan(&scans, "slow", &image, "1h", false).await;
    create_scan(&scans, "held", &image, "1s", true).await;
    let (tag, first_scan) =
        eventually("the new ImageScan scanned", || scanned_tag(&scans, "slow")).await;
    assert_eq!(tag, "1.0.0");
    assert!(first_scan.is_some());

    // Nothing changes for a while: no scan of either, and no list of every ImageScan.
    let lists_before = lists.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let slow = scans.get("slow").await.unwrap();
    assert_eq!(slow.status.unwrap().last_scan_time, first_scan);
    assert_eq!(scans.get("held").await.unwrap().status, None);
    assert_eq!(lists.load(Ordering::SeqCst), lists_before);

    // Deleted and created again under the same name: a new ImageScan, scanned at once.
    scans
        .delete("slow", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the ImageScan gone", || async {
        scans.get_opt("slow").await.ok()?.is_none().then_some(())
    })
    .await;
    create_scan(&scans, "slow", &image, "1h", false).await;
    eventually("the re-created ImageScan scanned", || {
        scanned_tag(&scans, "slow")
    })
    .await;

    // A newer tag is not seen before the interval; a spec change scans at once.
    push_tag(&registry, home.path(), "1.1.0");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        scanned_tag(&scans, "slow")
            .await
            .map(|(tag, _)| tag)
            .as_deref(),
        Some("1.0.0")
    );
    merge_spec(
        &scans,
        "slow",
        json!({"policy": {"semver": {"range": ">=1.0.0 <2.0.0"}}}),
    )
    .await;
    eventually("the changed ImageScan scanned again", || async {
        let (tag, _) = scanned_tag(&scans, "slow").await?;
        (tag == "1.1.0").then_some(())
    })
    .await;

    // Resumed: scanned.
    merge_spec(&scans, "held", json!({"suspend": false})).await;
    eventually("the resumed ImageScan scanned", || async {
        let (tag, _) = scanned_tag(&scans, "held").await?;
        (tag == "1.1.0").then_some(())
    })
    .await;
    assert_eq!(lists.load(Ordering::SeqCst), lists_before);
    controller.stop().await;
}
