//! How the agent trusts the hub's certificate: Fleet's `agentTLSMode` (ConfigMap `fleet-agent`, key `config`,
//! written by the fleet-agent chart and by the controller for the agents it installs). In `system-store`
//! (Fleet's default) the operating system's trust store is used when it verifies the hub, and the hub's
//! `apiServerCA` only when it does not; in `strict` only `apiServerCA` is trusted. As in Fleet's agent, the
//! choice is made when the agent registers and kept in the credentials it stores.

use std::time::Duration;

use crate::error::{Error, Result};

/// Fleet's `agentTLSMode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TlsMode {
    /// `system-store`: the system's trust store if it verifies the hub, else `apiServerCA`.
    #[default]
    SystemStore,
    /// `strict`: only `apiServerCA`.
    Strict,
}

impl TlsMode {
    /// Reads the setting; empty means the default. `source` names where it was read in errors.
    pub fn parse(text: &str, source: &str) -> Result<TlsMode> {
        match text.trim() {
            "" | "system-store" => Ok(TlsMode::SystemStore),
            "strict" => Ok(TlsMode::Strict),
            other => Err(Error::Content {
                name: source.to_string(),
                message: format!("agentTLSMode {other:?} is none of \"strict\", \"system-store\""),
            }),
        }
    }
}

/// How long the probe of the system trust store may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether the hub at `url` is verified by the system trust store: any HTTP answer (even 401) over a
/// verified connection counts, as in Fleet's agent.
async fn system_store_verifies(url: &str) -> bool {
    let Ok(uri) = url.parse() else {
        return false;
    };
    let mut config = kube::Config::new(uri);
    config.connect_timeout = Some(PROBE_TIMEOUT);
    config.read_timeout = Some(PROBE_TIMEOUT);
    let Ok(client) = kube::Client::try_from(config) else {
        return false;
    };
    match client.apiserver_version().await {
        Ok(_) | Err(kube::Error::Api(_)) => true,
        Err(err) => {
            tracing::debug!(error = %err, url, "the system trust store does not verify the hub");
            false
        }
    }
}

/// The CA (PEM) to put into the agent's hub kubeconfig: empty for the system trust store. `source` names
/// the setting's origin in errors.
pub async fn hub_ca(mode: TlsMode, url: &str, api_server_ca: &str, source: &str) -> Result<String> {
    match mode {
        TlsMode::Strict if api_server_ca.trim().is_empty() => Err(Error::Content {
            name: source.to_string(),
            message: "agentTLSMode strict trusts only apiServerCA, which is empty".to_string(),
        }),
        TlsMode::Strict => Ok(api_server_ca.to_string()),
        TlsMode::SystemStore if api_server_ca.trim().is_empty() => Ok(String::new()),
        TlsMode::SystemStore => {
            if system_store_verifies(url).await {
                tracing::info!(
                    url,
                    "the system trust store verifies the hub; apiServerCA is not used"
                );
                Ok(String::new())
            } else {
                Ok(api_server_ca.to_string())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_are_read_as_fleet_names_them() {
        assert_eq!(TlsMode::parse("", "cm").unwrap(), TlsMode::SystemStore);
        assert_eq!(
            TlsMode::parse("system-store", "cm").unwrap(),
            TlsMode::SystemStore
        );
        assert_eq!(TlsMode::parse("strict", "cm").unwrap(), TlsMode::Strict);
        let err = TlsMode::parse("lax", "configmap x/fleet-agent")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("configmap x/fleet-agent") && err.contains("\"lax\""),
            "{err}"
        );
    }

    #[tokio::test]
    async fn strict_trusts_only_the_configured_ca() {
        let ca = "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n";
        // No request is made: strict never consults the system store.
        assert_eq!(
            hub_ca(TlsMode::Strict, "https://127.0.0.1:1", ca, "s")
                .await
                .unwrap(),
            ca
        );
        let err = hub_ca(TlsMode::Strict, "https://127.0.0.1:1", "", "secret b")
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("secret b") && err.contains("strict"), "{err}");
        // A hub the system store cannot reach or verify keeps its CA in system-store mode.
        assert_eq!(
            hub_ca(TlsMode::SystemStore, "https://127.0.0.1:1", ca, "s")
                .await
                .unwrap(),
            ca
        );
    }
}
