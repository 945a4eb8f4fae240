//! The hub controller: GitRepos → Bundles → BundleDeployments, with Fleet's targeting and rollout, status
//! aggregation and cluster namespaces, driven by watches (no periodic full resync).
//!
//! Data flow: [`gitrepo`] (poll → fetch → read the commit's tree → write Bundles) → [`bundle`] (target the
//! clusters in the [`index`] → Content + one BundleDeployment per cluster, rolled out by partitions) →
//! agents write BundleDeployment status → [`status`] (aggregated into Bundle, GitRepo and Cluster) ;
//! [`cluster`] gives each Cluster its namespace. [`watches`] feeds the index and wakes exactly the
//! reconciles a change affects. [`server`] serves `/metrics` and the git push webhook ([`webhook`]).
//!
//! Entry point: [`run`] with a [`kube::Client`] and [`Settings`], until the shutdown future resolves.

pub mod bundle;
pub mod cluster;
pub mod context;
pub mod error;
pub mod gitrepo;
pub mod index;
pub mod leader;
pub mod metrics;
pub mod process;
pub mod server;
pub mod status;
pub mod watches;
pub mod webhook;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fleet_api::{Bundle, Cluster, ClusterRegistration, ClusterRegistrationToken, GitRepo};
use futures::{FutureExt, StreamExt};
use kube::api::Api;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use tokio_stream::wrappers::UnboundedReceiverStream;

pub use context::{Context, Settings};
pub use error::Error;

use crate::index::FleetIndex;
use crate::metrics::Metrics;
use crate::watches::Triggers;

/// Runs the watches and the GitRepo, Bundle and Cluster controllers until `shutdown` resolves; in-flight
/// reconciles finish first. `started` receives the shared context once everything is wired (for the
/// metrics and webhook server).
pub async fn run(
    client: Client,
    settings: Settings,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()> + Send + 'static,
    started: impl FnOnce(Arc<Context>),
) {
    let index = FleetIndex::new();
    let (triggers, receivers) = Triggers::new();
    let ctx = Arc::new(Context::new(
        client.clone(),
        index.clone(),
        triggers.clone(),
        metrics,
        settings,
    ));
    started(ctx.clone());
    let shutdown = shutdown.boxed().shared();
    let watches = tokio::spawn(watches::run(client.clone(), index, triggers));
    let collector = tokio::spawn(bundle::content::run_collector(ctx.clone()));

    let gitrepos = controller::<GitRepo, _, _>(
        &client,
        "gitrepo",
        receivers.gitrepos,
        shutdown.clone(),
        ctx.clone(),
        gitrepo::reconcile,
    );
    let bundles = controller::<Bundle, _, _>(
        &client,
        "bundle",
        receivers.bundles,
        shutdown.clone(),
        ctx.clone(),
        bundle::reconcile,
    );
    let clusters = controller::<Cluster, _, _>(
        &client,
        "cluster",
        receivers.clusters,
        shutdown.clone(),
        ctx.clone(),
        cluster::reconcile,
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
    );
    let (_token_wake, token_triggers) = tokio::sync::mpsc::unbounded_channel();
    let tokens = controller::<ClusterRegistrationToken, _, _>(
        &client,
        "clusterregistrationtoken",
        token_triggers,
        shutdown.clone(),
        ctx.clone(),
        cluster::token::reconcile,
    );
    futures::join!(gitrepos, bundles, clusters, registrations, tokens);
    watches.abort();
    collector.abort();
    tracing::info!("controller stopped");
}

/// One kube-runtime controller over every `K`, woken by its watch and by `triggers`, measured in metrics.
async fn controller<K, F, Fut>(
    client: &Client,
    name: &'static str,
    triggers: tokio::sync::mpsc::UnboundedReceiver<kube::runtime::reflector::ObjectRef<K>>,
    shutdown: futures::future::Shared<futures::future::BoxFuture<'static, ()>>,
    ctx: Arc<Context>,
    reconcile: F,
) where
    K: Resource<DynamicType = ()>
        + Clone
        + DeserializeOwned
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
            let start = Instant::now();
            let result = reconcile(object, ctx.clone()).await;
            ctx.metrics.reconciled(
                name,
                start.elapsed(),
                result.as_ref().err().map(Error::kind),
            );
            result
        }
    };
    let error_policy = move |object: Arc<K>, error: &Error, _ctx: Arc<Context>| {
        tracing::warn!(
            controller = name,
            object = %kube::runtime::reflector::ObjectRef::from_obj(object.as_ref()),
            %error,
            "reconcile failed; retrying"
        );
        Action::requeue(Duration::from_secs(5))
    };
    Controller::new(Api::<K>::all(client.clone()), watcher::Config::default())
        .reconcile_on(UnboundedReceiverStream::new(triggers))
        .graceful_shutdown_on(shutdown)
        .run(reconcile, error_policy, ctx)
        .for_each(|result| async move {
            if let Err(err) = result {
                tracing::debug!(controller = name, error = %err, "controller event");
            }
        })
        .await;
}
