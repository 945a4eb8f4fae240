//! What wakes the import controller ([`super`]) besides its Clusters: a change of the manager configuration
//! (ConfigMap `fleet-controller` in the controller's namespace: agent image, check-in interval, hub address)
//! wakes every Cluster with a `kubeConfigSecret`, and a change of a Secret wakes the Clusters whose
//! `kubeConfigSecret` it is (as Fleet's import controller watches both). Secrets are watched as metadata
//! only: the reconcile reads the one it needs. The initial listings wake nobody: every Cluster is
//! reconciled when the controller starts anyway.

use std::collections::HashMap;
use std::future::ready;
use std::sync::Mutex;

use fleet_api::Cluster;
use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::ResourceExt;
use kube::api::{Api, PartialObjectMeta};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::mpsc::UnboundedSender;

use super::secret_namespace::kubeconfig_secret_namespace;
use crate::cluster::config::CONFIG_MAP;
use crate::sync::lock;

/// Imported Clusters, each with its Secret's (namespace, name); the namespace is `None` when the Cluster
/// names one it may not read from.
type SecretsOf = HashMap<ObjectRef<Cluster>, (Option<String>, String)>;

/// The imported Clusters (those with a `kubeConfigSecret`). Only these are kept, not every Cluster: the
/// controllers' own caches hold those.
#[derive(Default)]
struct Imported {
    clusters: SecretsOf,
    /// The Clusters of a (re)list in progress, which replace `clusters` once it is complete.
    listing: Option<SecretsOf>,
}

impl Imported {
    fn apply(&mut self, event: watcher::Event<Cluster>) {
        let entry = |cluster: &Cluster| {
            (!cluster.spec.kube_config_secret.is_empty()).then(|| {
                (
                    ObjectRef::from_obj(cluster),
                    (
                        kubeconfig_secret_namespace(cluster).ok(),
                        cluster.spec.kube_config_secret.clone(),
                    ),
                )
            })
        };
        match event {
            watcher::Event::Init => self.listing = Some(HashMap::new()),
            watcher::Event::InitApply(cluster) => {
                if let (Some(listing), Some((key, secret))) = (&mut self.listing, entry(&cluster)) {
                    listing.insert(key, secret);
                }
            }
            watcher::Event::InitDone => {
                if let Some(listing) = self.listing.take() {
                    self.clusters = listing;
                }
            }
            watcher::Event::Apply(cluster) => match entry(&cluster) {
                Some((key, secret)) => {
                    self.clusters.insert(key, secret);
                }
                None => {
                    self.clusters.remove(&ObjectRef::from_obj(&cluster));
                }
            },
            watcher::Event::Delete(cluster) => {
                self.clusters.remove(&ObjectRef::from_obj(&cluster));
            }
        }
    }

    /// Wakes the imported Clusters whose Secret passes `matches` (namespace, name).
    fn wake_where(
        &self,
        wake: &UnboundedSender<ObjectRef<Cluster>>,
        matches: impl Fn(Option<&str>, &str) -> bool,
    ) {
        for (cluster, (namespace, name)) in &self.clusters {
            if matches(namespace.as_deref(), name) {
                let _ = wake.send(cluster.clone());
            }
        }
    }
}

/// Watches until the wake channel closes.
pub async fn run(
    client: kube::Client,
    system_namespace: String,
    wake: UnboundedSender<ObjectRef<Cluster>>,
) {
    let imported = Mutex::new(Imported::default());
    let clusters = watcher(
        Api::<Cluster>::all(client.clone()),
        watcher::Config::default(),
    )
    .default_backoff()
    .for_each(|event| {
        if let Ok(event) = event {
            lock(&imported).apply(event);
        }
        ready(())
    });
    let config = watcher(
        Api::<ConfigMap>::namespaced(client.clone(), &system_namespace),
        watcher::Config::default().fields(&format!("metadata.name={CONFIG_MAP}")),
    )
    .default_backoff()
    .for_each(|event| {
        if let Ok(watcher::Event::Apply(_) | watcher::Event::Delete(_)) = event {
            lock(&imported).wake_where(&wake, |_, _| true);
        }
        ready(())
    });
    let secrets = watcher(
        Api::<PartialObjectMeta<Secret>>::all(client),
        watcher::Config::default(),
    )
    .default_backoff()
    .for_each(|event| {
        if let Ok(watcher::Event::Apply(secret) | watcher::Event::Delete(secret)) = event {
            let (namespace, name) = (secret.namespace().unwrap_or_default(), secret.name_any());
            lock(&imported).wake_where(&wake, |secret_namespace, secret_name| {
                secret_name == name && secret_namespace == Some(namespace.as_str())
            });
        }
        ready(())
    });
    futures::join!(clusters, config, secrets);
}
