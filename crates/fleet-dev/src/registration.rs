//! The real registration token flow, as an operator runs it: a ClusterRegistrationToken on the hub, whose
//! values Secret (written by the controller) becomes the `fleet-agent-bootstrap` Secret on the downstream
//! cluster, from which the agent registers and receives its granted credentials.

use std::collections::BTreeMap;
use std::time::Duration;

use fleet_agent::registration::{self, BOOTSTRAP_SECRET, Credentials};
use fleet_agent::tls::TlsMode;
use fleet_api::ClusterRegistrationToken;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use serde_json::json;

use crate::error::{Error, Result};
use crate::hub::{create_or_keep, ensure_namespace};

/// How long registration steps may take before dev mode gives up.
const REGISTRATION_TIMEOUT: Duration = Duration::from_secs(120);

/// The fleet-agent values of a registration token (they hold a token: never logged).
#[derive(Clone)]
pub struct AgentValues(BTreeMap<String, String>);

impl std::fmt::Debug for AgentValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentValues").finish_non_exhaustive()
    }
}

/// Creates the ClusterRegistrationToken `name` in `namespace` on the hub and waits for its values.
pub async fn token_values(hub: &kube::Client, namespace: &str, name: &str) -> Result<AgentValues> {
    let token: ClusterRegistrationToken = serde_json::from_value(json!({
        "apiVersion": fleet_api::API_VERSION, "kind": "ClusterRegistrationToken",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {},
    }))
    .expect("a valid ClusterRegistrationToken");
    create_or_keep(
        Api::<ClusterRegistrationToken>::namespaced(hub.clone(), namespace)
            .create(&PostParams::default(), &token)
            .await,
    )
    .map_err(|e| {
        Error::kube(
            format!("creating ClusterRegistrationToken {namespace}/{name}"),
            e,
        )
    })?;
    let secrets: Api<Secret> = Api::namespaced(hub.clone(), namespace);
    let what = format!("the values of ClusterRegistrationToken {namespace}/{name}");
    let secret = wait_for(&what, || async {
        secrets.get_opt(name).await.ok().flatten()
    })
    .await?;
    let values = secret
        .data
        .unwrap_or_default()
        .remove("values")
        .map(|v| v.0)
        .unwrap_or_default();
    let values: BTreeMap<String, serde_json::Value> =
        serde_json::from_slice(&values).map_err(|e| Error::Cluster {
            cluster: namespace.to_string(),
            message: format!("{what}: not a JSON object: {e}"),
        })?;
    Ok(AgentValues(
        values
            .into_iter()
            .map(|(k, v)| (k, v.as_str().map(str::to_string).unwrap_or_default()))
            .collect(),
    ))
}

/// Writes the bootstrap Secret made from `values` into `agent_namespace` downstream, as the fleet-agent
/// chart does, then registers with `client_id` and returns the hub client with the granted credentials.
pub async fn register(
    downstream: &kube::Client,
    agent_namespace: &str,
    values: &AgentValues,
    client_id: &str,
    labels: BTreeMap<String, String>,
) -> Result<(kube::Client, Credentials)> {
    ensure_namespace(downstream, agent_namespace).await?;
    let data: serde_json::Map<String, serde_json::Value> = [
        "apiServerURL",
        "apiServerCA",
        "token",
        "clusterNamespace",
        "systemRegistrationNamespace",
    ]
    .into_iter()
    .map(|key| {
        let value = values.0.get(key).map(String::as_str).unwrap_or_default();
        (key.to_string(), json!(encode(value)))
    })
    .collect();
    let bootstrap: Secret = serde_json::from_value(json!({
        "metadata": {"name": BOOTSTRAP_SECRET, "namespace": agent_namespace},
        "data": data,
    }))
    .expect("a valid Secret");
    create_or_keep(
        Api::<Secret>::namespaced(downstream.clone(), agent_namespace)
            .create(&PostParams::default(), &bootstrap)
            .await,
    )
    .map_err(|e| Error::kube("writing the agent bootstrap secret", e))?;
    registration::connect(
        downstream,
        agent_namespace,
        Some(client_id),
        labels,
        REGISTRATION_TIMEOUT,
        TlsMode::default(),
    )
    .await
    .map_err(|e| Error::Cluster {
        cluster: client_id.to_string(),
        message: format!("registering with the hub: {e}"),
    })
}

/// The stored credentials of an agent that registered before (to start it again after a stop).
pub async fn reconnect(
    downstream: &kube::Client,
    agent_namespace: &str,
    client_id: &str,
) -> Result<(kube::Client, Credentials)> {
    registration::connect(
        downstream,
        agent_namespace,
        Some(client_id),
        BTreeMap::new(),
        REGISTRATION_TIMEOUT,
        TlsMode::default(),
    )
    .await
    .map_err(|e| Error::Cluster {
        cluster: client_id.to_string(),
        message: format!("reconnecting to the hub: {e}"),
    })
}

/// Waits (up to the registration timeout, checking every 50 ms) for `check` to return `Some`.
async fn wait_for<T, F, Fut>(what: &str, mut check: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + REGISTRATION_TIMEOUT;
    loop {
        if let Some(found) = check().await {
            return Ok(found);
        }
        if tokio::time::Instant::now() > deadline {
            return Err(Error::Timeout {
                what: what.to_string(),
                seconds: REGISTRATION_TIMEOUT.as_secs(),
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn encode(value: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(value)
}
