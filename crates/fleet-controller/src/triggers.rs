//! Reconcile requests: the senders each controller's queue is fed by ([`Triggers`]), the throttled batches
//! ([`Later`]) and the objects waiting for a reconcile (the `queue_depth` gauge, [`Waiting`]). The watches
//! ([`crate::watches`]) and the reconcilers send them; the controllers' queues receive them.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::Mutex;

use fleet_api::{Bundle, Cluster, ClusterGroup, GitRepo};
use kube::runtime::reflector::ObjectRef;
use tokio::sync::{Notify, mpsc};

use crate::index::{BundleKey, ClusterChange, DeploymentChange, FleetIndex};
use crate::metrics::{ControllerLabel, Metrics};
use crate::sync::lock;
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
