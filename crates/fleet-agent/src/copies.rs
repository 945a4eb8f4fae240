//! `downstreamResources`: Secrets and ConfigMaps the controller put into the cluster namespace on the hub,
//! copied into the BundleDeployment's target namespace downstream (Fleet copies only these two kinds).
//! The copies are deployed like the bundle's own objects — marked as this agent's, recorded in the
//! inventory, pruned when dropped from the list and removed on uninstall — and copied again when
//! `spec.downstreamResourcesGeneration` changes. A listed object missing on the hub, or of another kind,
//! fails the deployment with a message naming it.

use fleet_api::DownstreamResource;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::Api;
use serde_json::{Value, json};

use crate::error::{Error, Result};

/// The objects to create downstream in `namespace` for `resources`, read from `cluster_namespace` on the hub.
pub async fn read(
    hub: &kube::Client,
    cluster_namespace: &str,
    resources: &[DownstreamResource],
    namespace: &str,
) -> Result<Vec<Value>> {
    let mut copies = Vec::new();
    for resource in resources {
        let missing = || Error::DownstreamResource {
            kind: resource.kind.clone(),
            name: resource.name.clone(),
            message: format!("not found in namespace {cluster_namespace} on the hub"),
        };
        let reading = |err| {
            Error::kube(
                format!(
                    "reading downstreamResources {} {cluster_namespace}/{}",
                    resource.kind, resource.name
                ),
                err,
            )
        };
        let metadata = json!({"name": resource.name, "namespace": namespace});
        let copy = match resource.kind.as_str() {
            "Secret" => {
                let api: Api<Secret> = Api::namespaced(hub.clone(), cluster_namespace);
                let secret = api
                    .get_opt(&resource.name)
                    .await
                    .map_err(reading)?
                    .ok_or_else(missing)?;
                let mut copy = json!({"apiVersion": "v1", "kind": "Secret", "metadata": metadata});
                if let Some(type_) = secret.type_ {
                    copy["type"] = json!(type_);
                }
                if let Some(data) = secret.data {
                    copy["data"] = json!(data);
                }
                copy
            }
            "ConfigMap" => {
                let api: Api<ConfigMap> = Api::namespaced(hub.clone(), cluster_namespace);
                let config_map = api
                    .get_opt(&resource.name)
                    .await
                    .map_err(reading)?
                    .ok_or_else(missing)?;
                let mut copy =
                    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata});
                if let Some(data) = config_map.data {
                    copy["data"] = json!(data);
                }
                if let Some(binary) = config_map.binary_data {
                    copy["binaryData"] = json!(binary);
                }
                copy
            }
            _ => {
                return Err(Error::DownstreamResource {
                    kind: resource.kind.clone(),
                    name: resource.name.clone(),
                    message: "only Secret and ConfigMap can be copied".to_string(),
                });
            }
        };
        copies.push(copy);
    }
    Ok(copies)
}
