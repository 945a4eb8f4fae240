//! Which namespace a Cluster's `kubeConfigSecret` may be read from.

use fleet_api::Cluster;
use kube::ResourceExt;

use crate::cluster::registration::SYSTEM_REGISTRATION_NAMESPACE;
use crate::error::{Error, Result};

/// The namespace the kubeconfig Secret may be read from: the Cluster's own, or one of Fleet's namespaces
/// (Fleet's `allowedKubeConfigSecretNamespace`), so a Cluster cannot point at any Secret of the hub.
pub fn kubeconfig_secret_namespace(cluster: &Cluster) -> Result<String> {
    let own = cluster.namespace().unwrap_or_default();
    let ns = &cluster.spec.kube_config_secret_namespace;
    if ns.is_empty() || *ns == own {
        return Ok(own);
    }
    let allowed = [
        "fleet-local",
        "fleet-default",
        "cattle-fleet-system",
        "fleet-system",
        SYSTEM_REGISTRATION_NAMESPACE,
        "fleet-system-clusters-system",
    ];
    if allowed.contains(&ns.as_str()) || ns.starts_with("cluster-") {
        return Ok(ns.clone());
    }
    Err(Error::invalid(
        format!("Cluster {own}/{}", cluster.name_any()),
        format!("spec.kubeConfigSecretNamespace {ns:?} is not an allowed Fleet namespace"),
    ))
}
