//! The shared error policy end to end against the embedded API server: a HelmOp whose spec is invalid
//! stalls (a `Stalled` condition with the reason, no further reconciles although it polls every 200 ms)
//! and recovers as soon as its spec is fixed; a Cluster whose import stalls gets the policy's `Stalled`
//! condition beside its own, cleared by the next successful reconcile after it changes; a GitRepo whose
//! remote refuses connections is polled with the backoff, not every polling interval.

mod support;

use std::time::Duration;

use fleet_api::{Bundle, HelmOp};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use support::*;

fn condition_of(helmop: &HelmOp, type_: &str) -> Option<(String, String)> {
    let status = helmop.status.as_ref()?;
    fleet_api::find_condition(&status.base.conditions, type_)
        .map(|c| (c.status.clone(), c.message.clone()))
}

#[tokio::test]
async fn an_invalid_helmop_stalls_without_retrying_and_recovers_when_its_spec_changes() {
    let hub = hub().await;
    let client = hub.client.clone();
    let controller = RunningController::start(client.clone()).await;
    let helmops: Api<HelmOp> = Api::namespaced(client.clone(), NS);
    // A repository chart without a chart name is invalid; its polling interval would wake it every 200 ms.
    let helmop: HelmOp = serde_json::from_value(json!({
        "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "HelmOp",
        "metadata": {"name": "web", "namespace": NS},
        "spec": {"helm": {"repo": "https://charts.invalid/stable", "version": "~1.0"},
                 "pollingInterval": "200ms"},
    }))
    .unwrap();
    helmops
        .create(&PostParams::default(), &helmop)
        .await
        .unwrap();

    let message = eventually("the HelmOp stalls", || async {
        let helmop = helmops.get("web").await.ok()?;
        condition_of(&helmop, "Stalled")
            .filter(|(status, _)| status == "True")
            .map(|(_, message)| message)
    })
    .await;
    assert!(
        message.contains("non-OCI repository with an empty chart field"),
        "{message}"
    );
    let before = controller.reconciles("helmop");
    // Ten polling intervals: a HelmOp retried in a loop would be reconciled about ten times.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = controller.reconciles("helmop");
    assert!(
        after - before <= 1,
        "a stalled HelmOp was reconciled {} more times",
        after - before
    );
    assert_eq!(
        controller.failures("helmop"),
        0,
        "stalling is not a failure"
    );

    // Fixing the spec (a chart URL, which needs no version resolution) unsticks it.
    helmops
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"helm": {
                "repo": "", "version": "", "chart": "https://charts.invalid/web-1.0.0.tgz"}}})),
        )
        .await
        .unwrap();
    let bundles: Api<Bundle> = Api::namespaced(client.clone(), NS);
    eventually("the fixed HelmOp writes its Bundle", || async {
        bundles.get_opt("web").await.ok()?
    })
    .await;
    eventually("the Stalled condition clears", || async {
        let helmop = helmops.get("web").await.ok()?;
        let stalled = condition_of(&helmop, "Stalled")?;
        let accepted = condition_of(&helmop, "Accepted")?;
        (stalled.0 == "False" && accepted.0 == "True").then_some(())
    })
    .await;
    controller.stop().await;
}

#[tokio::test]
async fn a_stalled_cluster_import_is_reported_on_the_cluster_and_cleared_when_it_changes() {
    let hub = hub().await;
    let client = hub.client.clone();
    let controller = RunningController::start(client.clone()).await;
    let clusters: Api<fleet_api::Cluster> = Api::namespaced(client.clone(), NS);
    let cluster: fleet_api::Cluster = serde_json::from_value(json!({
        "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "Cluster",
        "metadata": {"name": "edge", "namespace": NS},
        "spec": {"kubeConfigSecret": "absent"},
    }))
    .unwrap();
    clusters
        .create(&PostParams::default(), &cluster)
        .await
        .unwrap();
    let stalled = |cluster: &fleet_api::Cluster| {
        let status = cluster.status.as_ref()?;
        fleet_api::find_condition(&status.conditions, "Stalled")
            .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
    };
    let (reason, message) = eventually("the Cluster's import stalls", || async {
        let (status, reason, message) = stalled(&clusters.get("edge").await.ok()?)?;
        (status == "True").then_some((reason, message))
    })
    .await;
    assert_eq!(reason, "Error");
    assert!(
        message.contains("kubeConfigSecret fleet-default/absent does not exist"),
        "{message}"
    );
    // The import's own condition is kept beside it.
    let imported = condition_of_cluster(&clusters.get("edge").await.unwrap(), "Imported");
    assert_eq!(imported.as_deref(), Some("False"));

    // Without a kubeConfigSecret there is nothing to import: the next reconcile succeeds and clears it.
    clusters
        .patch(
            "edge",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"kubeConfigSecret": null}})),
        )
        .await
        .unwrap();
    eventually("the Stalled condition clears", || async {
        let (status, _, _) = stalled(&clusters.get("edge").await.ok()?)?;
        (status == "False").then_some(())
    })
    .await;
    controller.stop().await;
}

fn condition_of_cluster(cluster: &fleet_api::Cluster, type_: &str) -> Option<String> {
    let status = cluster.status.as_ref()?;
    fleet_api::find_condition(&status.conditions, type_).map(|c| c.status.clone())
}

#[tokio::test]
async fn an_unreachable_remote_is_polled_with_backoff_not_at_the_polling_interval() {
    let hub = hub().await;
    let client = hub.client.clone();
    let controller = RunningController::start(client.clone()).await;
    // Nothing listens on port 1: the connection is refused, a network failure. The test controller's
    // polling interval is 300 ms.
    create_gitrepo(
        &client,
        "down",
        json!({"repo": "http://127.0.0.1:1/repo.git", "branch": "main"}),
    )
    .await;
    let message = eventually("GitPolling=False", || async {
        let (status, message) = condition(&gitrepo(&client, "down").await, "GitPolling")?;
        (status == "False").then_some(message)
    })
    .await;
    assert!(message.contains("cannot reach"), "{message}");
    let before = controller.reconciles("gitrepo");
    // Ten polling intervals; the backoff (1 s, then 2 s) allows at most two more polls in that time.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = controller.reconciles("gitrepo");
    assert!(
        after - before <= 3,
        "a GitRepo with an unreachable remote was reconciled {} times in 3 s",
        after - before
    );
    controller.stop().await;
}
