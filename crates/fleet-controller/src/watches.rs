//! The watches that feed the [`FleetIndex`] and wake reconciles: Clusters, ClusterGroups,
//! BundleNamespaceMappings, Namespaces, Bundles and BundleDeployments. Each event updates the index and
//! sends exactly the reconcile requests it implies (a cluster label change → only the Bundles whose
//! targeting of that cluster changed; a BundleDeployment status change → its Bundle, GitRepo and Cluster).
//! Objects that vanish while a watch relists are treated as deleted.

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::Arc;

use fleet_api::{
    Bundle, BundleDeployment, BundleNamespaceMapping, Cluster, ClusterGroup, GitRepo, labels,
};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher::{self, Event};
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio::sync::{Notify, mpsc};

use crate::index::{BundleKey, FleetIndex};

/// Senders of reconcile requests for the three controllers.
#[derive(Clone)]
pub struct Triggers {
    pub bundles: mpsc::UnboundedSender<ObjectRef<Bundle>>,
    pub gitrepos: mpsc::UnboundedSender<ObjectRef<GitRepo>>,
    pub clusters: mpsc::UnboundedSender<ObjectRef<Cluster>>,
    /// Wakes the Content garbage collector (a BundleDeployment went away).
    pub content_gc: Arc<Notify>,
}

/// The receiving ends, handed to the controllers' `reconcile_on`.
pub struct TriggerReceivers {
    pub bundles: mpsc::UnboundedReceiver<ObjectRef<Bundle>>,
    pub gitrepos: mpsc::UnboundedReceiver<ObjectRef<GitRepo>>,
    pub clusters: mpsc::UnboundedReceiver<ObjectRef<Cluster>>,
}

impl Triggers {
    pub fn new() -> (Triggers, TriggerReceivers) {
        let (bundles, bundles_rx) = mpsc::unbounded_channel();
        let (gitrepos, gitrepos_rx) = mpsc::unbounded_channel();
        let (clusters, clusters_rx) = mpsc::unbounded_channel();
        (
            Triggers {
                bundles,
                gitrepos,
                clusters,
                content_gc: Arc::new(Notify::new()),
            },
            TriggerReceivers {
                bundles: bundles_rx,
                gitrepos: gitrepos_rx,
                clusters: clusters_rx,
            },
        )
    }

    /// Asks for a reconcile of each Bundle. A closed channel means the controller is shutting down.
    pub fn bundles(&self, keys: impl IntoIterator<Item = BundleKey>) {
        for (namespace, name) in keys {
            let _ = self.bundles.send(ObjectRef::new(&name).within(&namespace));
        }
    }

    pub fn gitrepo(&self, namespace: &str, name: &str) {
        let _ = self.gitrepos.send(ObjectRef::new(name).within(namespace));
    }

    pub fn cluster(&self, namespace: &str, name: &str) {
        let _ = self.clusters.send(ObjectRef::new(name).within(namespace));
    }
}

/// Runs every watch until the client's streams end (they retry with backoff; this returns only on shutdown).
pub async fn run(client: Client, index: FleetIndex, triggers: Triggers) {
    let cluster_watch = {
        let (index, triggers) = (index.clone(), triggers.clone());
        watch(
            Api::<Cluster>::all(client.clone()),
            "Cluster",
            index.clone(),
            move |c, deleted| {
                let affected = if deleted {
                    index.delete_cluster(c)
                } else {
                    index.apply_cluster(c)
                };
                triggers.bundles(affected);
                triggers.cluster(&c.namespace().unwrap_or_default(), &c.name_any());
            },
        )
    };
    let group_watch = {
        let (index, triggers) = (index.clone(), triggers.clone());
        watch(
            Api::<ClusterGroup>::all(client.clone()),
            "ClusterGroup",
            index.clone(),
            move |g, deleted| {
                triggers.bundles(index.apply_group(g, deleted));
            },
        )
    };
    let mapping_watch = {
        let (index, triggers) = (index.clone(), triggers.clone());
        watch(
            Api::<BundleNamespaceMapping>::all(client.clone()),
            "BundleNamespaceMapping",
            index.clone(),
            move |m, deleted| triggers.bundles(index.apply_mapping(m, deleted)),
        )
    };
    let namespace_watch = {
        let (index, triggers) = (index.clone(), triggers.clone());
        watch(
            Api::<Namespace>::all(client.clone()),
            "Namespace",
            index.clone(),
            move |n, deleted| {
                let labels = (!deleted).then(|| n.labels().clone());
                triggers.bundles(index.apply_namespace(&n.name_any(), labels));
            },
        )
    };
    let bundle_watch = {
        let index = index.clone();
        watch(
            Api::<Bundle>::all(client.clone()),
            "Bundle",
            index.clone(),
            move |b, deleted| {
                index.apply_bundle(b, deleted);
            },
        )
    };
    let deployment_watch = {
        let (index, triggers) = (index.clone(), triggers.clone());
        watch_arc(
            Api::<BundleDeployment>::all(client.clone()),
            "BundleDeployment",
            index.clone(),
            move |bd, deleted| {
                let Some(bundle) = index.apply_deployment(bd, deleted) else {
                    return;
                };
                let labels = bd.labels();
                if let Some(repo) = labels.get(labels::REPO_NAME) {
                    triggers.gitrepo(&bundle.0, repo);
                }
                if let (Some(ns), Some(name)) = (
                    labels.get(labels::CLUSTER_NAMESPACE),
                    labels.get(labels::CLUSTER),
                ) {
                    triggers.cluster(ns, name);
                }
                triggers.bundles([bundle]);
                if deleted {
                    triggers.content_gc.notify_one();
                }
            },
        )
    };
    futures::join!(
        cluster_watch,
        group_watch,
        mapping_watch,
        namespace_watch,
        bundle_watch,
        deployment_watch
    );
}

async fn watch<K>(
    api: Api<K>,
    kind: &'static str,
    index: FleetIndex,
    mut handle: impl FnMut(&K, bool) + Send,
) where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    watch_arc(api, kind, index, move |object: &Arc<K>, deleted| {
        handle(object, deleted)
    })
    .await;
}

/// One watch: applies, deletes, and relists (objects missing from a relist count as deleted).
async fn watch_arc<K>(
    api: Api<K>,
    kind: &'static str,
    index: FleetIndex,
    mut handle: impl FnMut(&Arc<K>, bool) + Send,
) where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let mut known: HashMap<String, Arc<K>> = HashMap::new();
    let mut relisted: Option<HashMap<String, Arc<K>>> = None;
    let key = |object: &K| {
        format!(
            "{}/{}",
            object.namespace().unwrap_or_default(),
            object.name_any()
        )
    };
    let mut stream = watcher(api).default_backoff().boxed();
    while let Some(event) = stream.next().await {
        match event {
            Ok(Event::Apply(object)) => {
                let object = Arc::new(object);
                known.insert(key(&object), Arc::clone(&object));
                handle(&object, false);
            }
            Ok(Event::Delete(object)) => {
                known.remove(&key(&object));
                handle(&Arc::new(object), true);
            }
            Ok(Event::Init) => relisted = Some(HashMap::new()),
            Ok(Event::InitApply(object)) => {
                let object = Arc::new(object);
                if let Some(seen) = relisted.as_mut() {
                    seen.insert(key(&object), Arc::clone(&object));
                }
                handle(&object, false);
            }
            Ok(Event::InitDone) => {
                let seen = relisted.take().unwrap_or_default();
                for (name, gone) in &known {
                    if !seen.contains_key(name) {
                        handle(gone, true);
                    }
                }
                known = seen;
                index.mark_synced(kind);
            }
            Err(err) => tracing::warn!(kind, error = %err, "watch error; retrying"),
        }
    }
}

fn watcher<K>(api: Api<K>) -> impl futures::Stream<Item = Result<Event<K>, watcher::Error>>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    watcher::watcher(api, watcher::Config::default())
}
