//! Agent-initiated registration (Fleet's `register.go`): from the bootstrap Secret `fleet-agent-bootstrap`
//! in the agent's namespace (hub URL and CA, a registration token, the registration and system registration
//! namespaces) the agent creates a `ClusterRegistration` (`generateName: request-`, its clientID and a fresh
//! clientRandom), waits until the hub grants it by writing the Secret `c-<sha256(clientID‖clientRandom)>` in the
//! system registration namespace, stores the granted credentials as a kubeconfig in the Secret `fleet-agent`,
//! and deletes the bootstrap Secret. The clientID comes from the config or the `kube-system` namespace UID.
//! Secrets' values never appear in errors or logs.

use std::collections::BTreeMap;
use std::time::Duration;

use fleet_api::ClusterRegistration;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};

use crate::error::{Error, Result, is_not_found};
use crate::heartbeat::ClusterRef;
use crate::tls::{TlsMode, hub_ca};

/// The Secret a registration starts from.
pub const BOOTSTRAP_SECRET: &str = "fleet-agent-bootstrap";
/// The Secret holding the granted credentials.
pub const CREDENTIALS_SECRET: &str = "fleet-agent";

/// What the bootstrap Secret says.
#[derive(Clone, PartialEq, Eq)]
pub struct Bootstrap {
    pub api_server_url: String,
    pub api_server_ca: String,
    pub token: String,
    /// Where the ClusterRegistration is created (the Clusters' namespace on the hub).
    pub cluster_namespace: String,
    /// Where the hub writes the grant.
    pub system_registration_namespace: String,
}

/// The granted identity of this agent on the hub.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// A kubeconfig for the hub, with the granted token and the cluster namespace as its namespace.
    pub kubeconfig: String,
    /// The cluster namespace holding this cluster's BundleDeployments.
    pub deployment_namespace: String,
    /// The Cluster object representing this cluster.
    pub cluster: ClusterRef,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("deployment_namespace", &self.deployment_namespace)
            .field("cluster", &self.cluster)
            .finish_non_exhaustive()
    }
}

/// Name of the grant Secret for a registration (Fleet's naming rule, shared with the controller).
pub use fleet_bundle::names::grant_secret_name;

/// The clientID: the configured one, else the UID of the `kube-system` namespace.
pub async fn client_id(downstream: &kube::Client, configured: Option<&str>) -> Result<String> {
    if let Some(id) = configured.filter(|id| !id.is_empty()) {
        return Ok(id.to_string());
    }
    let api: Api<Namespace> = Api::all(downstream.clone());
    let ns = api
        .get("kube-system")
        .await
        .map_err(|err| Error::kube("reading the kube-system namespace for the clientID", err))?;
    Ok(ns.metadata.uid.unwrap_or_default())
}

fn text(data: &BTreeMap<String, ByteString>, key: &str) -> String {
    data.get(key)
        .map(|b| String::from_utf8_lossy(&b.0).into_owned())
        .unwrap_or_default()
}

fn secret_error(name: &str, message: &str) -> Error {
    Error::Content {
        name: format!("secret {name}"),
        message: message.to_string(),
    }
}

/// The data of the Secret `name` in the agent's namespace downstream, `None` when there is none; errors call
/// it the `what` secret.
async fn read_secret(
    downstream: &kube::Client,
    agent_namespace: &str,
    name: &str,
    what: &str,
) -> Result<Option<BTreeMap<String, ByteString>>> {
    let api: Api<Secret> = Api::namespaced(downstream.clone(), agent_namespace);
    let secret = api
        .get_opt(name)
        .await
        .map_err(|err| Error::kube(format!("reading the {what} secret"), err))?;
    Ok(secret.map(|secret| secret.data.unwrap_or_default()))
}

/// Reads the bootstrap Secret, if there is one.
pub async fn bootstrap(
    downstream: &kube::Client,
    agent_namespace: &str,
) -> Result<Option<Bootstrap>> {
    let Some(data) =
        read_secret(downstream, agent_namespace, BOOTSTRAP_SECRET, "bootstrap").await?
    else {
        return Ok(None);
    };
    let bootstrap = Bootstrap {
        api_server_url: text(&data, "apiServerURL"),
        api_server_ca: text(&data, "apiServerCA"),
        token: text(&data, "token"),
        cluster_namespace: text(&data, "clusterNamespace"),
        system_registration_namespace: text(&data, "systemRegistrationNamespace"),
    };
    for (key, value) in [
        ("apiServerURL", &bootstrap.api_server_url),
        ("token", &bootstrap.token),
        ("clusterNamespace", &bootstrap.cluster_namespace),
        (
            "systemRegistrationNamespace",
            &bootstrap.system_registration_namespace,
        ),
    ] {
        if value.is_empty() {
            return Err(secret_error(
                BOOTSTRAP_SECRET,
                &format!("key {key} is missing or empty"),
            ));
        }
    }
    Ok(Some(bootstrap))
}

/// A kubeconfig (YAML) for the hub.
pub fn kubeconfig(url: &str, ca_pem: &str, token: &str, namespace: &str) -> String {
    use base64::Engine;
    let ca = if ca_pem.is_empty() {
        String::new()
    } else {
        format!(
            "    certificate-authority-data: {}\n",
            base64::engine::general_purpose::STANDARD.encode(ca_pem)
        )
    };
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: hub\n  cluster:\n    server: {url}\n{ca}contexts:\n- name: hub\n  context:\n    cluster: hub\n    user: agent\n    namespace: {namespace}\ncurrent-context: hub\nusers:\n- name: agent\n  user:\n    token: {token}\n"
    )
}

/// A kube client from a kubeconfig text.
pub async fn client_from_kubeconfig(text: &str) -> Result<kube::Client> {
    let invalid = |message: String| secret_error(CREDENTIALS_SECRET, &message);
    let kubeconfig = kube::config::Kubeconfig::from_yaml(text)
        .map_err(|err| invalid(format!("kubeconfig: {err}")))?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .map_err(|err| invalid(format!("kubeconfig: {err}")))?;
    crate::metrics::client(config, "hub").map_err(|err| Error::kube("building the hub client", err))
}

/// The stored credentials, if the agent registered before.
pub async fn credentials(
    downstream: &kube::Client,
    agent_namespace: &str,
) -> Result<Option<Credentials>> {
    let Some(data) = read_secret(
        downstream,
        agent_namespace,
        CREDENTIALS_SECRET,
        "credentials",
    )
    .await?
    else {
        return Ok(None);
    };
    Ok(Some(Credentials {
        kubeconfig: text(&data, "kubeconfig"),
        deployment_namespace: text(&data, "deploymentNamespace"),
        cluster: ClusterRef {
            namespace: text(&data, "clusterNamespace"),
            name: text(&data, "clusterName"),
        },
    }))
}

/// Registers with the hub named in the bootstrap Secret and stores the granted credentials; gives up after
/// `timeout` (Fleet waits 30 minutes).
pub async fn register(
    downstream: &kube::Client,
    agent_namespace: &str,
    bootstrap: &Bootstrap,
    client_id: &str,
    cluster_labels: BTreeMap<String, String>,
    timeout: Duration,
    tls: TlsMode,
) -> Result<Credentials> {
    let ca = hub_ca(
        tls,
        &bootstrap.api_server_url,
        &bootstrap.api_server_ca,
        &format!("secret {agent_namespace}/{BOOTSTRAP_SECRET}"),
    )
    .await?;
    let import_config = kubeconfig(
        &bootstrap.api_server_url,
        &ca,
        &bootstrap.token,
        &bootstrap.cluster_namespace,
    );
    let hub = client_from_kubeconfig(&import_config).await?;
    let client_random = hex::encode(rand::random::<[u8; 32]>());
    let registration: ClusterRegistration = serde_json::from_value(serde_json::json!({
        "apiVersion": fleet_api::API_VERSION,
        "kind": "ClusterRegistration",
        "metadata": {"generateName": "request-", "namespace": bootstrap.cluster_namespace},
        "spec": {"clientID": client_id, "clientRandom": client_random, "clusterLabels": cluster_labels},
    }))
    .expect("a valid ClusterRegistration");
    let registrations: Api<ClusterRegistration> =
        Api::namespaced(hub.clone(), &bootstrap.cluster_namespace);
    registrations
        .create(&PostParams::default(), &registration)
        .await
        .map_err(|err| Error::kube("creating the ClusterRegistration on the hub", err))?;
    let grant_name = grant_secret_name(client_id, &client_random);
    let grants: Api<Secret> =
        Api::namespaced(hub.clone(), &bootstrap.system_registration_namespace);
    let deadline = tokio::time::Instant::now() + timeout;
    let grant = loop {
        match grants.get_opt(&grant_name).await {
            Ok(Some(secret)) => break secret,
            Ok(None) => {}
            Err(err) if is_not_found(&err) => {}
            Err(err) => tracing::debug!(error = %err, "waiting for the registration grant"),
        }
        if tokio::time::Instant::now() > deadline {
            return Err(secret_error(
                &grant_name,
                "the hub did not grant the registration in time",
            ));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    let data = grant.data.unwrap_or_default();
    // Every later request names these namespaces: an empty one would address no namespace at all.
    for key in [
        "token",
        "deploymentNamespace",
        "clusterNamespace",
        "clusterName",
    ] {
        if text(&data, key).is_empty() {
            return Err(secret_error(
                &grant_name,
                &format!("key {key} is missing or empty"),
            ));
        }
    }
    let credentials = Credentials {
        kubeconfig: kubeconfig(
            &bootstrap.api_server_url,
            &ca,
            &text(&data, "token"),
            &text(&data, "deploymentNamespace"),
        ),
        deployment_namespace: text(&data, "deploymentNamespace"),
        cluster: ClusterRef {
            namespace: text(&data, "clusterNamespace"),
            name: text(&data, "clusterName"),
        },
    };
    store(downstream, agent_namespace, &credentials).await?;
    let secrets: Api<Secret> = Api::namespaced(downstream.clone(), agent_namespace);
    match secrets
        .delete(BOOTSTRAP_SECRET, &DeleteParams::default())
        .await
    {
        Ok(_) => {}
        Err(err) if is_not_found(&err) => {}
        Err(err) => return Err(Error::kube("deleting the bootstrap secret", err)),
    }
    Ok(credentials)
}

async fn store(
    downstream: &kube::Client,
    agent_namespace: &str,
    credentials: &Credentials,
) -> Result<()> {
    let secrets: Api<Secret> = Api::namespaced(downstream.clone(), agent_namespace);
    let body = serde_json::json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": CREDENTIALS_SECRET, "namespace": agent_namespace},
        "data": {
            "kubeconfig": encode(&credentials.kubeconfig),
            "deploymentNamespace": encode(&credentials.deployment_namespace),
            "clusterNamespace": encode(&credentials.cluster.namespace),
            "clusterName": encode(&credentials.cluster.name),
        },
    });
    secrets
        .patch(
            CREDENTIALS_SECRET,
            &PatchParams::apply("fleet-agent").force(),
            &Patch::Apply(body),
        )
        .await
        .map_err(|err| Error::kube("writing the credentials secret", err))?;
    Ok(())
}

/// The hub connection of an agent: the stored credentials, or a new registration from the bootstrap Secret
/// when there are none. Returns the hub client and the credentials. Trusts the hub's certificate as `tls`
/// (Fleet's `agentTLSMode`) says.
pub async fn connect(
    downstream: &kube::Client,
    agent_namespace: &str,
    configured_client_id: Option<&str>,
    cluster_labels: BTreeMap<String, String>,
    timeout: Duration,
    tls: TlsMode,
) -> Result<(kube::Client, Credentials)> {
    let credentials = match credentials(downstream, agent_namespace).await? {
        Some(credentials) if bootstrap(downstream, agent_namespace).await?.is_none() => credentials,
        // A bootstrap Secret next to credentials means re-registration was asked for (revoked credentials).
        _ => {
            let Some(bootstrap) = bootstrap(downstream, agent_namespace).await? else {
                return Err(secret_error(
                    BOOTSTRAP_SECRET,
                    &format!(
                        "neither {CREDENTIALS_SECRET} nor {BOOTSTRAP_SECRET} exists in {agent_namespace}"
                    ),
                ));
            };
            let id = client_id(downstream, configured_client_id).await?;
            register(
                downstream,
                agent_namespace,
                &bootstrap,
                &id,
                cluster_labels,
                timeout,
                tls,
            )
            .await?
        }
    };
    let hub = client_from_kubeconfig(&credentials.kubeconfig).await?;
    Ok((hub, credentials))
}

/// The registration settings of the ConfigMap `fleet-agent` (key `config`, JSON) in the agent's namespace, as
/// Fleet's agent chart writes them: the Cluster's labels, the clientID and the `agentTLSMode`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default, rename = "clientID")]
    pub client_id: String,
    /// How the hub's certificate is trusted ([`TlsMode`]).
    #[serde(skip)]
    pub tls_mode: TlsMode,
}

#[derive(serde::Deserialize)]
struct RawTlsMode {
    #[serde(default, rename = "agentTLSMode")]
    agent_tls_mode: String,
}

/// The ConfigMap holding [`Settings`].
pub const SETTINGS_CONFIG_MAP: &str = "fleet-agent";

impl Settings {
    /// Parses the ConfigMap's `config` key; errors name the ConfigMap and key.
    pub fn parse(text: &str, agent_namespace: &str) -> Result<Settings> {
        let name = format!("configmap {agent_namespace}/{SETTINGS_CONFIG_MAP}");
        let invalid = |err: serde_json::Error| Error::Content {
            name: name.clone(),
            message: format!("key config: {err}"),
        };
        let mut settings: Settings = serde_json::from_str(text).map_err(invalid)?;
        let raw: RawTlsMode = serde_json::from_str(text).map_err(invalid)?;
        settings.tls_mode = TlsMode::parse(&raw.agent_tls_mode, &format!("{name}: key config"))?;
        Ok(settings)
    }

    /// Reads the settings; the defaults when the ConfigMap or its key is missing.
    pub async fn load(downstream: &kube::Client, agent_namespace: &str) -> Result<Settings> {
        use k8s_openapi::api::core::v1::ConfigMap;
        let api: Api<ConfigMap> = Api::namespaced(downstream.clone(), agent_namespace);
        let map = api
            .get_opt(SETTINGS_CONFIG_MAP)
            .await
            .map_err(|err| Error::kube("reading the fleet-agent configmap", err))?;
        match map
            .and_then(|m| m.data)
            .and_then(|mut d| d.remove("config"))
        {
            Some(text) if !text.trim().is_empty() => Settings::parse(&text, agent_namespace),
            _ => Ok(Settings::default()),
        }
    }
}

/// Secret data encoding (base64); `stringData` is not used because not every API server folds it into `data`.
fn encode(value: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_read_as_fleets_chart_writes_them() {
        let settings =
            Settings::parse(r#"{"labels": {"env": "prod"}, "clientID": "c-1"}"#, "ns").unwrap();
        assert_eq!(settings.labels.get("env").map(String::as_str), Some("prod"));
        assert_eq!(settings.client_id, "c-1");
        assert_eq!(settings.tls_mode, TlsMode::SystemStore);
        let strict =
            Settings::parse(r#"{"clientID": "", "agentTLSMode": "strict"}"#, "ns").unwrap();
        assert_eq!(strict.tls_mode, TlsMode::Strict);
        let err = Settings::parse(r#"{"agentTLSMode": "none"}"#, "ns")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ns/fleet-agent") && err.contains("agentTLSMode"),
            "{err}"
        );
        let err = Settings::parse("{", "cattle-fleet-system")
            .unwrap_err()
            .to_string();
        assert!(err.contains("cattle-fleet-system/fleet-agent"), "{err}");
    }

    #[test]
    fn credentials_never_print_the_kubeconfig() {
        let credentials = Credentials {
            kubeconfig: "token: sekret".into(),
            deployment_namespace: "ns".into(),
            cluster: ClusterRef {
                namespace: "fleet-default".into(),
                name: "c1".into(),
            },
        };
        assert!(!format!("{credentials:?}").contains("sekret"));
    }
}
