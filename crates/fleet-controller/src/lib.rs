//! The hub controller: GitRepos → Bundles → BundleDeployments, with Fleet's targeting and rollout, status
//! aggregation and cluster namespaces, driven by watches (no periodic full resync).
//!
//! Data flow: [`gitrepo`] (poll → fetch → read the commit's tree → write Bundles) → [`bundle`] (target the
//! clusters in the [`index`] → Content + one BundleDeployment per cluster, rolled out by partitions) →
//! agents write BundleDeployment status → [`status`] (tallied incrementally in the index, aggregated into
//! Bundle, GitRepo, Cluster and ClusterGroup) ; [`cluster`] gives each Cluster its namespace. [`watches`]
//! feeds the index and wakes exactly the reconciles a change affects, status ones [`throttle`]d.
//! [`server`] serves `/metrics` and the git push webhook ([`webhook`]).
//!
//! Layers (imports point down only, no module cycles): the reconcilers ([`gitrepo`], [`bundle`],
//! [`cluster`], [`helmop`], [`placement`], [`status`]) and [`retry`], the error policy, use the [`context`]
//! (and the helpers [`finalize`], running a reconcile under its finalizer, [`delete`] and [`secrets`]);
//! the context holds the [`index`] (fleet state, deployment store, summaries and tallies), the reconcile
//! [`triggers`] and each reconciler's memory, which is a leaf module of its owner ([`bundle::cache`],
//! [`helmop::state`], [`placement::decisions`], [`placement::limits`], [`retry::backoff`], and
//! [`sync::Memo`] for what a reconciler last applied). The index and the context import no reconciler.
//!
//! Entry point: [`run`] with a [`kube::Client`] and [`Settings`], until the shutdown future resolves.

pub mod bundle;
pub mod cluster;
pub mod context;
pub mod delete;
pub mod error;
pub mod events;
pub mod finalize;
pub mod gitrepo;
pub mod helmop;
pub mod imagescan;
pub mod index;
pub mod leader;
pub mod metrics;
pub mod placement;
pub mod process;
pub mod retry;
pub mod secrets;
pub mod server;
pub mod status;
pub mod sync;
pub mod throttle;
pub mod triggers;
pub mod uninstall;
pub mod watches;
pub mod webhook;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::hash::{DefaultHasher, Hash, Hasher};

use fleet_api::{
    Bundle, Cluster, ClusterGroup, ClusterRegistration, ClusterRegistrationToken, GitRepo, HelmOp,
    ImageScan,
};
use futures::{FutureExt, StreamExt};
use kube::api::Api;
use kube::runtime::controller::{self as runtime_controller, Action, Controller};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio_stream::wrappers::UnboundedReceiverStream;

pub use context::{Context, Settings};
pub use error::Error;

use crate::index::FleetIndex;
use crate::metrics::Metrics;
use crate::watches::Triggers;

/// How long status-only requests (after BundleDeployment events) are gathered before they are delivered.
pub const STATUS_INTERVAL: Duration = Duration::from_millis(300);

/// Reconciles of one controller that run at once.
const CONCURRENCY: u16 = 16;

/// Controllers whose stalled objects get the policy's `Stalled` condition ([`retry::report_stalled`]): their
/// kinds have status conditions. GitRepos and HelmOps set and clear theirs in the reconcilers;
/// ClusterRegistrations and ClusterRegistrationTokens have no conditions, their stalls are only logged.
const REPORTS_STALLED: [&str; 3] = ["bundle", "cluster", "clusterimport"];

/// Runs the watches and the GitRepo, Bundle, Cluster and ClusterGroup controllers until `shutdown`
/// resolves; in-flight reconciles finish first. `started` receives the shared context once everything is wired (for the
/// metrics and webhook server).
pub async fn run(
    client: Client,
    settings: Settings,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()> + Send + 'static,
    started: impl FnOnce(Arc<Context>),
) {
    let index = FleetIndex::new();
    let (triggers, receivers) = Triggers::new(&metrics);
    let ctx = Arc::new(Context::new(
        client.clone(),
        index.clone(),
        triggers.clone(),
        metrics,
        settings,
    ));
    started(ctx.clone());
    let shutdown = shutdown.boxed().shared();
    let watches = tokio::spawn(watches::run(client.clone(), index, triggers.clone()));
    let collector = tokio::spawn(bundle::content::run_collector(ctx.clone()));
    let restrictions = tokio::spawn(gitrepo::restrict::watch(ctx.clone()));
    let (write_backs, write_back_task) = imagescan::writeback::WriteBacks::start(ctx.clone());
    let later = tokio::spawn(async move {
        triggers.later.run(&triggers, STATUS_INTERVAL).await;
    });
    {
        let (ctx, shutdown) = (ctx.clone(), shutdown.clone());
        tokio::spawn(async move {
            shutdown.await;
            ctx.stopping.send_replace(true);
        });
    }

    // The controllers write these kinds' status themselves: only spec and metadata changes wake them.
    let gitrepos = controller::<GitRepo, _, _>(
        &client,
        "gitrepo",
        receivers.gitrepos,
        shutdown.clone(),
        ctx.clone(),
        gitrepo::reconcile,
        Some(spec_or_metadata::<GitRepo>),
    );
    let bundles = controller::<Bundle, _, _>(
        &client,
        "bundle",
        receivers.bundles,
        shutdown.clone(),
        ctx.clone(),
        bundle::reconcile,
        Some(spec_or_metadata::<Bundle>),
    );
    // Agents write Cluster status (lastSeen), which the Cluster's display depends on; the controller's
    // own status fields do not wake it.
    let clusters = controller::<Cluster, _, _>(
        &client,
        "cluster",
        receivers.clusters,
        shutdown.clone(),
        ctx.clone(),
        cluster::reconcile,
        Some(cluster::outside_change),
    );
    let groups = controller::<ClusterGroup, _, _>(
        &client,
        "clustergroup",
        receivers.groups,
        shutdown.clone(),
        ctx.clone(),
        status::group::reconcile,
        Some(spec_or_metadata::<ClusterGroup>),
    );
    // Registrations and tokens are woken only by their own watches (and requeues).
    let (_registration_wake, registration_triggers) = tokio::sync::mpsc::unbounded_channel();
    let registrations = controller::<ClusterRegistration, _, _>(
        &client,
        "clusterregistration",
        registration_triggers,
        shutdown.clone(),
        ctx.clone(),
        cluster::registration::reconcile,
        None,
    );
    let (_token_wake, token_triggers) = tokio::sync::mpsc::unbounded_channel();
    let tokens = controller::<ClusterRegistrationToken, _, _>(
        &client,
        "clusterregistrationtoken",
        token_triggers,
        shutdown.clone(),
        ctx.clone(),
        cluster::token::reconcile,
        None,
    );
    // Manager-initiated registration: Clusters with a kubeConfigSecret get their agent installed.
    let (import_wake, import_triggers) = tokio::sync::mpsc::unbounded_channel();
    let import_watch = tokio::spawn(cluster::import::watch::run(
        client.clone(),
        ctx.settings.system_namespace.clone(),
        import_wake,
    ));
    let imports = controller::<Cluster, _, _>(
        &client,
        "clusterimport",
        import_triggers,
        shutdown.clone(),
        ctx.clone(),
        cluster::import::reconcile,
        Some(spec_or_metadata::<Cluster>),
    );
    // HelmOps: woken by their own spec changes and by their Bundle's and BundleDeployments' changes.
    let (helmop_wake, helmop_triggers) = tokio::sync::mpsc::unbounded_channel();
    let helmop_watch = tokio::spawn(helmop::watch(client.clone(), helmop_wake));
    let helmops = controller::<HelmOp, _, _>(
        &client,
        "helmop",
        helmop_triggers,
        shutdown.clone(),
        ctx.clone(),
        helmop::reconcile,
        Some(spec_or_metadata::<HelmOp>),
    );
    // ImageScans: woken by their own spec changes, then by their per-object timers (requeues).
    let (_imagescan_wake, imagescan_triggers) = tokio::sync::mpsc::unbounded_channel();
    let scanner = imagescan::Scanner::new(write_backs);
    let imagescans = controller::<ImageScan, _, _>(
        &client,
        "imagescan",
        imagescan_triggers,
        shutdown.clone(),
        ctx.clone(),
        move |scan, ctx| imagescan::reconcile(scan, ctx, scanner.clone()),
        Some(spec_or_metadata::<ImageScan>),
    );
    futures::join!(
        gitrepos,
        bundles,
        clusters,
        groups,
        registrations,
        tokens,
        imports,
        helmops,
        imagescans
    );
    helmop_watch.abort();
    write_back_task.abort();
    watches.abort();
    import_watch.abort();
    collector.abort();
    restrictions.abort();
    later.abort();
    tracing::info!("controller stopped");
}

/// A hash of what a user or another controller changes (generation, labels, annotations, finalizers,
/// deletion), so that a controller's own status writes do not wake it again.
fn spec_or_metadata<K: Resource>(object: &K) -> Option<u64> {
    let meta = object.meta();
    let mut hasher = DefaultHasher::new();
    meta.generation.hash(&mut hasher);
    meta.labels.hash(&mut hasher);
    meta.annotations.hash(&mut hasher);
    meta.finalizers.hash(&mut hasher);
    meta.deletion_timestamp
        .as_ref()
        .map(|t| t.0.to_string())
        .hash(&mut hasher);
    Some(hasher.finish())
}

/// The key of `object` of controller `name` in the shared backoff.
fn retry_key<K: Resource<DynamicType = ()>>(name: &str, object: &K) -> String {
    let meta = object.meta();
    format!(
        "{name}/{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// The API of `object`'s kind in its namespace.
fn api_for<K>(client: &Client, object: &K) -> Api<K>
where
    K: Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>,
{
    Api::namespaced(
        client.clone(),
        object.meta().namespace.as_deref().unwrap_or_default(),
    )
}

/// One kube-runtime controller over every `K`, woken by its watch (with `wake_on`, only by events that
/// change its hash, e.g. [`spec_or_metadata`]) and by `triggers`, at most [`CONCURRENCY`] reconciles at
/// once, measured in metrics.
async fn controller<K, F, Fut>(
    client: &Client,
    name: &'static str,
    triggers: tokio::sync::mpsc::UnboundedReceiver<kube::runtime::reflector::ObjectRef<K>>,
    shutdown: futures::future::Shared<futures::future::BoxFuture<'static, ()>>,
    ctx: Arc<Context>,
    reconcile: F,
    wake_on: Option<fn(&K) -> Option<u64>>,
) where
    K: Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
    F: Fn(Arc<K>, Arc<Context>) -> Fut + Send + Sync + Clone + 'static,
    Fut: Future<Output = Result<Action, Error>> + Send + 'static,
{
    let reconcile = move |object: Arc<K>, ctx: Arc<Context>| {
        let reconcile = reconcile.clone();
        async move {
            ctx.triggers.waiting.started(
                name,
                &object.namespace().unwrap_or_default(),
                &object.name_any(),
            );
            let start = Instant::now();
            let result = reconcile(object.clone(), ctx.clone()).await;
            ctx.metrics.reconciled(
                name,
                start.elapsed(),
                result.as_ref().err().map(Error::kind),
            );
            if result.is_ok()
                && ctx.retries.succeeded(&retry_key(name, object.as_ref()))
                && REPORTS_STALLED.contains(&name)
            {
                retry::report_stalled(api_for(&ctx.client, object.as_ref()), object.as_ref(), None)
                    .await;
            }
            result
        }
    };
    // One policy for every controller ([`retry`]).
    let error_policy = move |object: Arc<K>, error: &Error, ctx: Arc<Context>| {
        let reference = kube::runtime::reflector::ObjectRef::from_obj(object.as_ref());
        let action = retry::policy(error, &retry_key(name, object.as_ref()), &ctx.retries);
        match error.retry() {
            retry::Retry::Soon => tracing::debug!(
                controller = name, object = %reference, %error,
                "reconcile saw an out-of-date object; retrying soon"
            ),
            retry::Retry::Backoff => tracing::warn!(
                controller = name, object = %reference, %error, ?action,
                "reconcile failed; retrying with backoff"
            ),
            retry::Retry::Stalled => {
                tracing::warn!(
                    controller = name, object = %reference, %error,
                    "reconcile stalled: the object must change"
                );
                if REPORTS_STALLED.contains(&name) {
                    let (api, message) = (api_for(&ctx.client, object.as_ref()), error.to_string());
                    tokio::spawn(async move {
                        retry::report_stalled(api, object.as_ref(), Some(&message)).await;
                    });
                }
            }
        }
        action
    };
    let (reader, writer) = reflector::store();
    let objects = watcher::watcher(Api::<K>::all(client.clone()), watcher::Config::default())
        .default_backoff()
        .reflect(writer)
        .applied_objects();
    let objects = match wake_on {
        Some(hash) => objects.predicate_filter(hash, Default::default()).boxed(),
        None => objects.boxed(),
    };
    let never_started = stopped_before_first_list(reader.clone(), shutdown.clone());
    let run = Controller::for_stream(objects, reader)
        .with_config(runtime_controller::Config::default().concurrency(CONCURRENCY))
        .reconcile_on(UnboundedReceiverStream::new(triggers))
        .graceful_shutdown_on(shutdown)
        .run(reconcile, error_policy, ctx)
        .for_each(|result| async move {
            if let Err(err) = result {
                tracing::debug!(controller = name, error = %err, "controller event");
            }
        });
    tokio::select! {
        () = run => {}
        () = never_started => tracing::debug!(controller = name, "stopped before its first list"),
    }
}

/// Resolves when `shutdown` comes before the store's first complete list (a CRD not installed yet, an API
/// server still unreachable). kube-runtime's Controller holds every reconcile until its store is ready and
/// keeps the cut-off watch (and so the store's writer) alive, so a graceful shutdown would wait for that
/// forever; as nothing can have been reconciled yet, the controller may simply be dropped. Once the store is
/// ready this never resolves, and the graceful shutdown lets in-flight reconciles finish.
async fn stopped_before_first_list<K>(
    reader: reflector::Store<K>,
    shutdown: futures::future::Shared<futures::future::BoxFuture<'static, ()>>,
) where
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    shutdown.await;
    if matches!(reader.wait_until_ready().now_or_never(), Some(Ok(()))) {
        std::future::pending::<()>().await;
    }
}
