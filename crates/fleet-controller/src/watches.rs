//! The watches that feed the [`FleetIndex`] and wake reconciles: Clusters, ClusterGroups,
//! BundleNamespaceMappings, Namespaces, Bundles and BundleDeployments. Each event updates the index and
//! sends exactly the reconcile requests it implies (a cluster label change → only the Bundles whose
//! targeting of that cluster changed; a BundleDeployment change → its Bundle, GitRepo, Cluster and the
//! Cluster's groups, throttled so that a burst of status reports costs one reconcile per object).
//! Objects that vanish while a watch relists are treated as deleted.

use std::collections::{HashMap, HashSet};
use std::fmt::Debug;
use std::sync::Arc;
use std::sync::Mutex;

use fleet_api::{Bundle, BundleDeployment, BundleNamespaceMapping, Cluster, ClusterGroup, GitRepo};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher::{self, Event};
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio::sync::{Notify, mpsc};

use crate::context::lock;
use crate::index::{BundleKey, ClusterChange, DeploymentChange, FleetIndex};
use crate::metrics::{ControllerLabel, Metrics};
use crate::throttle::Throttled;

/// Objects with a reconcile requested and not started yet, per controller: the `queue_depth` gauge.
pub struct Waiting {
    objects: Mutex<HashMap<&'static str, HashSet<(String, String)>>>,
    gauge: prometheus_client::metrics::family::Family<
        ControllerLabel,
        prometheus_client::metrics::gauge::Gauge,
    >,
}

impl Waiting {
    fn new(metrics: &Metrics) -> Self {
        Waiting {
            objects: Mutex::default(),
            gauge: metrics.queue_depth.clone(),
        }
    }

    fn update(
        &self,
        controller: &'static str,
        change: impl FnOnce(&mut HashSet<(String, String)>),
    ) {
        let mut objects = lock(&self.objects);
        let set = objects.entry(controller).or_default();
        change(set);
        self.gauge
            .get_or_create(&ControllerLabel {
                controller: controller.to_string(),
            })
            .set(set.len() as i64);
    }

    /// A reconcile of `namespace/name` was requested.
    pub fn requested(&self, controller: &'static str, namespace: &str, name: &str) {
        self.update(controller, |set| {
            set.insert((namespace.to_string(), name.to_string()));
        });
    }

    /// A reconcile of `namespace/name` started.
    pub fn started(&self, controller: &'static str, namespace: &str, name: &str) {
        self.update(controller, |set| {
            set.remove(&(namespace.to_string(), name.to_string()));
        });
    }
}

/// Senders of reconcile requests for the controllers.
#[derive(Clone)]
pub struct Triggers {
    pub bundles: mpsc::UnboundedSender<ObjectRef<Bundle>>,
    pub gitrepos: mpsc::UnboundedSender<ObjectRef<GitRepo>>,
    pub clusters: mpsc::UnboundedSender<ObjectRef<Cluster>>,
    pub groups: mpsc::UnboundedSender<ObjectRef<ClusterGroup>>,
    /// Wakes the Content garbage collector (a BundleDeployment went away).
    pub content_gc: Arc<Notify>,
    /// Requests delivered in throttled batches (see [`Later::run`]).
    pub later: Arc<Later>,
    pub waiting: Arc<Waiting>,
}

/// Throttled reconcile requests, one set per controller.
#[derive(Default)]
pub struct Later {
    pub bundles: Throttled,
    pub gitrepos: Throttled,
    pub clusters: Throttled,
    pub groups: Throttled,
}

impl Later {
    /// Forwards each batch to the controllers, one `interval` after its first request.
    pub async fn run(&self, triggers: &Triggers, interval: std::time::Duration) {
        futures::join!(
            self.bundles.run(interval, |ns, name| triggers
                .bundles([(ns.into(), name.into())])),
            self.gitrepos
                .run(interval, |ns, name| triggers.gitrepo(ns, name)),
            self.clusters
                .run(interval, |ns, name| triggers.cluster(ns, name)),
            self.groups
                .run(interval, |ns, name| triggers.group(ns, name)),
        );
    }
}

/// The receiving ends, handed to the controllers' `reconcile_on`.
pub struct TriggerReceivers {
    pub bundles: mpsc::UnboundedReceiver<ObjectRef<Bundle>>,
    pub gitrepos: mpsc::UnboundedReceiver<ObjectRef<GitRepo>>,
    pub clusters: mpsc::UnboundedReceiver<ObjectRef<Cluster>>,
    pub groups: mpsc::UnboundedReceiver<ObjectRef<ClusterGroup>>,
}

impl Triggers {
    pub fn new(metrics: &Metrics) -> (Triggers, TriggerReceivers) {
        let (bundles, bundles_rx) = mpsc::unbounded_channel();
        let (gitrepos, gitrepos_rx) = mpsc::unbounded_channel();
        let (clusters, clusters_rx) = mpsc::unbounded_channel();
        let (groups, groups_rx) = mpsc::unbounded_channel();
        (
            Triggers {
                bundles,
                gitrepos,
                clusters,
                groups,
                content_gc: Arc::new(Notify::new()),
                later: Arc::default(),
                waiting: Arc::new(Waiting::new(metrics)),
            },
            TriggerReceivers {
                bundles: bundles_rx,
                gitrepos: gitrepos_rx,
                clusters: clusters_rx,
                groups: groups_rx,
            },
        )
    }

    pub fn group(&self, namespace: &str, name: &str) {
        self.waiting.requested("clustergroup", namespace, name);
        let _ = self.groups.send(ObjectRef::new(name).within(namespace));
    }

    /// Throttled requests for the status of every ClusterGroup in `namespace`.
    pub fn groups_later(&self, index: &FleetIndex, namespace: &str) {
        for group in index.read(|state| state.groups_in(namespace)) {
            self.waiting.requested("clustergroup", namespace, &group);
            self.later.groups.request(namespace, &group);
        }
    }

    /// The throttled requests a BundleDeployment change implies: its GitRepo, Cluster, the Cluster's
    /// groups and its Bundle (whose status summarises it); Content GC after a deletion.
    pub fn deployment_changed(&self, index: &FleetIndex, change: &DeploymentChange, deleted: bool) {
        if let Some((namespace, repo)) = &change.repo {
            self.gitrepo_later(namespace, repo);
        }
        self.cluster_later(&change.cluster.namespace, &change.cluster.name);
        self.groups_later(index, &change.cluster.namespace);
        self.bundle_later(&change.bundle.0, &change.bundle.1);
        if deleted {
            self.content_gc.notify_one();
        }
    }

    /// The requests a Cluster change implies: its Bundles at once, or in the next throttled batch when
    /// only its namespace changed (a thousand Clusters given namespaces then cost each Bundle a few
    /// plans, not one per Cluster).
    pub fn cluster_changed(&self, change: ClusterChange) {
        if change.namespace_only {
            for (namespace, name) in &change.bundles {
                self.bundle_later(namespace, name);
            }
        } else {
            self.bundles(change.bundles);
        }
    }

    /// A throttled request for a Bundle's reconcile.
    pub fn bundle_later(&self, namespace: &str, name: &str) {
        self.waiting.requested("bundle", namespace, name);
        self.later.bundles.request(namespace, name);
    }

    /// A throttled request for a GitRepo's reconcile.
    pub fn gitrepo_later(&self, namespace: &str, name: &str) {
        self.waiting.requested("gitrepo", namespace, name);
        self.later.gitrepos.request(namespace, name);
    }

    /// A throttled request for a Cluster's reconcile.
    pub fn cluster_later(&self, namespace: &str, name: &str) {
        self.waiting.requested("cluster", namespace, name);
        self.later.clusters.request(namespace, name);
    }

    /// Asks for a reconcile of each Bundle. A closed channel means the controller is shutting down.
    pub fn bundles(&self, keys: impl IntoIterator<Item = BundleKey>) {
        for (namespace, name) in keys {
            self.waiting.requested("bundle", &namespace, &name);
            let _ = self.bundles.send(ObjectRef::new(&name).within(&namespace));
        }
    }

    pub fn gitrepo(&self, namespace: &str, name: &str) {
        self.waiting.requested("gitrepo", namespace, name);
        let _ = self.gitrepos.send(ObjectRef::new(name).within(namespace));
    }

    pub fn cluster(&self, namespace: &str, name: &str) {
        self.waiting.requested("cluster", namespace, name);
        let _ = self.clusters.send(ObjectRef::new(name).within(namespace));
    }
}

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
