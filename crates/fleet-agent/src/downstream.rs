//! The downstream cluster as the agent sees it: an admin client, a way to get a client impersonating a
//! ServiceAccount (the BundleDeployment's `serviceAccount` option), and the resolution of `apiVersion`/`kind`
//! to API resources, cached per kind (discovery is one request per group version, done once).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use fleet_api::ObjectRef;
use kube::api::{Api, DynamicObject};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiResource, Scope as ResourceScope, pinned_kind};

use crate::error::{Error, Result};

/// Makes a client acting as the given user (`None`: the agent itself).
pub type ClientFactory = Arc<dyn Fn(Option<&str>) -> kube::Client + Send + Sync>;

/// Resolved kinds: `(apiVersion, kind)` → the API resource and whether it is namespaced.
type ResolvedKinds = HashMap<(String, String), (ApiResource, bool)>;

/// The cluster the agent deploys to.
#[derive(Clone)]
pub struct Downstream {
    client: kube::Client,
    factory: ClientFactory,
    resources: Arc<Mutex<ResolvedKinds>>,
}

impl Downstream {
    /// A downstream cluster reached through clients made by `factory`; `factory(None)` is the agent's own.
    pub fn new(factory: ClientFactory) -> Self {
        Downstream {
            client: factory(None),
            factory,
            resources: Arc::default(),
        }
    }

    /// A downstream cluster from a kubeconfig-derived config; impersonation sets `Impersonate-User`.
    pub fn from_config(config: kube::Config) -> Result<Self> {
        let base = crate::metrics::client(config.clone(), "downstream")
            .map_err(|err| Error::kube("building the downstream client", err))?;
        let factory: ClientFactory = Arc::new(move |user: Option<&str>| match user {
            None => base.clone(),
            Some(user) => {
                let mut config = config.clone();
                config.auth_info.impersonate = Some(user.to_string());
                crate::metrics::client(config, "downstream").unwrap_or_else(|_| base.clone())
            }
        });
        Ok(Self::new(factory))
    }

    /// The agent's own client.
    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    /// The client to deploy with: impersonating `system:serviceaccount:<namespace>:<name>` when a
    /// service account is given.
    pub fn deploy_client(&self, namespace: &str, service_account: &str) -> kube::Client {
        if service_account.is_empty() {
            self.client.clone()
        } else {
            (self.factory)(Some(&format!(
                "system:serviceaccount:{namespace}:{service_account}"
            )))
        }
    }

    /// Resolves an object's kind to its API resource and whether it is namespaced.
    pub async fn resolve(&self, api_version: &str, kind: &str) -> Result<(ApiResource, bool)> {
        let key = (api_version.to_string(), kind.to_string());
        if let Some(found) = self.resources.lock().expect("resource cache").get(&key) {
            return Ok(found.clone());
        }
        let (group, version) = match api_version.split_once('/') {
            Some((group, version)) => (group, version),
            None => ("", api_version),
        };
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let (resource, caps) = pinned_kind(&self.client, &gvk)
            .await
            .map_err(|err| Error::kube(format!("resolving {kind}.{api_version}"), err))?;
        let entry = (resource, caps.scope == ResourceScope::Namespaced);
        self.resources
            .lock()
            .expect("resource cache")
            .insert(key, entry.clone());
        Ok(entry)
    }

    /// A dynamic API for an object, in its namespace when the kind is namespaced.
    pub async fn api_for(
        &self,
        client: &kube::Client,
        object: &ObjectRef,
    ) -> Result<Api<DynamicObject>> {
        let (resource, namespaced) = self.resolve(&object.api_version, &object.kind).await?;
        if namespaced && object.namespace.is_empty() {
            return Err(Error::NoNamespace {
                object: object.to_string(),
                kind: object.kind.clone(),
            });
        }
        Ok(if namespaced {
            Api::namespaced_with(client.clone(), &object.namespace, &resource)
        } else {
            Api::all_with(client.clone(), &resource)
        })
    }

    /// A dynamic API for listing one kind in one namespace (or cluster-wide for cluster-scoped kinds).
    pub async fn api_for_kind(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
    ) -> Result<Api<DynamicObject>> {
        let object = ObjectRef {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            namespace: namespace.to_string(),
            name: String::new(),
        };
        self.api_for(&self.client, &object).await
    }
}
