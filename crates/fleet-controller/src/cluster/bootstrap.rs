//! Bootstrap, as Fleet's bootstrap controller does it: the `fleet-local` workspace with the `local` Cluster
//! (label `name=local`) and its `default` ClusterGroup selecting `name=local`, plus the `fleet-default`
//! workspace, where downstream clusters register by default. Fleet's own bootstrap creates no ClusterGroup
//! but `fleet-local/default` (its `bootstrap.go`), and neither does this one. Existing objects are left as
//! they are (only missing ones are created), so users may change them.

use fleet_api::{Cluster, ClusterGroup};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::error::{Error, Result};

/// The bootstrap workspace.
pub const LOCAL_WORKSPACE: &str = "fleet-local";
/// The workspace of downstream clusters (Fleet's documentation registers them there; Rancher creates it).
pub const DEFAULT_WORKSPACE: &str = "fleet-default";

/// Creates the `fleet-default` workspace when it is missing (also when the chart bootstraps `fleet-local`
/// itself).
pub async fn default_workspace(client: &Client) -> Result<()> {
    create_missing::<Namespace>(
        Api::all(client.clone()),
        json!({"metadata": {"name": DEFAULT_WORKSPACE}}),
    )
    .await
}

/// Creates what is missing of the `fleet-local` workspace, the `local` Cluster and the `default` group.
pub async fn bootstrap(client: &Client) -> Result<()> {
    create_missing::<Namespace>(
        Api::all(client.clone()),
        json!({"metadata": {"name": LOCAL_WORKSPACE}}),
    )
    .await?;
    create_missing::<Cluster>(
        Api::namespaced(client.clone(), LOCAL_WORKSPACE),
        json!({
            "apiVersion": fleet_api::API_VERSION,
            "kind": "Cluster",
            "metadata": {"name": "local", "namespace": LOCAL_WORKSPACE, "labels": {"name": "local"}},
            "spec": {},
        }),
    )
    .await?;
    create_missing::<ClusterGroup>(
        Api::namespaced(client.clone(), LOCAL_WORKSPACE),
        json!({
            "apiVersion": fleet_api::API_VERSION,
            "kind": "ClusterGroup",
            "metadata": {"name": "default", "namespace": LOCAL_WORKSPACE},
            "spec": {"selector": {"matchLabels": {"name": "local"}}},
        }),
    )
    .await
}

async fn create_missing<K>(api: Api<K>, object: Value) -> Result<()>
where
    K: Resource + Clone + DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let object: K =
        serde_json::from_value(object).map_err(|e| Error::invalid(&name, e.to_string()))?;
    match api.create(&PostParams::default(), &object).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(err) => Err(err.into()),
    }
}
