//! A simulated downstream cluster: its own embedded API server, a Cluster object on the hub pre-created
//! with its labels and clientID (so that registration finds it by name), its agent registered through the
//! token flow, and the workload simulator. The agent can be stopped and started again (with its stored
//! credentials), which is how tests take a cluster offline. The local agent is an [`AgentRunner`] too,
//! with the hub as its downstream cluster.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fleet_agent::heartbeat::ClusterRef;
use fleet_agent::{Agent, AgentConfig, Downstream, Scope};
use fleet_api::Cluster;
use fleet_apiserver::ApiServer;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

use crate::error::{Error, Result};
use crate::hub::{FIELD_MANAGER, WORKSPACE};
use crate::registration::{self, AgentValues};
use crate::served::ServedApi;
use crate::task::Task;
use crate::workloads;

/// The agent's namespace on a downstream cluster.
pub const AGENT_NAMESPACE: &str = "cattle-fleet-system";

/// How agents in dev mode run.
#[derive(Debug, Clone, Copy)]
pub struct AgentTiming {
    /// How often deployed BundleDeployments are observed again.
    pub monitor_interval: Duration,
    /// How often the agent checks in on its Cluster (`status.agent.lastSeen`).
    pub checkin_interval: Duration,
}

/// The labels of the `index`-th cluster (1-based): `env` cycles dev, staging, prod.
pub fn labels_for(index: usize) -> BTreeMap<String, String> {
    let env = ["dev", "staging", "prod"][(index.max(1) - 1) % 3];
    BTreeMap::from([
        ("env".to_string(), env.to_string()),
        ("name".to_string(), cluster_name(index)),
    ])
}

/// `cluster-<index>`.
pub fn cluster_name(index: usize) -> String {
    format!("cluster-{index}")
}

/// One agent: how to (re)start it and the task running it now.
pub struct AgentRunner {
    downstream: kube::Client,
    agent_namespace: String,
    scope: Scope,
    client_id: String,
    timing: AgentTiming,
    factory: Downstream,
    running: Mutex<Option<Task>>,
}

impl AgentRunner {
    /// Registers through the token flow with `values` and starts the agent.
    #[allow(clippy::too_many_arguments)]
    pub async fn register_and_start(
        server: &ApiServer,
        agent_namespace: &str,
        scope: Scope,
        values: &AgentValues,
        client_id: &str,
        labels: BTreeMap<String, String>,
        timing: AgentTiming,
    ) -> Result<Self> {
        let downstream = server.client();
        let (hub, credentials) =
            registration::register(&downstream, agent_namespace, values, client_id, labels).await?;
        let runner = AgentRunner {
            downstream,
            agent_namespace: agent_namespace.to_string(),
            scope,
            client_id: client_id.to_string(),
            timing,
            factory: in_process_downstream(server),
            running: Mutex::new(None),
        };
        runner.spawn(hub, credentials.deployment_namespace, credentials.cluster);
        Ok(runner)
    }

    fn spawn(&self, hub: kube::Client, cluster_namespace: String, cluster: ClusterRef) {
        let mut config = AgentConfig::new(hub, cluster_namespace, self.scope.clone());
        config.monitor_interval = self.timing.monitor_interval;
        config.checkin_interval = self.timing.checkin_interval;
        config.retry_interval = Duration::from_millis(500);
        config.cluster = Some(cluster);
        let agent = Agent::new(config, self.factory.clone());
        let client_id = self.client_id.clone();
        let task = Task::spawn(async move {
            if let Err(err) = agent.run().await {
                tracing::error!(agent = %client_id, error = %err, "agent stopped");
            }
        });
        *self.running.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
    }

    /// Stops the agent (the downstream cluster keeps what it applied).
    pub fn stop(&self) {
        self.running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
    }

    /// Starts a stopped agent again with its stored credentials.
    pub async fn start(&self) -> Result<()> {
        let (hub, credentials) =
            registration::reconnect(&self.downstream, &self.agent_namespace, &self.client_id)
                .await?;
        self.spawn(hub, credentials.deployment_namespace, credentials.cluster);
        Ok(())
    }

    /// Whether the agent runs.
    pub fn is_running(&self) -> bool {
        self.running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }
}

/// A downstream cluster with its agent.
pub struct SimulatedCluster {
    /// The Cluster's name on the hub (`cluster-<n>`), also its kubeconfig's name.
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub api: ServedApi,
    pub agent: AgentRunner,
    _workloads: Arc<Task>,
}

impl SimulatedCluster {
    /// Starts cluster number `index` (1-based) and registers its agent with `values`.
    pub async fn start(
        hub: &kube::Client,
        index: usize,
        values: &AgentValues,
        timing: AgentTiming,
    ) -> Result<Self> {
        let name = cluster_name(index);
        let labels = labels_for(index);
        let client_id = format!("dev-{name}");
        precreate_cluster(hub, WORKSPACE, &name, &client_id, &labels).await?;
        let api = ServedApi::start().await?;
        let workloads = Arc::new(workloads::simulate(api.client()));
        let agent = AgentRunner::register_and_start(
            &api.server,
            AGENT_NAMESPACE,
            Scope::new(AGENT_NAMESPACE, ""),
            values,
            &client_id,
            labels.clone(),
            timing,
        )
        .await?;
        Ok(SimulatedCluster {
            name,
            labels,
            api,
            agent,
            _workloads: workloads,
        })
    }

    /// An admin client for this cluster (in-process).
    pub fn client(&self) -> kube::Client {
        self.api.client()
    }
}

/// Creates (or updates) the Cluster `namespace/name` with `labels` and `spec.clientID`, so the agent that
/// registers with that clientID becomes this Cluster.
pub async fn precreate_cluster(
    hub: &kube::Client,
    namespace: &str,
    name: &str,
    client_id: &str,
    labels: &BTreeMap<String, String>,
) -> Result<()> {
    let cluster = json!({
        "apiVersion": fleet_api::API_VERSION, "kind": "Cluster",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"clientID": client_id},
    });
    Api::<Cluster>::namespaced(hub.clone(), namespace)
        .patch(
            name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&cluster),
        )
        .await
        .map_err(|e| Error::kube(format!("writing Cluster {namespace}/{name}"), e))?;
    Ok(())
}

/// The downstream cluster reached in-process as the admin, impersonating a user when asked (a
/// BundleDeployment's `serviceAccount`).
fn in_process_downstream(server: &ApiServer) -> Downstream {
    let server = server.clone();
    Downstream::new(Arc::new(move |user: Option<&str>| {
        let token = server.admin_token().map(|t| format!("Bearer {t}"));
        let user = user.map(str::to_string);
        let service = tower::ServiceBuilder::new()
            .map_request(move |mut req: http::Request<kube::client::Body>| {
                if let Some(value) = token.as_ref().and_then(|t| t.parse().ok()) {
                    req.headers_mut().insert(http::header::AUTHORIZATION, value);
                }
                if let Some(value) = user.as_ref().and_then(|u| u.parse().ok()) {
                    req.headers_mut().insert("Impersonate-User", value);
                }
                req
            })
            .service(server.service());
        kube::Client::new(service, "default")
    }))
}
