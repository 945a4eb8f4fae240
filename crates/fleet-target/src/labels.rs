//! The labels Fleet puts on a BundleDeployment (`BundleDeploymentLabels`): the bundle's labels
//! without `*cattle.io/*` and `kubectl.kubernetes.io/*` keys but with every `fleet.cattle.io/*`
//! label, plus the bundle name and namespace, `managed=true`, the cluster's namespace and name,
//! and the Content name (manifest ID) used to garbage-collect Contents.

use crate::model::ClusterKey;
use crate::selector::Labels;

pub const BUNDLE_NAME: &str = "fleet.cattle.io/bundle-name";
pub const BUNDLE_NAMESPACE: &str = "fleet.cattle.io/bundle-namespace";
pub const MANAGED: &str = "fleet.cattle.io/managed";
pub const CLUSTER_NAMESPACE: &str = "fleet.cattle.io/cluster-namespace";
pub const CLUSTER: &str = "fleet.cattle.io/cluster";
pub const CONTENT_NAME: &str = "fleet.cattle.io/content-name";

/// Labels of the BundleDeployment of bundle `bundle_namespace/bundle_name` (with
/// `bundle_labels`) on `cluster`, whose manifest is `manifest_id`.
pub fn deployment_labels(
    bundle_namespace: &str,
    bundle_name: &str,
    bundle_labels: &Labels,
    cluster: &ClusterKey,
    manifest_id: &str,
) -> Labels {
    let mut labels: Labels = bundle_labels
        .iter()
        .filter(|(k, _)| {
            k.starts_with("fleet.cattle.io/")
                || (!k.contains("cattle.io/") && !k.starts_with("kubectl.kubernetes.io/"))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in [
        (BUNDLE_NAME, bundle_name),
        (BUNDLE_NAMESPACE, bundle_namespace),
        (MANAGED, "true"),
        (CLUSTER_NAMESPACE, cluster.namespace.as_str()),
        (CLUSTER, cluster.name.as_str()),
    ] {
        labels.insert(k.to_string(), v.to_string());
    }
    if !manifest_id.is_empty() {
        labels.insert(CONTENT_NAME.to_string(), manifest_id.to_string());
    }
    labels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_deployment_labels() {
        let bundle_labels: Labels = [
            ("app", "web"),
            ("fleet.cattle.io/repo-name", "repo"),
            ("fleet.cattle.io/commit", "abc"),
            ("objectset.rio.cattle.io/hash", "x"),
            ("kubectl.kubernetes.io/last-applied-configuration", "{}"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let labels = deployment_labels(
            "fleet-default",
            "repo-app",
            &bundle_labels,
            &ClusterKey::new("fleet-default", "c1"),
            "s-123",
        );
        let got: Vec<(&str, &str)> = labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("app", "web"),
                ("fleet.cattle.io/bundle-name", "repo-app"),
                ("fleet.cattle.io/bundle-namespace", "fleet-default"),
                ("fleet.cattle.io/cluster", "c1"),
                ("fleet.cattle.io/cluster-namespace", "fleet-default"),
                ("fleet.cattle.io/commit", "abc"),
                ("fleet.cattle.io/content-name", "s-123"),
                ("fleet.cattle.io/managed", "true"),
                ("fleet.cattle.io/repo-name", "repo"),
            ]
        );
    }
}
