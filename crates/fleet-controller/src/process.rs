//! The whole controller process, as `fleet controller` runs it: optional bootstrap of `fleet-local`, the
//! `/metrics` server, leader election (only the leader reconciles; losing the Lease stops the process so
//! that it restarts as a candidate), the controllers, and the webhook server, until `shutdown` resolves.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use kube::Client;

use crate::context::{Context, Settings};
use crate::error::{Error, Result};
use crate::leader::{LEASE_NAME, LeaderElection};
use crate::metrics::Metrics;
use crate::{cluster, server};

/// How the process runs.
#[derive(Debug, Clone)]
pub struct ProcessOptions {
    pub settings: Settings,
    pub metrics_addr: Option<SocketAddr>,
    pub webhook_addr: Option<SocketAddr>,
    /// The Lease holder identity; `None` disables leader election.
    pub leader_identity: Option<String>,
    /// Create the `fleet-local` workspace, `local` Cluster and `default` group when missing.
    pub bootstrap: bool,
}

/// Turns transparent huge pages off for this process, as `fleet controller` does first thing: the controller
/// keeps tens of thousands of small records, and with mimalloc's 2 MB pages its peak resident memory at 50
/// bundles on 1,000 clusters was about 10% higher (399 against 363 MiB in `cargo bench -p fleet-controller
/// --bench scale`) at the same CPU time. Pages already faulted stay as they are; the kernel checks the flag at
/// every later fault. A kernel without the prctl only costs the memory, so a failure is logged, not fatal.
pub fn prefer_small_pages() {
    if let Err(err) = rustix::thread::disable_transparent_huge_pages(true) {
        tracing::debug!(error = %err, "could not turn transparent huge pages off");
    }
}

/// Runs until `shutdown` resolves or leadership is lost.
pub async fn run_process(
    client: Client,
    options: ProcessOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let shutdown = shutdown.boxed().shared();
    let metrics = Arc::new(Metrics::new());
    if let Some(addr) = options.metrics_addr {
        let router = server::metrics_router(metrics.clone());
        let stop = shutdown.clone();
        tokio::spawn(async move {
            if let Err(err) = server::serve(addr, router, stop).await {
                tracing::error!(%addr, error = %err, "metrics server failed");
            }
        });
    }
    let election = options.leader_identity.as_ref().map(|identity| {
        LeaderElection::new(
            client.clone(),
            &options.settings.system_namespace,
            LEASE_NAME,
            identity,
            Duration::from_secs(15),
        )
    });
    if let Some(election) = &election {
        tokio::select! {
            acquired = election.acquire() => acquired?,
            () = shutdown.clone() => return Ok(()),
        }
    }
    cluster::bootstrap::default_workspace(&client).await?;
    if options.bootstrap {
        cluster::bootstrap::bootstrap(&client).await?;
    }
    // The heartbeat timeout follows the agents' check-in interval of the manager configuration.
    let manager =
        cluster::config::ManagerConfig::load(&client, &options.settings.system_namespace).await?;
    let placement = manager.placement_settings();
    tracing::info!(
        agent_checkin_interval = ?manager.agent_checkin_interval,
        heartbeat_timeout = ?placement.heartbeat_timeout,
        "manager configuration read"
    );
    let lost = async move {
        match &election {
            Some(election) => election.hold().await,
            None => futures::future::pending::<()>().await,
        }
    };
    let stop = {
        let shutdown = shutdown.clone();
        async move {
            tokio::select! {
                () = shutdown => {}
                () = lost => {}
            }
        }
    }
    .boxed()
    .shared();
    let webhook_server: Arc<Mutex<Option<tokio::task::JoinHandle<()>>>> = Arc::default();
    let on_start = {
        let webhook_server = webhook_server.clone();
        let stop = stop.clone();
        move |ctx: Arc<Context>| {
            let _ = ctx.placement_settings.set(placement);
            if let Some(addr) = options.webhook_addr {
                let router = server::webhook_router(ctx);
                let task = tokio::spawn(async move {
                    if let Err(err) = server::serve(addr, router, stop).await {
                        tracing::error!(%addr, error = %err, "webhook server failed");
                    }
                });
                *crate::context::lock(&webhook_server) = Some(task);
            }
        }
    };
    crate::run(client, options.settings, metrics, stop.clone(), on_start).await;
    let task = crate::context::lock(&webhook_server).take();
    if let Some(task) = task {
        task.await.map_err(|e| Error::Task(e.to_string()))?;
    }
    Ok(())
}
