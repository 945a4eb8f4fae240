//! Kubeconfig files for clients of this server (kubectl and kube-rs both read them): one cluster with the
//! server URL and, for TLS, the CA; one user with the bearer token; one context using both.

use base64::Engine;
use serde_json::{Value, json};

/// Renders a kubeconfig as YAML.
pub fn render(
    server_url: &str,
    ca_pem: Option<&str>,
    token: Option<&str>,
    namespace: &str,
) -> String {
    let mut cluster = json!({"server": server_url});
    if let Some(ca) = ca_pem {
        cluster["certificate-authority-data"] =
            json!(base64::engine::general_purpose::STANDARD.encode(ca));
    }
    let user = match token {
        Some(token) => json!({"token": token}),
        None => json!({}),
    };
    let config: Value = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "fleet", "cluster": cluster}],
        "users": [{"name": "fleet-admin", "user": user}],
        "contexts": [{"name": "fleet", "context": {"cluster": "fleet", "user": "fleet-admin", "namespace": namespace}}],
        "current-context": "fleet",
        "preferences": {},
    });
    // JSON is valid YAML, and every kubeconfig reader accepts it; keeping one writer avoids a YAML emitter here.
    serde_json::to_string_pretty(&config).unwrap_or_default() + "\n"
}
