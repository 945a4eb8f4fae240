//! `fleet agent`: runs the downstream agent. It deploys the BundleDeployments of its cluster namespace on
//! the hub into the cluster of `--kubeconfig` (default: `KUBECONFIG`, then in-cluster), under the agent scope
//! `--scope` in `--namespace`. The hub is reached with `--hub-kubeconfig` (its context namespace is the cluster
//! namespace unless `--cluster-namespace` is given) or, without it, with the credentials in the `fleet-agent`
//! Secret, registering first from the `fleet-agent-bootstrap` Secret when there are none.

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
    /// The agent scope (Fleet's AGENT_SCOPE); set it for a second agent on the same cluster.
    #[arg(long, default_value = "")]
    scope: String,
    /// The clientID to register with (default: the kube-system namespace UID).
    #[arg(long)]
    client_id: Option<String>,
    /// Seconds between observations of deployed BundleDeployments (readiness and drift).
    #[arg(long, default_value_t = 60)]
    monitor_interval: u64,
}

pub fn run(args: Args) -> anyhow::Result<()> {
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
        let hub = kube::Client::try_from(hub_config).context("building the hub client")?;
        Agent::new(agent_config(&args, hub, namespace, None), downstream)
            .run()
            .await?;
        return Ok(());
    }
    loop {
        let (hub, credentials) = connect(&args, &downstream).await?;
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
    registration::connect(
        downstream.client(),
        &args.namespace,
        args.client_id.as_deref(),
        Default::default(),
        Duration::from_secs(30 * 60),
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
    tracing::info!(cluster_namespace = %config.cluster_namespace, "agent starting");
    config
}
