//! The manager configuration Fleet's chart renders into the ConfigMap `fleet-controller` (key `config`, a JSON
//! document) in the controller's namespace, as far as this controller reads it: the hub address agents are
//! given (`apiServerURL`, `apiServerCA`), how often agents check in (`agentCheckinInterval`), from which the
//! heartbeat timeout follows, and the agent image the controller installs downstream (`agentImage`,
//! `agentImagePullPolicy`, `systemDefaultRegistry`) with how it trusts the hub (`agentTLSMode`). A missing
//! ConfigMap means Fleet's defaults.

use std::time::Duration;

use base64::Engine;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::gitrepo::poll::parse_go_duration;
use crate::placement::PlacementSettings;

/// The ConfigMap (and its key) holding the manager configuration.
pub const CONFIG_MAP: &str = "fleet-controller";
pub const CONFIG_KEY: &str = "config";
/// Fleet's default check-in interval (`agentCheckinInterval: 15m`).
pub const DEFAULT_CHECKIN_INTERVAL: Duration = Duration::from_secs(15 * 60);
/// A cluster is unhealthy after this many check-in intervals without a check-in (one missed check-in is
/// not enough: a slow hub or an agent restart would taint a healthy cluster).
pub const HEARTBEAT_INTERVALS: u32 = 3;

/// What the controller reads of Fleet's manager configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagerConfig {
    /// The hub's API server URL written into registration values.
    pub api_server_url: String,
    /// The hub's CA (PEM) written into registration values; empty when the hub's certificate is signed by a
    /// well-known CA.
    pub api_server_ca: String,
    /// How often agents check in.
    pub agent_checkin_interval: Duration,
    /// `agentCheckinInterval` as written (a Go duration), empty when unset: passed on to installed agents.
    pub agent_checkin_interval_text: String,
    /// `agentImage`, with its registry; empty means the controller's own image.
    pub agent_image: String,
    /// `agentImagePullPolicy`.
    pub agent_image_pull_policy: String,
    /// `systemDefaultRegistry`: the registry already on `agentImage`.
    pub system_default_registry: String,
    /// `agentTLSMode` (`system-store` or `strict`), given to the agents the controller installs.
    pub agent_tls_mode: String,
}

impl Default for ManagerConfig {
    fn default() -> Self {
        ManagerConfig {
            api_server_url: String::new(),
            api_server_ca: String::new(),
            agent_checkin_interval: DEFAULT_CHECKIN_INTERVAL,
            agent_checkin_interval_text: String::new(),
            agent_image: String::new(),
            agent_image_pull_policy: String::new(),
            system_default_registry: String::new(),
            agent_tls_mode: AGENT_TLS_MODES[0].to_string(),
        }
    }
}

/// The values of `agentTLSMode`, Fleet's default first.
pub const AGENT_TLS_MODES: [&str; 2] = ["system-store", "strict"];

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Raw {
    #[serde(default, rename = "apiServerURL")]
    api_server_url: String,
    #[serde(default, rename = "apiServerCA")]
    api_server_ca: String,
    #[serde(default)]
    agent_checkin_interval: String,
    #[serde(default)]
    agent_image: String,
    #[serde(default)]
    agent_image_pull_policy: String,
    #[serde(default)]
    system_default_registry: String,
    #[serde(default, rename = "agentTLSMode")]
    agent_tls_mode: String,
}

impl ManagerConfig {
    /// Parses the `config` key. `source` names the ConfigMap in errors.
    pub fn parse(text: &str, source: &str) -> Result<ManagerConfig> {
        let invalid =
            |message: String| Error::invalid(source, format!("key {CONFIG_KEY}: {message}"));
        let raw: Raw = serde_json::from_str(text).map_err(|err| invalid(err.to_string()))?;
        // Fleet's chart writes the CA base64-encoded (`b64enc .Values.apiServerCA`), which Fleet's Go config
        // decodes as a []byte field; a PEM written as it is is accepted too.
        let ca = raw.api_server_ca.trim();
        let api_server_ca = if ca.is_empty() || ca.starts_with("-----BEGIN") {
            ca.to_string()
        } else {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(ca)
                .map_err(|err| invalid(format!("apiServerCA is neither PEM nor base64: {err}")))?;
            String::from_utf8(bytes).map_err(|_| invalid("apiServerCA is not text".into()))?
        };
        let agent_checkin_interval = match raw.agent_checkin_interval.trim() {
            "" => DEFAULT_CHECKIN_INTERVAL,
            text => parse_go_duration(text)
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    invalid(format!(
                        "agentCheckinInterval {text:?} is not a positive duration"
                    ))
                })?,
        };
        let agent_tls_mode = match raw.agent_tls_mode.trim() {
            "" => AGENT_TLS_MODES[0].to_string(),
            mode => mode.to_string(),
        };
        Ok(ManagerConfig {
            agent_tls_mode,
            api_server_url: raw.api_server_url.trim().to_string(),
            api_server_ca,
            agent_checkin_interval,
            agent_checkin_interval_text: raw.agent_checkin_interval.trim().to_string(),
            agent_image: raw.agent_image,
            agent_image_pull_policy: raw.agent_image_pull_policy,
            system_default_registry: raw.system_default_registry,
        })
    }

    /// Reads the ConfigMap in `system_namespace`; Fleet's defaults when it does not exist.
    pub async fn load(client: &kube::Client, system_namespace: &str) -> Result<ManagerConfig> {
        let Some(map) = Api::<ConfigMap>::namespaced(client.clone(), system_namespace)
            .get_opt(CONFIG_MAP)
            .await?
        else {
            return Ok(ManagerConfig::default());
        };
        let text = map
            .data
            .unwrap_or_default()
            .remove(CONFIG_KEY)
            .unwrap_or_default();
        if text.trim().is_empty() {
            return Ok(ManagerConfig::default());
        }
        Self::parse(&text, &format!("ConfigMap {system_namespace}/{CONFIG_MAP}"))
    }

    /// `agentTLSMode`, checked: only the agents the controller installs use it, so a bad value fails
    /// their import (naming the ConfigMap and field), not registration or membership.
    pub fn checked_agent_tls_mode(&self, source: &str) -> Result<String> {
        if AGENT_TLS_MODES.contains(&self.agent_tls_mode.as_str()) {
            return Ok(self.agent_tls_mode.clone());
        }
        Err(Error::invalid(
            source,
            format!(
                "key {CONFIG_KEY}: agentTLSMode {:?} is none of \"strict\", \"system-store\"",
                self.agent_tls_mode
            ),
        ))
    }

    /// Membership limits that agree with the check-in interval: a cluster is unhealthy (and tainted
    /// unreachable) after [`HEARTBEAT_INTERVALS`] intervals without a check-in.
    pub fn placement_settings(&self) -> PlacementSettings {
        let timeout = self.agent_checkin_interval * HEARTBEAT_INTERVALS;
        PlacementSettings {
            heartbeat_timeout: timeout,
            unhealthy_grace: timeout,
            ..PlacementSettings::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fleet_chart_config_is_read_with_a_base64_ca() {
        let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        let encoded = base64::engine::general_purpose::STANDARD.encode(pem);
        let text = format!(
            r#"{{"apiServerURL": "https://hub.example.com:6443", "apiServerCA": "{encoded}",
               "agentCheckinInterval": "2m", "agentTLSMode": "system-store"}}"#
        );
        let config = ManagerConfig::parse(&text, "cm").unwrap();
        assert_eq!(config.api_server_url, "https://hub.example.com:6443");
        assert_eq!(config.api_server_ca, pem);
        assert_eq!(config.agent_checkin_interval, Duration::from_secs(120));
        assert_eq!(
            config.placement_settings().heartbeat_timeout,
            Duration::from_secs(360)
        );
        assert_eq!(config.agent_tls_mode, "system-store");
        let strict = ManagerConfig::parse(r#"{"agentTLSMode": "strict"}"#, "cm").unwrap();
        assert_eq!(strict.agent_tls_mode, "strict");
        let lax = ManagerConfig::parse(r#"{"agentTLSMode": "lax"}"#, "cm").unwrap();
        let err = lax.checked_agent_tls_mode("cm").unwrap_err().to_string();
        assert!(
            err.contains("cm") && err.contains("agentTLSMode \"lax\""),
            "{err}"
        );
    }

    #[test]
    fn defaults_are_fleets_and_the_timeout_outlasts_a_check_in() {
        let config = ManagerConfig::parse("{}", "cm").unwrap();
        assert_eq!(config.agent_checkin_interval, Duration::from_secs(900));
        assert!(config.placement_settings().heartbeat_timeout > config.agent_checkin_interval);
        let pem = ManagerConfig::parse(
            r#"{"apiServerCA": "-----BEGIN CERTIFICATE-----\nx\n"}"#,
            "cm",
        )
        .unwrap();
        assert!(pem.api_server_ca.starts_with("-----BEGIN"));
    }

    #[test]
    fn a_bad_interval_names_the_config_map_and_field() {
        let err = ManagerConfig::parse(
            r#"{"agentCheckinInterval": "soon"}"#,
            "ConfigMap x/fleet-controller",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("ConfigMap x/fleet-controller"), "{err}");
        assert!(err.contains("agentCheckinInterval"), "{err}");
    }
}
