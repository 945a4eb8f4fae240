//! Fleet's own objects in tests: the BundleDeployments of a hub read back, keyed the way assertions need
//! them; the status an agent reports once it has applied one; Secret `data` as a test writes it; a
//! Bundle's resources from (name, content) pairs.

use std::collections::BTreeMap;

use base64::Engine;
use fleet_api::{BundleDeployment, BundleResource};
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::json;

/// The label the controller puts on every BundleDeployment naming the Cluster it is for.
pub const CLUSTER_LABEL: &str = "fleet.cattle.io/cluster";

/// Every BundleDeployment on the hub, keyed by (cluster name from [`CLUSTER_LABEL`], BundleDeployment name).
/// Panics when the list fails: a test's hub is expected to be up.
pub async fn bundle_deployments(client: &Client) -> BTreeMap<(String, String), BundleDeployment> {
    Api::<BundleDeployment>::all(client.clone())
        .list(&ListParams::default())
        .await
        .expect("list bundledeployments")
        .items
        .into_iter()
        .map(|bd| {
            let cluster = bd.labels().get(CLUSTER_LABEL).cloned().unwrap_or_default();
            ((cluster, bd.name_any()), bd)
        })
        .collect()
}

/// What an agent reports after applying the BundleDeployment's current deploymentID successfully: applied,
/// ready, unmodified, `Deployed` and `Ready` true (server-side apply of the status as `simulated-agent`).
pub async fn report_ready(
    client: &Client,
    bd: &BundleDeployment,
) -> kube::Result<BundleDeployment> {
    let api: Api<BundleDeployment> =
        Api::namespaced(client.clone(), &bd.namespace().unwrap_or_default());
    let status = json!({
        "apiVersion": "fleet.cattle.io/v1alpha1",
        "kind": "BundleDeployment",
        "status": {
            "appliedDeploymentID": bd.spec.deployment_id,
            "ready": true,
            "nonModified": true,
            "conditions": [{"type": "Deployed", "status": "True"}, {"type": "Ready", "status": "True"}],
        },
    });
    api.patch_status(
        &bd.name_any(),
        &PatchParams::apply("simulated-agent").force(),
        &Patch::Apply(&status),
    )
    .await
}

/// A Secret's `data` holding `pairs` (key, plain text), each value base64-encoded as the API wants it.
pub fn secret_data(pairs: &[(&str, &str)]) -> serde_json::Value {
    pairs
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                json!(base64::engine::general_purpose::STANDARD.encode(v)),
            )
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// A Bundle's `resources` from (file name, content) pairs, as the bundle reader lists plain-text files.
pub fn bundle_resources(files: &[(&str, &str)]) -> Vec<BundleResource> {
    files
        .iter()
        .map(|(name, content)| BundleResource {
            name: name.to_string(),
            content: content.to_string(),
            encoding: String::new(),
        })
        .collect()
}
