//! [`Dev`]: the whole dev-mode process, started in dependency order (state dir, hub, controller, webhook
//! receiver, registration tokens, the local agent and the downstream clusters in parallel, kubeconfigs,
//! GitRepos) and stopped in reverse.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use fleet_agent::Scope;
use fleet_controller::Settings;
use fleet_controller::cluster::bootstrap::LOCAL_WORKSPACE;
use fleet_controller::placement::PlacementSettings;

use crate::cluster::{AgentRunner, AgentTiming, SimulatedCluster, precreate_cluster};
use crate::controller::{ControllerSlot, RunningController, WebhookReceiver};
use crate::data_dir::DataDir;
use crate::error::{Error, Result};
use crate::hub::{self, LOCAL_AGENT_NAMESPACE, SYSTEM_NAMESPACE, WORKSPACE};
use crate::ready::{Readiness, readiness};
use crate::repos::{self, ActiveRepo, RepoRequest};
use crate::served::ServedApi;
use crate::task::Task;
use crate::view::FleetState;
use crate::{registration, workloads};

/// Timings of dev mode.
#[derive(Debug, Clone, Copy)]
pub struct Tuning {
    /// Polling interval of GitRepos that set none.
    pub default_polling_interval: Duration,
    /// The agents' monitor and check-in intervals.
    pub agent: AgentTiming,
    /// The controller's heartbeat timeout: an agent silent for longer than this makes its Cluster's
    /// `Healthy` condition false, and dev mode shows it as not seen.
    pub not_seen_after: Duration,
    /// Quiet time after a file change before a snapshot is committed or a GitRepo triggered.
    pub debounce: Duration,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            default_polling_interval: Duration::from_secs(15),
            agent: AgentTiming {
                monitor_interval: Duration::from_secs(2),
                checkin_interval: Duration::from_secs(5),
            },
            not_seen_after: Duration::from_secs(15),
            debounce: Duration::from_millis(200),
        }
    }
}

impl Tuning {
    /// The controller's membership settings: [`Tuning::not_seen_after`] as the heartbeat timeout.
    pub fn placement(&self) -> PlacementSettings {
        PlacementSettings {
            heartbeat_timeout: self.not_seen_after,
            ..PlacementSettings::default()
        }
    }
}

/// What to start.
#[derive(Debug, Clone)]
pub struct DevOptions {
    /// Number of downstream clusters (`cluster-1` … `cluster-N`).
    pub clusters: usize,
    pub repos: Vec<RepoRequest>,
    /// The state directory (see [`DataDir`]).
    pub data_dir: PathBuf,
    pub tuning: Tuning,
}

/// A running dev mode.
pub struct Dev {
    data_dir: DataDir,
    hub: ServedApi,
    slot: Arc<ControllerSlot>,
    settings: Settings,
    controller: tokio::sync::Mutex<Option<RunningController>>,
    webhook: WebhookReceiver,
    local_agent: AgentRunner,
    clusters: Vec<SimulatedCluster>,
    repos: Vec<ActiveRepo>,
    tuning: Tuning,
    _hub_workloads: Task,
}

impl Dev {
    /// Starts everything; returns once every agent is registered and every GitRepo is created.
    pub async fn start(options: DevOptions) -> Result<Dev> {
        let data_dir = DataDir::prepare(&options.data_dir)?;
        let hub = ServedApi::start().await?;
        let hub_client = hub.client();
        hub::prepare(&hub_client, &hub.url(), &hub.ca_pem).await?;
        let hub_workloads = workloads::simulate(hub_client.clone());
        let settings = Settings {
            git_cache_dir: data_dir.git_cache(),
            default_polling_interval: options.tuning.default_polling_interval,
            system_namespace: SYSTEM_NAMESPACE.to_string(),
            ..Settings::default()
        };
        let slot = Arc::new(ControllerSlot::default());
        let controller = RunningController::start(
            hub_client.clone(),
            settings.clone(),
            options.tuning.placement(),
            slot.clone(),
        )
        .await;
        let webhook = WebhookReceiver::start(slot.clone()).await?;

        let timing = options.tuning.agent;
        let local_values =
            registration::token_values(&hub_client, LOCAL_WORKSPACE, "dev-local").await?;
        let local_labels = [("name".to_string(), "local".to_string())].into();
        precreate_cluster(
            &hub_client,
            LOCAL_WORKSPACE,
            "local",
            "dev-local",
            &local_labels,
        )
        .await?;
        let values = if options.clusters > 0 {
            Some(registration::token_values(&hub_client, WORKSPACE, "dev-clusters").await?)
        } else {
            None
        };
        let local = AgentRunner::register_and_start(
            &hub.server,
            LOCAL_AGENT_NAMESPACE,
            Scope::new(LOCAL_AGENT_NAMESPACE, LOCAL_AGENT_NAMESPACE),
            &local_values,
            "dev-local",
            local_labels.clone(),
            timing,
        );
        let downstream = futures::future::try_join_all((1..=options.clusters).map(|index| {
            let (hub_client, values) = (hub_client.clone(), values.clone());
            async move {
                let values = values.expect("values exist when there are clusters");
                SimulatedCluster::start(&hub_client, index, &values, timing).await
            }
        }));
        let (local_agent, clusters) = futures::try_join!(local, downstream)?;

        data_dir.write_kubeconfig("hub", &hub.kubeconfig())?;
        for cluster in &clusters {
            data_dir.write_kubeconfig(&cluster.name, &cluster.api.kubeconfig())?;
        }
        let mut repos = Vec::new();
        for request in &options.repos {
            repos.push(
                repos::activate(
                    request,
                    &data_dir,
                    &hub_client,
                    slot.clone(),
                    options.tuning.debounce,
                )
                .await?,
            );
        }
        Ok(Dev {
            data_dir,
            hub,
            slot,
            settings,
            controller: tokio::sync::Mutex::new(Some(controller)),
            webhook,
            local_agent,
            clusters,
            repos,
            tuning: options.tuning,
            _hub_workloads: hub_workloads,
        })
    }

    pub fn data_dir(&self) -> &DataDir {
        &self.data_dir
    }

    pub fn tuning(&self) -> &Tuning {
        &self.tuning
    }

    /// An admin client for the hub (in-process).
    pub fn hub_client(&self) -> kube::Client {
        self.hub.client()
    }

    /// The hub's URL (`https://127.0.0.1:<port>`).
    pub fn hub_url(&self) -> String {
        self.hub.url()
    }

    /// The hub's kubeconfig file.
    pub fn hub_kubeconfig(&self) -> PathBuf {
        self.data_dir.kubeconfig_path("hub")
    }

    pub fn clusters(&self) -> &[SimulatedCluster] {
        &self.clusters
    }

    /// The downstream cluster `name` (`cluster-<n>`).
    pub fn cluster(&self, name: &str) -> Result<&SimulatedCluster> {
        self.clusters
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| Error::Cluster {
                cluster: name.to_string(),
                message: "no such cluster in this dev mode".into(),
            })
    }

    /// The local agent (deploys `fleet-local` GitRepos to the hub itself).
    pub fn local_agent(&self) -> &AgentRunner {
        &self.local_agent
    }

    /// The GitRepos made from `--repo`, per argument.
    pub fn repos(&self) -> &[ActiveRepo] {
        &self.repos
    }

    /// The push-webhook receiver's URL.
    pub fn webhook_url(&self) -> String {
        self.webhook.url()
    }

    /// `namespace/name` of every Cluster dev mode runs an agent for.
    pub fn expected_clusters(&self) -> Vec<String> {
        std::iter::once(format!("{LOCAL_WORKSPACE}/local"))
            .chain(
                self.clusters
                    .iter()
                    .map(|c| format!("{WORKSPACE}/{}", c.name)),
            )
            .collect()
    }

    /// Makes GitRepo `namespace/name` fetch now (as a push webhook does); false when no controller runs.
    pub fn trigger(&self, namespace: &str, name: &str) -> bool {
        self.slot.trigger(namespace, name)
    }

    /// The hub's GitRepos, Bundles and Clusters now.
    pub async fn state(&self) -> Result<FleetState> {
        FleetState::fetch(&self.hub_client()).await
    }

    /// Whether everything is deployed now.
    pub async fn readiness(&self) -> Result<Readiness> {
        Ok(readiness(&self.state().await?, &self.expected_clusters()))
    }

    /// Waits until everything is deployed; on timeout the error lists what is still awaited.
    pub async fn wait_ready(&self, timeout: Duration) -> Result<FleetState> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let state = self.state().await?;
            let waiting = match readiness(&state, &self.expected_clusters()) {
                Readiness::Ready => return Ok(state),
                Readiness::Waiting(reasons) => reasons,
            };
            if tokio::time::Instant::now() >= deadline {
                return Err(Error::Timeout {
                    what: format!("every GitRepo to be Ready ({})", waiting.join("; ")),
                    seconds: timeout.as_secs(),
                });
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Stops the controller (in-flight reconciles finish) and starts a new one, as a restarted pod would.
    pub async fn restart_controller(&self) {
        let mut slot = self.controller.lock().await;
        if let Some(running) = slot.take() {
            running.stop().await;
        }
        *slot = Some(
            RunningController::start(
                self.hub_client(),
                self.settings.clone(),
                self.tuning.placement(),
                self.slot.clone(),
            )
            .await,
        );
    }

    /// The commands that show the hub and the clusters with kubectl.
    pub fn kubectl_hints(&self) -> Vec<String> {
        let mut hints = vec![format!(
            "kubectl --kubeconfig {} get gitrepos,bundles,clusters -A",
            self.hub_kubeconfig().display()
        )];
        for cluster in &self.clusters {
            hints.push(format!(
                "kubectl --kubeconfig {} get all -A   # {} ({})",
                self.data_dir.kubeconfig_path(&cluster.name).display(),
                cluster.name,
                cluster
                    .labels
                    .iter()
                    .filter(|(k, _)| k.as_str() != "name")
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(",")
            ));
        }
        hints
    }

    /// Stops everything: file watches, agents, the controller (letting reconciles finish), the servers.
    pub async fn shutdown(self) {
        let Dev {
            repos,
            clusters,
            local_agent,
            controller,
            webhook,
            hub,
            _hub_workloads,
            ..
        } = self;
        drop(repos);
        for cluster in &clusters {
            cluster.agent.stop();
        }
        local_agent.stop();
        if let Some(running) = controller.into_inner() {
            running.stop().await;
        }
        drop(webhook);
        drop(clusters);
        drop(_hub_workloads);
        drop(hub);
    }
}
