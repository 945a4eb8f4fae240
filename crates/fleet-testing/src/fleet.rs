//! Reading Fleet's own objects back in tests: the BundleDeployments of a hub, keyed the way assertions need them.

use std::collections::BTreeMap;

use fleet_api::BundleDeployment;
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};

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
