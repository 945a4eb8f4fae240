//! `fleet controller`: runs the hub controller against the cluster of `--kubeconfig` (default: KUBECONFIG,
//! then the in-cluster service account): GitRepos → Bundles → BundleDeployments, with `/metrics`, the git
//! push webhook, leader election and the `fleet-local` bootstrap. Stops on Ctrl-C / SIGTERM in bounded time:
//! in-flight reconciles get `--stop-timeout-seconds` to finish, then blocking tasks (a hung git fetch) get
//! [`SHUTDOWN_GRACE`] before the process exits without them.

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
    /// Accept any ssh host key of git servers (Fleet's `insecureSkipHostKeyChecks`). By default a server's
    /// key must be in the `known_hosts` of the GitRepo's secret or, without one, in the `known-hosts`
    /// ConfigMap of `--namespace`.
    #[arg(long)]
    insecure_skip_host_key_checks: bool,
    /// Reconcile without taking the leader Lease (only one controller may run then).
    #[arg(long)]
    no_leader_election: bool,
    /// Do not create the `fleet-local` workspace, `local` Cluster and `default` ClusterGroup.
    #[arg(long)]
    no_bootstrap: bool,
    /// Seconds in-flight reconciles may take to finish after SIGTERM or Ctrl-C before the process exits
    /// anyway (keep it below the pod's terminationGracePeriodSeconds).
    #[arg(long, default_value_t = 20)]
    stop_timeout_seconds: u64,
    /// Log line format; `RUST_LOG` sets the level (default `info`).
    #[arg(long, value_enum, default_value = "json")]
    log_format: super::logging::LogFormat,
    /// Instead of running the controller, prepare its uninstall (the chart's pre-delete hook): scale the
    /// `fleet-controller` Deployment of `--namespace` to zero, take its leader Lease once no controller
    /// renews it, and remove the controller's finalizers from every Cluster, GitRepo and Bundle, so that
    /// nothing stays Terminating after `helm uninstall`.
    #[arg(long)]
    uninstall: bool,
}

/// How long the runtime waits for blocking tasks (a hung git fetch or file read) once the controller has
/// stopped; the process then exits without them.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

pub fn run(args: Args) -> anyhow::Result<()> {
    super::logging::init(args.log_format);
    fleet_controller::process::prefer_small_pages();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    if args.uninstall {
        return runtime.block_on(uninstall(args));
    }
    let stop_limit = Duration::from_secs(args.stop_timeout_seconds);
    let result = runtime.block_on(async {
        // Installed before anything else, so that a signal during start-up is not lost.
        let signal = super::dev::shutdown_signal()?;
        let (signalled, stopping) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            signal.await;
            let _ = signalled.send(true);
        });
        let stopped = |mut stopping: tokio::sync::watch::Receiver<bool>| async move {
            let _ = stopping.wait_for(|stop| *stop).await;
        };
        let shutdown = stopped(stopping.clone());
        let overdue = async move {
            stopped(stopping).await;
            tokio::time::sleep(stop_limit).await;
        };
        tokio::select! {
            result = run_controller(args, shutdown) => result,
            () = overdue => anyhow::bail!(
                "the controller did not stop within {stop_limit:?} of the shutdown signal; exiting anyway"
            ),
        }
    });
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    result
}

async fn uninstall(args: Args) -> anyhow::Result<()> {
    let client = hub_client(&args).await?;
    let identity = format!(
        "{}-uninstall",
        std::env::var("HOSTNAME").unwrap_or_else(|_| "fleet-controller".to_string())
    );
    fleet_controller::uninstall::release_finalizers(&client, &args.namespace, &identity)
        .await
        .context("releasing the controller's finalizers")?;
    Ok(())
}

async fn hub_client(args: &Args) -> anyhow::Result<kube::Client> {
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
    kube::Client::try_from(config).context("building the Kubernetes client")
}

async fn run_controller(
    args: Args,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let client = hub_client(&args).await?;
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
            insecure_skip_host_key_checks: args.insecure_skip_host_key_checks,
            ..Settings::default()
        },
        metrics_addr: Some(args.metrics_addr),
        webhook_addr: args.webhook_addr,
        leader_identity: (!args.no_leader_election).then_some(identity),
        bootstrap: !args.no_bootstrap,
    };
    run_process(client, options, shutdown).await?;
    Ok(())
}
