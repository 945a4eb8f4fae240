//! `fleet agent`: runs the downstream agent. It deploys the BundleDeployments of its cluster namespace on
//! the hub into the cluster of `--kubeconfig` (default: `KUBECONFIG`, then in-cluster), under the agent scope
//! `--scope` in `--namespace`. The hub is reached with `--hub-kubeconfig` (its context namespace is the cluster
//! namespace unless `--cluster-namespace` is given) or, without it, with the credentials in the `fleet-agent`
//! Secret, registering first from the `fleet-agent-bootstrap` Secret when there are none. It checks in on its
//! Cluster every `--checkin-interval` (the charts' `agentCheckinInterval`), logs as the controller does
//! (`RUST_LOG`, `--log-format`) and serves `/metrics`, `/healthz` and `/readyz` on `--metrics-addr`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use fleet_agent::{Agent, AgentConfig, Downstream, Scope, registration};
use kube::config::{KubeConfigOptions, Kubeconfig};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Kubeconfig of the downstream cluster (default: KUBECONFIG, then the in-cluster service account).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Kubeconfig of the hub, with credentials for this cluster's namespace (default: register).
    #[arg(long)]
    hub_kubeconfig: Option<PathBuf>,
    /// The cluster namespace on the hub (default: the hub kubeconfig's context namespace).
    #[arg(long)]
    cluster_namespace: Option<String>,
    /// The namespace the agent runs in and keeps its secrets and inventories in.
    #[arg(long, default_value = "cattle-fleet-system")]
    namespace: String,
    /// The agent scope, as Fleet's agent reads it from `AGENT_SCOPE` (the controller sets it on the agents it
    /// installs into a non-default `agentNamespace`); set it for a second agent on the same cluster.
    #[arg(long, env = "AGENT_SCOPE", default_value = "")]
    scope: String,
    /// The clientID to register with (default: the kube-system namespace UID).
    #[arg(long)]
    client_id: Option<String>,
    /// Seconds between observations of deployed BundleDeployments (readiness and drift).
    #[arg(long, default_value_t = 60)]
    monitor_interval: u64,
    /// The Cluster on the hub to check in on, as `<namespace>/<name>` (e.g. `fleet-local/local`), when
    /// `--hub-kubeconfig` is given; a registered agent knows it from its registration.
    #[arg(long, value_parser = parse_cluster)]
    cluster: Option<fleet_agent::heartbeat::ClusterRef>,
    /// How often the agent checks in on its Cluster, as a Go duration (Fleet's `agentCheckinInterval`,
    /// `CHECKIN_INTERVAL` in Fleet's agent). The hub marks a cluster unhealthy after three intervals
    /// without a check-in, so use the same value as the hub's chart.
    #[arg(long, env = "CHECKIN_INTERVAL", default_value = "15m", value_parser = parse_duration)]
    checkin_interval: Duration,
    /// Serve `/metrics`, `/healthz` and `/readyz` on this address.
    #[arg(long, default_value = "0.0.0.0:8081")]
    metrics_addr: SocketAddr,
    /// Log line format; `RUST_LOG` sets the level (default `info`).
    #[arg(long, value_enum, default_value = "json")]
    log_format: super::logging::LogFormat,
}

fn parse_cluster(text: &str) -> Result<fleet_agent::heartbeat::ClusterRef, String> {
    match text.split_once('/') {
        Some((namespace, name))
            if !namespace.is_empty() && !name.is_empty() && !name.contains('/') =>
        {
            Ok(fleet_agent::heartbeat::ClusterRef {
                namespace: namespace.to_string(),
                name: name.to_string(),
            })
        }
        _ => Err(format!("{text:?} is not <namespace>/<name>")),
    }
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    fleet_controller::gitrepo::poll::parse_go_duration(text)
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{text:?} is not a positive duration such as 15m or 30s"))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    super::logging::init(args.log_format);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(run_agent(args))
}

async fn config_from(path: &Path) -> anyhow::Result<kube::Config> {
    let kubeconfig =
        Kubeconfig::read_from(path).with_context(|| format!("reading {}", path.display()))?;
    kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .with_context(|| format!("{}: not a usable kubeconfig", path.display()))
}

async fn run_agent(args: Args) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(args.metrics_addr)
        .await
        .with_context(|| format!("listening on {}", args.metrics_addr))?;
    tokio::spawn(async move {
        if let Err(err) = fleet_agent::metrics::serve(listener).await {
            tracing::error!(error = %err, "metrics server failed");
        }
    });
    let downstream_config = match &args.kubeconfig {
        Some(path) => config_from(path).await?,
        None => kube::Config::infer()
            .await
            .context("finding the downstream cluster (KUBECONFIG or in-cluster)")?,
    };
    let downstream = Downstream::from_config(downstream_config)?;
    if let Some(path) = &args.hub_kubeconfig {
        let hub_config = config_from(path).await?;
        let namespace = args
            .cluster_namespace
            .clone()
            .unwrap_or_else(|| hub_config.default_namespace.clone());
        let hub =
            fleet_agent::metrics::client(hub_config, "hub").context("building the hub client")?;
        fleet_agent::metrics::global().set_ready(true);
        Agent::new(
            agent_config(&args, hub, namespace, args.cluster.clone()),
            downstream,
        )
        .run()
        .await?;
        return Ok(());
    }
    loop {
        let (hub, credentials) = connect(&args, &downstream).await?;
        fleet_agent::metrics::global().set_ready(true);
        let namespace = args
            .cluster_namespace
            .clone()
            .unwrap_or(credentials.deployment_namespace);
        let config = agent_config(&args, hub, namespace, Some(credentials.cluster));
        match Agent::new(config, downstream.clone()).run().await {
            Err(fleet_agent::Error::Revoked(message)) => {
                tracing::error!(%message, "credentials revoked; waiting for a new fleet-agent-bootstrap secret to register again");
                while registration::bootstrap(downstream.client(), &args.namespace)
                    .await?
                    .is_none()
                {
                    tokio::time::sleep(Duration::from_secs(10)).await;
                }
            }
            other => return other.map_err(Into::into),
        }
    }
}

async fn connect(
    args: &Args,
    downstream: &Downstream,
) -> anyhow::Result<(kube::Client, registration::Credentials)> {
    // The chart's ConfigMap `fleet-agent` sets the Cluster's labels and the clientID; --client-id wins.
    let settings = registration::Settings::load(downstream.client(), &args.namespace).await?;
    let client_id = args
        .client_id
        .clone()
        .or_else(|| Some(settings.client_id).filter(|id| !id.is_empty()));
    registration::connect(
        downstream.client(),
        &args.namespace,
        client_id.as_deref(),
        settings.labels,
        Duration::from_secs(30 * 60),
        settings.tls_mode,
    )
    .await
    .context("registering with the hub")
}

fn agent_config(
    args: &Args,
    hub: kube::Client,
    cluster_namespace: String,
    cluster: Option<fleet_agent::heartbeat::ClusterRef>,
) -> AgentConfig {
    let scope = Scope::new(args.namespace.clone(), args.scope.clone());
    let mut config = AgentConfig::new(hub, cluster_namespace, scope);
    config.monitor_interval = Duration::from_secs(args.monitor_interval.max(1));
    config.cluster = cluster;
    config.checkin_interval = args.checkin_interval;
    tracing::info!(
        namespace = %args.namespace,
        scope = %args.scope,
        cluster_namespace = %config.cluster_namespace,
        cluster = ?config.cluster,
        checkin_interval = ?config.checkin_interval,
        "agent starting"
    );
    config
}
