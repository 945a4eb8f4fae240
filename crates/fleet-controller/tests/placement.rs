//! Placement end to end on the embedded API server with the real controller: Bundles with a
//! `placement` block, Clusters simulated by Cluster objects whose `status.agent.lastSeen` a heartbeat
//! task keeps fresh, and a simulated agent that reports every BundleDeployment ready. Covers PickN with
//! topology spread, scaling numberOfClusters (across a controller restart), a maintenance taint moving a
//! placement after `tolerationSeconds`, a cluster that stops heartbeating, and a GitRepo's placement
//! inherited by the Bundles of a real git repository.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fleet_api::{Bundle, BundleStatus, Cluster};
use fleet_controller::placement::{PlacementSettings, UNREACHABLE_TAINT_KEY};
use fleet_testing::{GitFixture, TestCluster};
use kube::api::{Api, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::json;

use support::*;

/// Clusters whose heartbeat the test keeps fresh.
type Beating = Arc<Mutex<BTreeSet<String>>>;

/// Fast membership limits so nothing waits minutes.
fn fast(ctx: &fleet_controller::Context) {
    let _ = ctx.placement_settings.set(PlacementSettings {
        heartbeat_timeout: Duration::from_secs(3),
        ..PlacementSettings::default()
    });
}

/// Creates member clusters (label `member=yes` plus `labels`) and keeps their heartbeat fresh, as
/// agents would; also reports every BundleDeployment ready at its deploymentID.
/// A hub with the controller running on [`fast`] timings, and a client of the hub.
async fn hub_with_fast_controller() -> (TestCluster, Client, RunningController) {
    let hub = hub().await;
    let client = hub.client.clone();
    let controller = RunningController::start_with(client.clone(), fast).await;
    (hub, client, controller)
}

async fn members(client: &Client, clusters: &[(&str, &[(&str, &str)])]) -> Beating {
    for (name, labels) in clusters {
        let mut all = vec![("member", "yes")];
        all.extend_from_slice(labels);
        put_cluster(client, name, &all).await;
        heartbeat(client, name).await;
    }
    let beating: Beating = Arc::new(Mutex::new(
        clusters.iter().map(|(n, _)| n.to_string()).collect(),
    ));
    let (client, names) = (client.clone(), beating.clone());
    tokio::spawn(async move {
        loop {
            let now: Vec<String> = names.lock().unwrap().iter().cloned().collect();
            for name in now {
                heartbeat(&client, &name).await;
            }
            for bd in deployments(&client).await.values() {
                let applied = bd.status.as_ref().map(|s| s.applied_deployment_id.clone());
                if applied.as_deref() != Some(bd.spec.deployment_id.as_str()) {
                    report_ready(&client, bd).await;
                }
            }
            tokio::time::sleep(Duration::from_millis(400)).await;
        }
    });
    beating
}

async fn heartbeat(client: &Client, name: &str) {
    let status = json!({
        "apiVersion": "fleet.cattle.io/v1alpha1",
        "kind": "Cluster",
        "status": {"agent": {"lastSeen": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true), "namespace": "cattle-fleet-system"}},
    });
    // A cluster being deleted may be gone already.
    let _ = Api::<Cluster>::namespaced(client.clone(), NS)
        .patch_status(
            name,
            &PatchParams::apply("simulated-agent").force(),
            &Patch::Apply(&status),
        )
        .await;
}

/// Creates or updates Bundle `name` with one ConfigMap, targeting every member, with `placement`.
async fn put_bundle(client: &Client, name: &str, placement: serde_json::Value) {
    let bundle = json!({
        "apiVersion": "fleet.cattle.io/v1alpha1",
        "kind": "Bundle",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "defaultNamespace": "app",
            "resources": [{"name": "cm.yaml", "content": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n"}],
            "targets": [{"clusterSelector": {"matchLabels": {"member": "yes"}}}],
            "placement": placement,
        },
    });
    Api::<Bundle>::namespaced(client.clone(), NS)
        .patch(
            name,
            &PatchParams::apply("test").force(),
            &Patch::Apply(&bundle),
        )
        .await
        .expect("apply bundle");
}

/// The clusters holding a BundleDeployment of `bundle`, with each one's uid.
async fn placed(client: &Client, bundle: &str) -> BTreeMap<String, String> {
    deployments(client)
        .await
        .into_iter()
        .filter(|((_, name), bd)| name == bundle && bd.metadata.deletion_timestamp.is_none())
        .map(|((cluster, _), bd)| (cluster, bd.uid().unwrap_or_default()))
        .collect()
}

/// The Bundle's status (default while it does not exist yet).
async fn bundle_status(client: &Client, name: &str) -> BundleStatus {
    Api::<Bundle>::namespaced(client.clone(), NS)
        .get_opt(name)
        .await
        .expect("get bundle")
        .and_then(|b| b.status)
        .unwrap_or_default()
}

/// Waits until exactly `count` clusters hold `bundle` and its status reports the same selection.
async fn settled(client: &Client, bundle: &str, count: usize) -> BTreeMap<String, String> {
    eventually(&format!("{bundle} on {count} clusters"), || async {
        let now = placed(client, bundle).await;
        let status = bundle_status(client, bundle).await;
        let selected: BTreeSet<String> = status
            .placement?
            .selected
            .iter()
            .map(|s| s.cluster.trim_start_matches(&format!("{NS}/")).to_string())
            .collect();
        let holding: BTreeSet<String> = now.keys().cloned().collect();
        (now.len() == count && selected == holding).then_some(now)
    })
    .await
}

/// The `Scheduled` condition says the placement policy is fulfilled.
fn assert_scheduling_fulfilled(conditions: &[fleet_api::Condition]) {
    let scheduled = conditions
        .iter()
        .find(|c| c.type_ == "Scheduled")
        .expect("Scheduled condition");
    assert_eq!(
        (scheduled.status.as_str(), scheduled.reason.as_str()),
        ("True", "SchedulingPolicyFulfilled")
    );
}

fn region(cluster: &str) -> &'static str {
    match cluster {
        "a1" | "a2" | "a3" => "east",
        "b1" | "b2" => "west",
        _ => "south",
    }
}

const SEVEN: [(&str, &[(&str, &str)]); 7] = [
    ("a1", &[("region", "east")]),
    ("a2", &[("region", "east")]),
    ("a3", &[("region", "east")]),
    ("b1", &[("region", "west")]),
    ("b2", &[("region", "west")]),
    ("c1", &[("region", "south")]),
    ("c2", &[("region", "south")]),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pick_three_of_seven_spread_over_three_regions() {
    let (_hub, client, controller) = hub_with_fast_controller().await;
    members(&client, &SEVEN).await;
    put_bundle(
        &client,
        "spread",
        json!({"type": "PickN", "numberOfClusters": 3,
            "topologySpreadConstraints": [{"topologyKey": "region", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]}),
    )
    .await;
    let chosen = settled(&client, "spread", 3).await;
    let regions: BTreeSet<&str> = chosen.keys().map(|c| region(c)).collect();
    assert_eq!(regions.len(), 3, "one per region: {chosen:?}");

    // The four clusters left out are listed, each with a reason naming it.
    let status = eventually("the four unselected clusters listed", || {
        let client = client.clone();
        async move {
            let status = bundle_status(&client, "spread").await;
            let placement = status.placement.as_ref()?;
            (placement.unselected_total == 4 && placement.unselected.len() == 4).then_some(status)
        }
    })
    .await;
    let placement = status.placement.clone().unwrap();
    assert_eq!(placement.scheduled, "3/3");
    assert!(
        placement
            .unselected
            .iter()
            .all(|u| u.reason.contains(&u.cluster)
                && !chosen.contains_key(u.cluster.trim_start_matches(&format!("{NS}/")))),
        "{:?}",
        placement.unselected
    );
    assert_scheduling_fulfilled(&status.conditions);
    controller.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scaling_two_four_one_changes_only_the_expected_clusters() {
    let (_hub, client, controller) = hub_with_fast_controller().await;
    members(&client, &SEVEN).await;
    let pick = |n: u32| json!({"type": "PickN", "numberOfClusters": n});
    put_bundle(&client, "scale", pick(2)).await;
    let two = settled(&client, "scale", 2).await;

    // A restarted controller keeps every earlier decision: scaling out only adds.
    controller.stop().await;
    let controller = RunningController::start_with(client.clone(), fast).await;
    put_bundle(&client, "scale", pick(4)).await;
    let four = settled(&client, "scale", 4).await;
    for (cluster, uid) in &two {
        assert_eq!(
            four.get(cluster),
            Some(uid),
            "{cluster} kept its BundleDeployment"
        );
    }

    // Scaling in keeps one of the four, untouched, and removes the rest.
    put_bundle(&client, "scale", pick(1)).await;
    let one = settled(&client, "scale", 1).await;
    let (cluster, uid) = one.iter().next().unwrap();
    assert_eq!(four.get(cluster), Some(uid));
    controller.stop().await;
}

/// Adds a taint to `cluster`'s spec.
async fn taint(client: &Client, cluster: &str, key: &str, effect: &str) {
    let patch = json!({"spec": {"taints": [{"key": key, "effect": effect}]}});
    Api::<Cluster>::namespaced(client.clone(), NS)
        .patch(cluster, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("taint cluster");
}

async fn cluster(client: &Client, name: &str) -> Cluster {
    Api::<Cluster>::namespaced(client.clone(), NS)
        .get(name)
        .await
        .expect("get cluster")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maintenance_taint_moves_the_placement_after_toleration_seconds() {
    let (_hub, client, controller) = hub_with_fast_controller().await;
    members(&client, &SEVEN[..3]).await;
    put_bundle(
        &client,
        "app",
        json!({"type": "PickN", "numberOfClusters": 2,
            "tolerations": [{"key": "maintenance", "operator": "Exists", "effect": "NoSelect", "tolerationSeconds": 2}]}),
    )
    .await;
    let before = settled(&client, "app", 2).await;
    let victim = before.keys().next().unwrap().clone();
    let spare = ["a1", "a2", "a3"]
        .into_iter()
        .find(|c| !before.contains_key(*c))
        .unwrap();
    taint(&client, &victim, "maintenance", "NoSelect").await;

    // The controller stamps the taint's time, from which tolerationSeconds count.
    eventually("taint stamped", || async {
        let c = cluster(&client, &victim).await;
        c.spec.taints.first()?.time_added.as_ref().map(|_| ())
    })
    .await;
    let after = eventually("placement moved", || async {
        let now = placed(&client, "app").await;
        (now.len() == 2 && !now.contains_key(&victim)).then_some(now)
    })
    .await;
    assert!(after.contains_key(spare), "{after:?}");
    let kept: Vec<&String> = before.keys().filter(|c| **c != victim).collect();
    for cluster in kept {
        assert_eq!(after.get(cluster), before.get(cluster));
    }
    // The Bundle's status is written after the BundleDeployments move, so it is awaited too.
    let reason = eventually("victim unselected in the Bundle status", || async {
        let status = bundle_status(&client, "app").await;
        let unselected = status.placement?.unselected;
        unselected
            .into_iter()
            .find(|r| r.cluster.ends_with(&victim))
    })
    .await;
    assert!(reason.reason.contains("maintenance"), "{reason:?}");
    controller.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_that_stops_heartbeating_is_tainted_and_replaced() {
    let (_hub, client, controller) = hub_with_fast_controller().await;
    let beating = members(&client, &SEVEN[..3]).await;
    put_bundle(
        &client,
        "app",
        json!({"type": "PickN", "numberOfClusters": 2}),
    )
    .await;
    let before = settled(&client, "app", 2).await;
    let silent = before.keys().next().unwrap().clone();
    let healthy = |c: &Cluster| {
        c.status
            .as_ref()
            .and_then(|s| s.conditions.iter().find(|c| c.type_ == "Healthy"))
            .map(|c| c.status.clone())
    };
    // Placement reads the heartbeats themselves; the `Healthy` condition is written by the Cluster
    // reconciler on its own schedule, so wait for it rather than reading it once.
    eventually("the chosen cluster Healthy while it beats", || async {
        (healthy(&cluster(&client, &silent).await).as_deref() == Some("True")).then_some(())
    })
    .await;
    beating.lock().unwrap().remove(&silent);

    eventually("unreachable taint", || async {
        let c = cluster(&client, &silent).await;
        let tainted = c
            .spec
            .taints
            .iter()
            .any(|t| t.key == UNREACHABLE_TAINT_KEY && t.effect == "NoSelect");
        (tainted && healthy(&c).as_deref() == Some("False")).then_some(())
    })
    .await;
    let after = eventually("placement replaced", || async {
        let now = placed(&client, "app").await;
        (now.len() == 2 && !now.contains_key(&silent)).then_some(now)
    })
    .await;
    assert_eq!(after.len(), 2);

    // The heartbeat returns: the taint goes, the placement stays where it is now.
    beating.lock().unwrap().insert(silent.clone());
    eventually("taint removed", || async {
        let c = cluster(&client, &silent).await;
        (c.spec.taints.is_empty() && healthy(&c).as_deref() == Some("True")).then_some(())
    })
    .await;
    assert_eq!(placed(&client, "app").await, after);
    controller.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gitrepo_placement_is_inherited_by_its_bundles() {
    let (_hub, client, controller) = hub_with_fast_controller().await;
    members(&client, &SEVEN[..4]).await;
    let git = GitFixture::new();
    git.write(
        "app/configmap.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
    );
    git.write("app/fleet.yaml", "defaultNamespace: app\n");
    git.commit("one bundle, no placement of its own");
    create_gitrepo(
        &client,
        "repo",
        json!({
            "repo": git.url(),
            "branch": "main",
            "paths": ["app"],
            "targets": [{"name": "members", "clusterSelector": {"matchLabels": {"member": "yes"}}}],
            "placement": {"type": "PickN", "numberOfClusters": 2},
        }),
    )
    .await;

    let chosen = settled(&client, "repo-app", 2).await;
    assert!(
        chosen
            .keys()
            .all(|c| SEVEN[..4].iter().any(|(n, _)| n == c)),
        "{chosen:?}"
    );
    let bundle = Api::<Bundle>::namespaced(client.clone(), NS)
        .get("repo-app")
        .await
        .expect("get bundle");
    let inherited = bundle.spec.placement.expect("inherited placement");
    assert_eq!(
        (
            inherited.placement_type.as_str(),
            inherited.number_of_clusters
        ),
        ("PickN", Some(2))
    );
    let placement = bundle.status.unwrap().placement.unwrap();
    assert_eq!(placement.scheduled, "2/2");
    assert_eq!(placement.selected.len(), 2);
    assert_eq!(placement.unselected_total, 2);

    let repo = eventually("GitRepo placement status", || async {
        let repo = gitrepo(&client, "repo").await;
        let status = repo.status.clone()?;
        let entry = status.placement.iter().find(|p| p.bundle == "repo-app")?;
        (entry.status.scheduled == "2/2" && condition(&repo, "Scheduled").is_some()).then_some(repo)
    })
    .await;
    let status = repo.status.unwrap();
    assert_eq!(status.placement.len(), 1);
    assert_eq!(status.placement[0].status.selected.len(), 2);
    assert_scheduling_fulfilled(&status.base.conditions);
    controller.stop().await;
}
