//! The targeting cache (`fleet_controller::bundle::cache`) knows a stored Bundle's spec by its uid and
//! `metadata.generation`. This pins what that relies on: the embedded API server moves a Bundle's
//! generation on every spec change (resources, targets, options, `valuesHash`) and on nothing else (labels,
//! annotations, status), as a real one does for a CRD with the status subresource.

mod support;

use fleet_api::Bundle;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bundle_spec_change_and_nothing_else_moves_the_generation() {
    let hub = hub().await;
    let bundles: Api<Bundle> = Api::namespaced(hub.client.clone(), NS);
    let bundle: Bundle = serde_json::from_value(json!({
        "apiVersion": "fleet.cattle.io/v1alpha1",
        "kind": "Bundle",
        "metadata": {"name": "app", "namespace": NS},
        "spec": {
            "resources": [{"name": "cm.yaml", "content": "kind: ConfigMap\n"}],
            "targets": [{"clusterGroup": "default"}],
        },
    }))
    .unwrap();
    let created = bundles
        .create(&PostParams::default(), &bundle)
        .await
        .unwrap();
    let mut generation = created.metadata.generation.expect("a generation");
    let params = PatchParams::default();
    let metadata_and_status = [
        json!({"metadata": {"labels": {"team": "web"}}}),
        json!({"metadata": {"annotations": {"note": "x"}}}),
        json!({"metadata": {"finalizers": ["fleet.cattle.io/bundle-finalizer"]}}),
    ];
    for patch in &metadata_and_status {
        let patched = bundles
            .patch("app", &params, &Patch::Merge(patch))
            .await
            .unwrap();
        assert_eq!(patched.metadata.generation, Some(generation), "{patch}");
    }
    let status = json!({"status": {"summary": {"desiredReady": 1}}});
    let patched = bundles
        .patch_status("app", &params, &Patch::Merge(&status))
        .await
        .unwrap();
    assert_eq!(patched.metadata.generation, Some(generation));
    let spec_changes = [
        json!({"spec": {"resources": [{"name": "cm.yaml", "content": "kind: Secret\n"}]}}),
        json!({"spec": {"targets": [{"clusterGroup": "other"}]}}),
        json!({"spec": {"serviceAccount": "sa"}}),
        json!({"spec": {"helm": {"releaseName": "app"}}}),
        json!({"spec": {"valuesHash": "abc"}}),
    ];
    for patch in &spec_changes {
        let patched = bundles
            .patch("app", &params, &Patch::Merge(patch))
            .await
            .unwrap();
        generation += 1;
        assert_eq!(patched.metadata.generation, Some(generation), "{patch}");
    }
    // The same spec written again is no change.
    let patched = bundles
        .patch("app", &params, &Patch::Merge(&spec_changes[4]))
        .await
        .unwrap();
    assert_eq!(patched.metadata.generation, Some(generation));
}
