//! What wakes the import controller ([`super`]) besides its Clusters: a change of the manager configuration
//! (ConfigMap `fleet-controller` in the controller's namespace: agent image, check-in interval, hub address)
//! wakes every Cluster with a `kubeConfigSecret`, and a change of a Secret wakes the Clusters whose
//! `kubeConfigSecret` it is (as Fleet's import controller watches both). Secrets are watched as metadata
//! only: the reconcile reads the one it needs. The initial listings wake nobody: every Cluster is
//! reconciled when the controller starts anyway.

use std::future::ready;

use fleet_api::Cluster;
use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::ResourceExt;
use kube::api::{Api, PartialObjectMeta};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::mpsc::UnboundedSender;

use super::secret_namespace::kubeconfig_secret_namespace;
use crate::cluster::config::CONFIG_MAP;

/// Watches until the wake channel closes.
pub async fn run(
    client: kube::Client,
    system_namespace: String,
    wake: UnboundedSender<ObjectRef<Cluster>>,
) {
    let (store, writer) = reflector::store::<Cluster>();
    let clusters = reflector::reflector(
        writer,
        watcher(
            Api::<Cluster>::all(client.clone()),
            watcher::Config::default(),
        ),
    )
    .default_backoff()
    .for_each(|_| ready(()));
    let config = watcher(
        Api::<ConfigMap>::namespaced(client.clone(), &system_namespace),
        watcher::Config::default().fields(&format!("metadata.name={CONFIG_MAP}")),
    )
    .default_backoff()
    .for_each(|event| {
        if let Ok(watcher::Event::Apply(_) | watcher::Event::Delete(_)) = event {
            wake_where(&store, &wake, |_| true);
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
            wake_where(&store, &wake, |cluster| {
                cluster.spec.kube_config_secret == name
                    && kubeconfig_secret_namespace(cluster).is_ok_and(|ns| ns == namespace)
            });
        }
        ready(())
    });
    futures::join!(clusters, config, secrets);
}

/// Wakes the imported Clusters (those with a `kubeConfigSecret`) that pass `matches`.
fn wake_where(
    store: &Store<Cluster>,
    wake: &UnboundedSender<ObjectRef<Cluster>>,
    matches: impl Fn(&Cluster) -> bool,
) {
    for cluster in store.state() {
        if !cluster.spec.kube_config_secret.is_empty() && matches(&cluster) {
            let _ = wake.send(ObjectRef::from_obj(cluster.as_ref()));
        }
    }
}
