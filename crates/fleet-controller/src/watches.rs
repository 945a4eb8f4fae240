//! The watches that feed the [`FleetIndex`] and wake reconciles: Clusters, ClusterGroups,
//! BundleNamespaceMappings, Namespaces, Bundles and BundleDeployments. Each event updates the index and
//! sends exactly the reconcile requests it implies (a cluster label change → only the Bundles whose
//! targeting of that cluster changed; a BundleDeployment change → its Bundle, GitRepo, Cluster and the
//! Cluster's groups, throttled so that a burst of status reports costs one reconcile per object).
//! Objects that vanish while a watch relists are treated as deleted.

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::Arc;

use fleet_api::{Bundle, BundleDeployment, BundleNamespaceMapping, Cluster, ClusterGroup};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;

use crate::index::FleetIndex;
pub use crate::triggers::{Later, TriggerReceivers, Triggers, Waiting};

/// Runs every watch until the client's streams end (they retry with backoff; this returns only on shutdown).
pub async fn run(client: Client, index: FleetIndex, triggers: Triggers) {
    let cluster_watch = {
        let (index, triggers) = (index.clone(), triggers.clone());
        // What each Cluster last looked like to its reconcile, so that the controller's own status
        // writes (summary, display) wake neither the Cluster nor its groups again.
        let mut seen: HashMap<(String, String), (Option<u64>, String)> = HashMap::new();
        watch(
            Api::<Cluster>::all(client.clone()),
            "Cluster",
            index.clone(),
            move |c, deleted| {
                if deleted {
                    triggers.bundles(index.delete_cluster(c));
                } else {
                    triggers.cluster_changed(index.apply_cluster(c));
                }
                let namespace = c.namespace().unwrap_or_default();
                let key = (namespace.clone(), c.name_any());
                let changed = if deleted {
                    seen.remove(&key);
                    true
                } else {
                    let now = (
                        crate::cluster::outside_change(c),
                        c.status
                            .as_ref()
                            .map(|s| s.namespace.clone())
                            .unwrap_or_default(),
                    );
                    seen.insert(key, now.clone()) != Some(now)
                };
                if changed {
                    triggers.cluster(&namespace, &c.name_any());
                    triggers.groups_later(&index, &namespace);
                }
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
                triggers.group(&g.namespace().unwrap_or_default(), &g.name_any());
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
        let (index, triggers) = (index.clone(), triggers.clone());
        watch(
            Api::<Bundle>::all(client.clone()),
            "Bundle",
            index.clone(),
            move |b, deleted| {
                // A Bundle's own error (targeting, templating, reading) shows on its GitRepo too.
                if let Some((namespace, repo)) = index.apply_bundle(b, deleted) {
                    triggers.gitrepo_later(&namespace, &repo);
                }
            },
        )
    };
    let deployment_watch = {
        let (index, triggers) = (index.clone(), triggers.clone());
        watch_stored(
            Api::<BundleDeployment>::all(client.clone()),
            "BundleDeployment",
            index.clone(),
            move |bd, deleted| {
                let (stored, change) = index.apply_deployment(bd, deleted);
                if let Some(change) = change {
                    triggers.deployment_changed(&index, &change, deleted);
                }
                stored
            },
            // A delete needs only the object's metadata.
            |held| BundleDeployment {
                metadata: held.object_meta(),
                spec: Default::default(),
                status: None,
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
    watch_stored(
        api,
        kind,
        index,
        move |object: K, deleted| {
            handle(&object, deleted);
            Arc::new(object)
        },
        |held| K::clone(held),
    )
    .await;
}

/// One watch: applies, deletes, and relists (objects missing from a relist count as deleted). `handle`
/// returns the object as it should be remembered for that (shared with the index, not copied), and
/// `revive` turns a remembered object back into one to hand `handle` as deleted.
async fn watch_stored<K, R>(
    api: Api<K>,
    kind: &'static str,
    index: FleetIndex,
    mut handle: impl FnMut(K, bool) -> R + Send,
    revive: impl Fn(&R) -> K + Send,
) where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    R: Send,
{
    let mut known: HashMap<String, R> = HashMap::new();
    let mut relisted: Option<HashMap<String, R>> = None;
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
                let name = key(&object);
                known.insert(name, handle(object, false));
            }
            Ok(Event::Delete(object)) => {
                known.remove(&key(&object));
                handle(object, true);
            }
            Ok(Event::Init) => relisted = Some(HashMap::new()),
            Ok(Event::InitApply(object)) => {
                let name = key(&object);
                let stored = handle(object, false);
                if let Some(seen) = relisted.as_mut() {
                    seen.insert(name, stored);
                }
            }
            Ok(Event::InitDone) => {
                let seen = relisted.take().unwrap_or_default();
                for (name, gone) in &known {
                    if !seen.contains_key(name) {
                        handle(revive(gone), true);
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
