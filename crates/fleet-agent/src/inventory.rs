//! The inventory of one BundleDeployment in the downstream cluster: a ConfigMap in the agent's namespace
//! (named after the scope's object-set ID) listing every object applied for it with the hash of the applied
//! configuration, the namespaces the agent created, and the uninstall options (`keepResources`,
//! `deleteNamespace`, orphaning) that must outlive the BundleDeployment. It is what pruning and uninstall work from,
//! and what lets a restarted agent skip reapplying unchanged bundles.

use std::collections::BTreeMap;

use fleet_api::ObjectRef;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, is_not_found};
use crate::scope::{SCOPE_LABEL, Scope};

/// Label on inventories naming their BundleDeployment.
pub const BUNDLE_DEPLOYMENT_LABEL: &str = "fleet.cattle.io/bundle-deployment";
const DATA_KEY: &str = "inventory";

/// One applied object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    #[serde(flatten)]
    pub object: ObjectRef,
    /// sha256 of the applied configuration; empty when the apply failed.
    #[serde(default)]
    pub hash: String,
    /// Survives uninstall and pruning (`helm.sh/resource-policy: keep`).
    #[serde(default)]
    pub keep: bool,
}

/// Everything the agent remembers about one BundleDeployment downstream.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Inventory {
    pub bundle_deployment: String,
    /// The deploymentID whose objects were last applied completely.
    #[serde(default)]
    pub deployment_id: String,
    #[serde(default)]
    pub objects: Vec<Entry>,
    /// Namespaces the agent created for this BundleDeployment.
    #[serde(default)]
    pub created_namespaces: Vec<String>,
    /// The namespace the bundle deploys into (target or default namespace).
    #[serde(default)]
    pub release_namespace: String,
    #[serde(default)]
    pub keep_resources: bool,
    #[serde(default)]
    pub delete_namespace: bool,
    /// The BundleDeployment is annotated `fleet.cattle.io/uninstall: orphan`: its deletion leaves the
    /// objects in place (recorded so that a deletion seen only after a restart is honoured too).
    #[serde(default)]
    pub orphan: bool,
}

impl Inventory {
    /// The applied hashes by [`object_key`].
    pub fn hashes(&self) -> BTreeMap<String, &str> {
        self.objects
            .iter()
            .map(|entry| (object_key(&entry.object), entry.hash.as_str()))
            .collect()
    }
}

/// A map key identifying an object (`ObjectRef` has no ordering).
pub fn object_key(object: &ObjectRef) -> String {
    format!(
        "{}/{}/{}/{}",
        object.api_version, object.kind, object.namespace, object.name
    )
}

/// Reads and writes the inventories of one agent scope.
#[derive(Clone)]
pub struct Store {
    api: Api<ConfigMap>,
    scope: Scope,
}

impl Store {
    pub fn new(client: kube::Client, scope: Scope) -> Self {
        Store {
            api: Api::namespaced(client, &scope.agent_namespace),
            scope,
        }
    }

    /// The inventory of a BundleDeployment, if one was written.
    pub async fn load(&self, bundle_deployment: &str) -> Result<Option<Inventory>> {
        let name = self.scope.inventory_name(bundle_deployment);
        match self.api.get(&name).await {
            Ok(config_map) => decode(&name, &config_map).map(Some),
            Err(err) if is_not_found(&err) => Ok(None),
            Err(err) => Err(Error::kube(format!("reading inventory {name}"), err)),
        }
    }

    /// Every inventory of this scope (for garbage collection of deleted BundleDeployments).
    pub async fn list(&self) -> Result<Vec<Inventory>> {
        let selector = format!("{SCOPE_LABEL}={}", self.scope.label_value());
        let list = self
            .api
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|err| Error::kube("listing inventories", err))?;
        list.items
            .iter()
            .map(|config_map| {
                decode(
                    config_map.metadata.name.as_deref().unwrap_or_default(),
                    config_map,
                )
            })
            .collect()
    }

    /// Writes an inventory (server-side apply with the agent's field manager).
    pub async fn save(&self, inventory: &Inventory) -> Result<()> {
        let name = self.scope.inventory_name(&inventory.bundle_deployment);
        let body = serde_json::json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": name,
                "namespace": self.scope.agent_namespace,
                "labels": {
                    SCOPE_LABEL: self.scope.label_value(),
                    BUNDLE_DEPLOYMENT_LABEL: fleet_bundle::names::limit(&inventory.bundle_deployment, 63),
                },
            },
            "data": { DATA_KEY: serde_json::to_string(inventory).expect("inventory serializes") },
        });
        self.api
            .patch(
                &name,
                &PatchParams::apply(&self.scope.field_manager()).force(),
                &Patch::Apply(body),
            )
            .await
            .map_err(|err| Error::kube(format!("writing inventory {name}"), err))?;
        Ok(())
    }

    /// Removes the inventory of a BundleDeployment.
    pub async fn delete(&self, bundle_deployment: &str) -> Result<()> {
        let name = self.scope.inventory_name(bundle_deployment);
        match self.api.delete(&name, &DeleteParams::default()).await {
            Ok(_) => Ok(()),
            Err(err) if is_not_found(&err) => Ok(()),
            Err(err) => Err(Error::kube(format!("deleting inventory {name}"), err)),
        }
    }
}

fn decode(name: &str, config_map: &ConfigMap) -> Result<Inventory> {
    let text = config_map
        .data
        .as_ref()
        .and_then(|data| data.get(DATA_KEY))
        .ok_or_else(|| Error::Inventory {
            name: name.to_string(),
            message: format!("key {DATA_KEY:?} is missing"),
        })?;
    serde_json::from_str(text).map_err(|err| Error::Inventory {
        name: name.to_string(),
        message: err.to_string(),
    })
}
