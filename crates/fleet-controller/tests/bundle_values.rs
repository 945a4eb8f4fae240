//! Helm values leave Bundles as in Fleet's `fleet apply`: the Bundle carries `valuesHash` and no values, its
//! `fleet.cattle.io/bundle-values/v1alpha1` Secret (same name, owned by it) holds the root values under
//! `values.yaml` and each target's under its name, and the BundleDeployments still get the values (from the
//! Secret, per cluster's customization). New values move the hash; a commit without values drops the Secret.
//! No Bundle reconcile fails on the way: the Secret is written before its Bundle, and a reconcile of the
//! previous version in between waits for the new one instead of failing.

mod support;

use std::collections::BTreeMap;

use fleet_api::{Bundle, BundleDeployment};
use fleet_controller::bundle::values;
use fleet_testing::GitFixture;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

use support::*;

const CONFIGMAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n";

fn fleet_yaml(replicas: u32) -> String {
    format!(
        "helm:\n  values:\n    password: s3cret\n    replicas: {replicas}\ntargetCustomizations:\n- name: eu\n  clusterSelector:\n    matchLabels:\n      region: eu\n  helm:\n    values:\n      replicas: 5\n"
    )
}

async fn values_secret(client: &kube::Client, name: &str) -> Option<Secret> {
    Api::<Secret>::namespaced(client.clone(), NS)
        .get_opt(name)
        .await
        .unwrap()
}

fn json_of(secret: &Secret, key: &str) -> serde_json::Value {
    serde_json::from_slice(&secret.data.as_ref().unwrap()[key].0).unwrap()
}

/// The values a BundleDeployment's options Secret holds (written right after the BundleDeployment, so
/// waited for).
async fn deployed_values(client: &kube::Client, bd: &BundleDeployment) -> serde_json::Value {
    let secrets = Api::<Secret>::namespaced(client.clone(), &bd.namespace().unwrap());
    let secret = eventually("the options Secret", || async {
        secrets.get_opt(&bd.name_any()).await.unwrap()
    })
    .await;
    json_of(&secret, "values")
}

/// A git repository with the ConfigMap bundle `app` with values (2 replicas), followed by the GitRepo `repo`
/// at env=prod clusters, and a running controller.
async fn follow_values_app(client: &kube::Client) -> (GitFixture, RunningController) {
    let git = GitFixture::new();
    git.write("app/configmap.yaml", CONFIGMAP);
    git.write("app/fleet.yaml", &fleet_yaml(2));
    git.commit("values");
    follow_app_on_prod(client, &git.url()).await;
    (git, RunningController::start(client.clone()).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bundle_values_live_in_the_bundle_values_secret() {
    let hub = hub().await;
    let client = hub.client.clone();
    put_cluster(&client, "a", &[("env", "prod")]).await;
    put_cluster(&client, "b", &[("env", "prod"), ("region", "eu")]).await;
    let (git, controller) = follow_values_app(&client).await;
    let bundles: Api<Bundle> = Api::namespaced(client.clone(), NS);
    let bundle = eventually("the Bundle", || async {
        bundles.get_opt("repo-app").await.unwrap()
    })
    .await;
    let spec = serde_json::to_string(&bundle.spec).unwrap();
    assert!(
        !spec.contains("s3cret") && !spec.contains("replicas"),
        "values left in the Bundle: {spec}"
    );
    assert!(!bundle.spec.values_hash.is_empty());
    // Written before a new Bundle, and owned by it once the Bundle exists.
    let secret = eventually("the values Secret owned by the Bundle", || async {
        values_secret(&client, "repo-app")
            .await
            .filter(|s| s.metadata.owner_references.is_some())
    })
    .await;
    assert_eq!(
        secret.type_.as_deref(),
        Some("fleet.cattle.io/bundle-values/v1alpha1")
    );
    let keys: Vec<&String> = secret.data.as_ref().unwrap().keys().collect();
    assert_eq!(keys, ["eu", "values.yaml"]);
    assert_eq!(
        json_of(&secret, "values.yaml"),
        json!({"password": "s3cret", "replicas": 2})
    );
    assert_eq!(json_of(&secret, "eu"), json!({"replicas": 5}));
    let owner = &secret.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str()),
        ("Bundle", bundle.uid().unwrap().as_str())
    );
    assert_eq!(
        secret
            .labels()
            .get("fleet.cattle.io/repo-name")
            .map(String::as_str),
        Some("repo")
    );
    let data: BTreeMap<String, Vec<u8>> = secret
        .data
        .clone()
        .unwrap()
        .into_iter()
        .map(|(k, v)| (k, v.0))
        .collect();
    assert_eq!(
        fleet_controller::bundle::values::bundle_values_hash(&data),
        bundle.spec.values_hash
    );

    // The BundleDeployments are built from the values in the Secret, with the eu customization on b.
    let found = eventually("two BundleDeployments", || async {
        let found = deployments(&client).await;
        (found.len() == 2).then_some(found)
    })
    .await;
    let by_cluster: BTreeMap<String, BundleDeployment> = found
        .into_iter()
        .map(|((cluster, _), bd)| (cluster, bd))
        .collect();
    assert_eq!(
        deployed_values(&client, &by_cluster["a"]).await,
        json!({"password": "s3cret", "replicas": 2})
    );
    assert_eq!(
        deployed_values(&client, &by_cluster["b"]).await,
        json!({"password": "s3cret", "replicas": 5})
    );

    // New values: a new hash, and the deployments follow.
    git.write("app/fleet.yaml", &fleet_yaml(3));
    git.commit("more replicas");
    let changed = eventually("the Bundle with new values", || async {
        bundles
            .get("repo-app")
            .await
            .ok()
            .filter(|b| b.spec.values_hash != bundle.spec.values_hash)
    })
    .await;
    assert!(!changed.spec.values_hash.is_empty());
    eventually("cluster a deployed with 3 replicas", || async {
        let bd = deployments(&client)
            .await
            .into_iter()
            .find(|((cluster, _), _)| cluster == "a")?
            .1;
        (deployed_values(&client, &bd).await["replicas"] == 3).then_some(())
    })
    .await;

    // No values any more: no hash and no values Secret.
    git.write("app/fleet.yaml", "defaultNamespace: app\n");
    git.commit("no values");
    eventually("the Bundle without values", || async {
        bundles
            .get("repo-app")
            .await
            .ok()
            .filter(|b| b.spec.values_hash.is_empty())
    })
    .await;
    eventually("the values Secret gone", || async {
        values_secret(&client, "repo-app")
            .await
            .is_none()
            .then_some(())
    })
    .await;
    assert_eq!(
        controller.failures("bundle"),
        0,
        "a Bundle reconcile failed"
    );
    controller.stop().await;
}

/// What the GitRepo's read moves out of `bundle` (as stored) when its root values become `values`.
fn moved_values(bundle: &Bundle, values: serde_json::Value) -> values::BundleValues {
    let mut next = bundle.clone();
    next.spec
        .options
        .helm
        .get_or_insert_with(Default::default)
        .values = Some(serde_json::from_value(values).unwrap());
    values::extract_bundle(&mut next).expect("values")
}

/// Writes the values Secret of `bundle` (as stored) holding `moved`, as the GitRepo's read writes it.
async fn write_values_secret(client: &kube::Client, bundle: &Bundle, moved: &values::BundleValues) {
    Api::<Secret>::namespaced(client.clone(), NS)
        .patch(
            &bundle.name_any(),
            &PatchParams::apply("fleet-controller").force(),
            &Patch::Apply(&values::bundle_secret(bundle, moved)),
        )
        .await
        .unwrap();
}

/// Wakes the reconcile of Bundle `name` with a metadata change (`poke` annotation = `n`).
async fn poke(bundles: &Api<Bundle>, name: &str, n: u32) {
    bundles
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {"poke": n.to_string()}}})),
        )
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconcile_between_the_values_secret_and_its_bundle_does_not_fail() {
    let hub = hub().await;
    let client = hub.client.clone();
    put_cluster(&client, "a", &[("env", "prod")]).await;
    let (_git, controller) = follow_values_app(&client).await;
    let bundles: Api<Bundle> = Api::namespaced(client.clone(), NS);
    let bd = eventually("the BundleDeployment", || async {
        deployments(&client).await.into_values().next()
    })
    .await;
    let stored = bundles.get("repo-app").await.unwrap();

    // The first half of a read, as the GitRepo writes it: the values Secret, ahead of its Bundle.
    let moved = moved_values(&stored, json!({"password": "s3cret", "replicas": 3}));
    let ahead = controller
        .context
        .values_ahead
        .begin(NS, "repo-app", &moved.hash);
    write_values_secret(&client, &stored, &moved).await;
    // A reconcile of the Bundle's current version in between (woken by a metadata change) does not fail.
    let before = controller.reconciles("bundle");
    poke(&bundles, "repo-app", 1).await;
    eventually("the Bundle reconciled in between", || async {
        (controller.reconciles("bundle") > before).then_some(())
    })
    .await;
    assert_eq!(
        controller.failures("bundle"),
        0,
        "a Bundle reconcile failed"
    );
    let unchanged = deployments(&client).await.into_values().next().unwrap();
    assert_eq!(
        unchanged.metadata.resource_version,
        bd.metadata.resource_version
    );

    // The second half: the Bundle with the new hash, and the deployment follows.
    bundles
        .patch(
            "repo-app",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"valuesHash": moved.hash}})),
        )
        .await
        .unwrap();
    drop(ahead);
    eventually("cluster a deployed with 3 replicas", || async {
        let bd = deployments(&client).await.into_values().next()?;
        (deployed_values(&client, &bd).await["replicas"] == 3).then_some(())
    })
    .await;
    assert_eq!(
        controller.failures("bundle"),
        0,
        "a Bundle reconcile failed"
    );

    // A values Secret that no write in flight explains is an error, retried as in Fleet.
    let tampered = moved_values(&stored, json!({"replicas": 9}));
    write_values_secret(&client, &stored, &tampered).await;
    poke(&bundles, "repo-app", 2).await;
    eventually("the mismatch reported as a failed reconcile", || async {
        (controller.failures("bundle") > 0).then_some(())
    })
    .await;
    controller.stop().await;
}
