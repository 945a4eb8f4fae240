//! Cluster membership end to end with the real controller: a Cluster's `Joined` condition follows its
//! agent's first check-in, and deleting a Cluster makes it leave the fleet — its BundleDeployments are
//! removed (annotated `fleet.cattle.io/uninstall: orphan` first when the Cluster says `on-leave:
//! orphan`), then its namespace and its registration's grant Secret, ClusterRoleBinding and
//! ClusterRegistration, nothing left behind.

mod support;

use fleet_api::{BundleDeployment, Cluster, ClusterRegistration};
use fleet_controller::cluster::leave::{LEAVE_ANNOTATION, UNINSTALL_ANNOTATION};
use fleet_controller::cluster::registration::SYSTEM_REGISTRATION_NAMESPACE;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, Role};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::json;

use support::*;

fn condition(cluster: &Cluster, type_: &str) -> Option<(String, String)> {
    let condition = fleet_api::find_condition(&cluster.status.as_ref()?.conditions, type_)?;
    Some((condition.status.clone(), condition.reason.clone()))
}

async fn get(client: &Client, name: &str) -> Option<Cluster> {
    Api::<Cluster>::namespaced(client.clone(), NS)
        .get_opt(name)
        .await
        .expect("get cluster")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn joining_and_leaving_with_orphan_cleans_up() {
    let hub = hub().await;
    let client = hub.client.clone();
    let controller = RunningController::start(client.clone()).await;
    put_cluster(&client, "leaver", &[("env", "prod")]).await;
    let waiting = eventually("WaitCheckIn", || async {
        let c = get(&client, "leaver").await?;
        condition(&c, "Joined")
            .filter(|(s, _)| s == "False")
            .map(|_| c)
    })
    .await;
    assert_eq!(
        condition(&waiting, "Joined").unwrap().1,
        "WaitCheckIn".to_string()
    );

    // The agent checks in.
    let status = json!({"apiVersion": "fleet.cattle.io/v1alpha1", "kind": "Cluster",
        "status": {"agent": {"lastSeen": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)}}});
    Api::<Cluster>::namespaced(client.clone(), NS)
        .patch_status(
            "leaver",
            &PatchParams::apply("simulated-agent").force(),
            &Patch::Apply(&status),
        )
        .await
        .expect("heartbeat");
    let joined = eventually("Joined", || async {
        let c = get(&client, "leaver").await?;
        (condition(&c, "Joined")?.0 == "True" && condition(&c, "Healthy")?.0 == "True").then_some(c)
    })
    .await;
    let cluster_ns = joined.status.unwrap().namespace;

    // A BundleDeployment lands there; the test holds it with a finalizer, as a slow agent would.
    let bundle = json!({"apiVersion": "fleet.cattle.io/v1alpha1", "kind": "Bundle",
        "metadata": {"name": "app", "namespace": NS},
        "spec": {"resources": [{"name": "cm.yaml", "content": "kind: ConfigMap\n"}],
            "targets": [{"clusterSelector": {"matchLabels": {"env": "prod"}}}]}});
    Api::<fleet_api::Bundle>::namespaced(client.clone(), NS)
        .create(
            &PostParams::default(),
            &serde_json::from_value(bundle).unwrap(),
        )
        .await
        .expect("create bundle");
    let bds: Api<BundleDeployment> = Api::namespaced(client.clone(), &cluster_ns);
    eventually("BundleDeployment", || async {
        bds.get_opt("app").await.ok()?
    })
    .await;
    bds.patch(
        "app",
        &PatchParams::default(),
        &Patch::Merge(&json!({"metadata": {"finalizers": ["test/hold"]}})),
    )
    .await
    .expect("hold");

    // The cluster's agent registered: a granted registration with its grant Secret.
    Api::<Cluster>::namespaced(client.clone(), NS)
        .patch(
            "leaver",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"clientID": "leaver-id"}})),
        )
        .await
        .expect("client id");
    let registrations: Api<ClusterRegistration> = Api::namespaced(client.clone(), NS);
    registrations
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "reg", "namespace": NS},
                "spec": {"clientID": "leaver-id", "clientRandom": "r"}}))
            .unwrap(),
        )
        .await
        .expect("registration");
    eventually("registration granted", || async {
        let r = registrations.get("reg").await.ok()?;
        let status = r.status?;
        (status.granted && status.cluster_name == "leaver").then_some(())
    })
    .await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), SYSTEM_REGISTRATION_NAMESPACE);
    let grant_selector = format!("{}=reg", fleet_api::labels::CLUSTER_REGISTRATION);
    let grants = || async {
        secrets
            .list_metadata(&kube::api::ListParams::default().labels(&grant_selector))
            .await
            .expect("list grants")
            .items
            .len()
    };
    assert_eq!(grants().await, 1);
    // The registration's ClusterRoleBinding: labelled with it, not owned by it (a cluster-scoped object
    // owned by a namespaced one is never collected by kube-controller-manager).
    let bindings: Api<ClusterRoleBinding> = Api::all(client.clone());
    let registration_bindings = || async {
        bindings
            .list(&kube::api::ListParams::default().labels(&grant_selector))
            .await
            .expect("list bindings")
            .items
    };
    let granted_bindings = registration_bindings().await;
    assert_eq!(granted_bindings.len(), 1);
    assert!(granted_bindings[0].metadata.owner_references.is_none());

    // Leave, keeping the applied objects.
    Api::<Cluster>::namespaced(client.clone(), NS)
        .patch(
            "leaver",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"annotations": {LEAVE_ANNOTATION: "orphan"}}})),
        )
        .await
        .expect("annotate");
    Api::<Cluster>::namespaced(client.clone(), NS)
        .delete("leaver", &DeleteParams::default())
        .await
        .expect("delete cluster");
    let held = eventually("BundleDeployment deleted as orphan", || async {
        let bd = bds.get_opt("app").await.ok()??;
        bd.metadata.deletion_timestamp.is_some().then_some(bd)
    })
    .await;
    assert_eq!(
        held.annotations()
            .get(UNINSTALL_ANNOTATION)
            .map(String::as_str),
        Some("orphan")
    );
    assert!(
        get(&client, "leaver").await.is_some(),
        "the Cluster waits for its BundleDeployments"
    );
    bds.patch(
        "app",
        &PatchParams::default(),
        &Patch::Merge(&json!({"metadata": {"finalizers": null}})),
    )
    .await
    .expect("release");

    eventually("cluster gone", || async {
        get(&client, "leaver").await.is_none().then_some(())
    })
    .await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    eventually("namespace gone", || async {
        let ns = namespaces.get_opt(&cluster_ns).await.ok()?;
        ns.is_none_or(|n| n.metadata.deletion_timestamp.is_some())
            .then_some(())
    })
    .await;
    assert!(registrations.get_opt("reg").await.unwrap().is_none());
    assert_eq!(grants().await, 0);
    assert!(registration_bindings().await.is_empty());
    // What the registration owns in its own namespace follows it.
    let roles: Api<Role> = Api::namespaced(client.clone(), NS);
    eventually("the registration's Role collected", || async {
        let left = roles
            .list(&kube::api::ListParams::default())
            .await
            .ok()?
            .items;
        left.iter()
            .all(|r| r.metadata.owner_references.is_none())
            .then_some(())
    })
    .await;
    // The Bundle no longer targets anything.
    assert!(deployments(&client).await.is_empty());
    controller.stop().await;
}
