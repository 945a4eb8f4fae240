//! `fleet controller`: runs the hub controller against the cluster of `--kubeconfig` (default: KUBECONFIG,
//! then the in-cluster service account): GitRepos → Bundles → BundleDeployments, with `/metrics`, the git
//! push webhook, leader election and the `fleet-local` bootstrap. Stops cleanly on Ctrl-C / SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use fleet_controller::Settings;
use fleet_controller::process::{ProcessOptions, run_process};
use kube::config::{KubeConfigOptions, Kubeconfig};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Kubeconfig of the hub cluster (default: KUBECONFIG, then the in-cluster service account).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// The controller's namespace: its Lease and the `gitjob-webhook` secret live here.
    #[arg(long, default_value = "cattle-fleet-system")]
    namespace: String,
    /// Serve Prometheus metrics on this address (`/metrics`).
    #[arg(long, default_value = "0.0.0.0:8081")]
    metrics_addr: SocketAddr,
    /// Receive git push webhooks on this address.
    #[arg(long)]
    webhook_addr: Option<SocketAddr>,
    /// Where bare git repositories are cached.
    #[arg(long, default_value = "/tmp/fleet-git-cache")]
    git_cache: PathBuf,
    /// Polling interval of GitRepos that set none, in seconds.
    #[arg(long, default_value_t = 15)]
    default_polling_seconds: u64,
    /// Reconcile without taking the leader Lease (only one controller may run then).
    #[arg(long)]
    no_leader_election: bool,
    /// Do not create the `fleet-local` workspace, `local` Cluster and `default` ClusterGroup.
    #[arg(long)]
    no_bootstrap: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .json()
        .init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(run_controller(args))
}

async fn run_controller(args: Args) -> anyhow::Result<()> {
    let config = match &args.kubeconfig {
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path)
                .with_context(|| format!("reading {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .with_context(|| format!("{}: not a usable kubeconfig", path.display()))?
        }
        None => kube::Config::infer()
            .await
            .context("no kubeconfig: pass --kubeconfig, set KUBECONFIG, or run in a cluster")?,
    };
    let client = kube::Client::try_from(config).context("building the Kubernetes client")?;
    let identity = format!(
        "{}-{}",
        std::env::var("HOSTNAME").unwrap_or_else(|_| "fleet-controller".to_string()),
        std::process::id()
    );
    let options = ProcessOptions {
        settings: Settings {
            git_cache_dir: args.git_cache,
            default_polling_interval: Duration::from_secs(args.default_polling_seconds),
            system_namespace: args.namespace,
        },
        metrics_addr: Some(args.metrics_addr),
        webhook_addr: args.webhook_addr,
        leader_identity: (!args.no_leader_election).then_some(identity),
        bootstrap: !args.no_bootstrap,
    };
    run_process(client, options, shutdown_signal()).await?;
    Ok(())
}

/// Ctrl-C, or SIGTERM on Unix.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
