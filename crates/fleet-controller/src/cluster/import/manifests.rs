//! The objects of a fleet-agent installed by the controller into a downstream cluster (manager-initiated
//! registration). Names and labels are those of the `fleet-agent` chart and of Fleet's agent manifest: the
//! agent's Namespace, the ServiceAccount `fleet-agent`, the ClusterRole `<ns>-fleet-agent-role` and its binding
//! `<ns>-fleet-agent-role-binding` (all verbs on all resources: the agent deploys whatever bundles hold), the
//! ConfigMap `fleet-agent` (key `config`: `clientID` and `labels`), the bootstrap Secret `fleet-agent-bootstrap`
//! and the Deployment `fleet-agent` (pods labelled `app: fleet-agent`). The Cluster's agent settings
//! (`agentEnvVars`, `agentTolerations`, `agentAffinity`, `agentResources`, `privateRepoURL`, `hostNetwork`)
//! shape the Deployment as Fleet's manifest does.

use std::collections::BTreeMap;

use fleet_api::Cluster;
use fleet_bundle::names::safe_concat_name;
use serde_json::{Value, json};

/// Name of the agent's ServiceAccount, ConfigMap and Deployment.
pub const AGENT_NAME: &str = "fleet-agent";
/// The Secret an agent registers from.
pub const BOOTSTRAP_SECRET: &str = "fleet-agent-bootstrap";
/// The Secret the agent keeps its granted hub credentials in.
pub const CREDENTIALS_SECRET: &str = "fleet-agent";
/// Fleet's default agent namespace.
pub const DEFAULT_AGENT_NAMESPACE: &str = "cattle-fleet-system";
/// Label on every object the controller installs downstream.
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
/// Its value.
pub const MANAGED_BY: &str = "fleet-controller";
/// The image when the controller's configuration names none: this controller's own version.
pub const DEFAULT_IMAGE_REPOSITORY: &str = "ghcr.io/fleet-rs/fleet";

/// Controller-wide agent settings (the `fleet-controller` ConfigMap, as Fleet's `config` key holds them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct AgentDefaults {
    /// `agentImage`; empty means [`default_image`].
    pub image: String,
    /// `agentImagePullPolicy`.
    pub image_pull_policy: String,
    /// `systemDefaultRegistry`: the registry already on `image`, replaced by a Cluster's `privateRepoURL`.
    pub system_default_registry: String,
    /// `agentCheckinInterval` (a Go duration), passed to the agent as `CHECKIN_INTERVAL`.
    pub checkin_interval: String,
}

/// This controller's agent image: the one `fleet` image at the controller's own version, so that upgrading the
/// controller upgrades every agent it installed.
pub fn default_image() -> String {
    format!("{DEFAULT_IMAGE_REPOSITORY}:{}", env!("CARGO_PKG_VERSION"))
}

/// The namespace the agent of `cluster` runs in: `spec.agentNamespace`, else Fleet's default.
pub fn agent_namespace(cluster: &Cluster) -> String {
    if cluster.spec.agent_namespace.is_empty() {
        DEFAULT_AGENT_NAMESPACE.to_string()
    } else {
        cluster.spec.agent_namespace.clone()
    }
}

/// The ClusterRole (and, with `-binding`, its ClusterRoleBinding) of the agent in `namespace`.
pub fn cluster_role_name(namespace: &str) -> String {
    safe_concat_name(&[namespace, AGENT_NAME, "role"])
}

/// The ClusterRoleBinding of the agent in `namespace`.
pub fn cluster_role_binding_name(namespace: &str) -> String {
    safe_concat_name(&[namespace, AGENT_NAME, "role", "binding"])
}

/// The agent image with the Cluster's `privateRepoURL` (`prefix`) in front, unless the image already starts
/// with it; with both a prefix and a system default registry (`global`), the registry on the image is replaced
/// by the prefix. Fleet's `Resolve`: the global registry is expected on the configured image already.
pub fn resolve_image(global: &str, prefix: &str, image: &str) -> String {
    if prefix.is_empty() {
        return image.to_string();
    }
    let image = if global.is_empty() {
        image
    } else {
        image.strip_prefix(global).unwrap_or(image)
    };
    let image = image.trim_start_matches('/');
    if image.starts_with(prefix) {
        return image.to_string();
    }
    format!("{}/{image}", prefix.trim_end_matches('/'))
}

fn labels() -> Value {
    json!({"app.kubernetes.io/name": AGENT_NAME, MANAGED_BY_LABEL: MANAGED_BY})
}

/// One downstream object: its API version, kind, namespace (empty for cluster-scoped ones) and body.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    pub kind: &'static str,
    pub namespace: String,
    pub name: String,
    pub body: Value,
}

fn object(kind: &'static str, namespace: &str, name: &str, mut body: Value) -> Object {
    body["metadata"]["name"] = json!(name);
    if !namespace.is_empty() {
        body["metadata"]["namespace"] = json!(namespace);
    }
    Object {
        kind,
        namespace: namespace.to_string(),
        name: name.to_string(),
        body,
    }
}

/// The agent's objects for `cluster`, in the order they are applied; without the bootstrap Secret
/// ([`bootstrap_secret`]), which is written only when the agent is to (re-)register.
pub fn agent_objects(cluster: &Cluster, defaults: &AgentDefaults) -> Vec<Object> {
    let namespace = agent_namespace(cluster);
    let role = cluster_role_name(&namespace);
    let mut config = serde_json::Map::new();
    let cluster_labels: BTreeMap<_, _> = cluster
        .metadata
        .labels
        .clone()
        .unwrap_or_default()
        .into_iter()
        .filter(|(k, _)| !k.starts_with("objectset.rio.cattle.io/"))
        .collect();
    if !cluster_labels.is_empty() {
        config.insert("labels".into(), json!(cluster_labels));
    }
    config.insert("clientID".into(), json!(cluster.spec.client_id));
    let config = Value::Object(config).to_string();
    vec![
        object(
            "Namespace",
            "",
            &namespace,
            json!({"metadata": {"labels": labels()}}),
        ),
        object(
            "ServiceAccount",
            &namespace,
            AGENT_NAME,
            json!({"metadata": {"labels": labels()}}),
        ),
        object(
            "ClusterRole",
            "",
            &role,
            json!({"metadata": {"labels": labels()}, "rules": [
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ]}),
        ),
        object(
            "ClusterRoleBinding",
            "",
            &cluster_role_binding_name(&namespace),
            json!({"metadata": {"labels": labels()},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                "subjects": [{"kind": "ServiceAccount", "name": AGENT_NAME, "namespace": namespace}]}),
        ),
        object(
            "ConfigMap",
            &namespace,
            AGENT_NAME,
            json!({"metadata": {"labels": labels()}, "data": {"config": config}}),
        ),
        object(
            "Deployment",
            &namespace,
            AGENT_NAME,
            deployment(cluster, &namespace, defaults),
        ),
    ]
}

fn deployment(cluster: &Cluster, namespace: &str, defaults: &AgentDefaults) -> Value {
    let spec = &cluster.spec;
    let image = if defaults.image.is_empty() {
        default_image()
    } else {
        defaults.image.clone()
    };
    let image = resolve_image(
        &defaults.system_default_registry,
        &spec.private_repo_url,
        &image,
    );
    let mut args = vec![json!("agent"), json!(format!("--namespace={namespace}"))];
    // Fleet sets the agent scope only for a non-default agent namespace (its AGENT_SCOPE).
    if !spec.agent_namespace.is_empty() {
        args.push(json!(format!("--scope={}", spec.agent_namespace)));
    }
    args.push(json!(format!("--client-id={}", spec.client_id)));
    let mut env = vec![
        json!({"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}),
        json!({"name": "AGENT_SCOPE", "value": spec.agent_namespace}),
    ];
    if !defaults.checkin_interval.is_empty() {
        env.push(json!({"name": "CHECKIN_INTERVAL", "value": defaults.checkin_interval}));
    }
    env.extend(spec.agent_env_vars.iter().map(|e| json!(e)));
    let mut tolerations = vec![
        json!({"key": "node.cloudprovider.kubernetes.io/uninitialized", "operator": "Equal",
            "value": "true", "effect": "NoSchedule"}),
        json!({"key": "cattle.io/os", "operator": "Equal", "value": "linux", "effect": "NoSchedule"}),
    ];
    tolerations.extend(spec.agent_tolerations.iter().map(|t| json!(t)));
    let affinity = match &spec.agent_affinity {
        Some(affinity) => json!(affinity),
        None => json!({"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [
                {"key": "fleet.cattle.io/agent", "operator": "In", "values": ["true"]}]}}]}}),
    };
    let host_network = spec.host_network.unwrap_or(false);
    let mut container = json!({
        "name": AGENT_NAME,
        "image": image,
        "args": args,
        "env": env,
        "securityContext": {
            "allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "privileged": false,
            "runAsNonRoot": true, "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
    });
    if !defaults.image_pull_policy.is_empty() {
        container["imagePullPolicy"] = json!(defaults.image_pull_policy);
    }
    if let Some(resources) = &spec.agent_resources {
        container["resources"] = json!(resources);
    }
    let mut pod = json!({
        "serviceAccountName": AGENT_NAME,
        "containers": [container],
        "volumes": [{"name": "tmp", "emptyDir": {}}],
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": tolerations,
        "affinity": affinity,
        "securityContext": {"runAsNonRoot": true, "runAsUser": 65532, "runAsGroup": 65532},
    });
    if host_network {
        pod["hostNetwork"] = json!(true);
    }
    if !spec.agent_pull_secrets.is_empty() {
        pod["imagePullSecrets"] = json!(spec.agent_pull_secrets);
    }
    json!({
        "metadata": {"labels": labels()},
        "spec": {
            // One agent per cluster and scope: it has no leader election, so never two at once.
            "replicas": 1,
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": {"app": AGENT_NAME}},
            "template": {"metadata": {"labels": {"app": AGENT_NAME}}, "spec": pod},
        },
    })
}

/// What the bootstrap Secret carries: the keys of the `fleet-agent` chart's Secret.
pub struct BootstrapValues<'a> {
    pub api_server_url: &'a str,
    pub api_server_ca: &'a str,
    pub token: &'a str,
    pub token_name: &'a str,
    pub cluster_namespace: &'a str,
    pub system_registration_namespace: &'a str,
}

/// The bootstrap Secret `fleet-agent-bootstrap` in the agent's namespace.
pub fn bootstrap_secret(cluster: &Cluster, values: &BootstrapValues<'_>) -> Object {
    use base64::Engine;
    let encode = |v: &str| json!(base64::engine::general_purpose::STANDARD.encode(v));
    object(
        "Secret",
        &agent_namespace(cluster),
        BOOTSTRAP_SECRET,
        json!({"metadata": {"labels": labels()}, "data": {
            "apiServerURL": encode(values.api_server_url),
            "apiServerCA": encode(values.api_server_ca),
            "token": encode(values.token),
            "tokenName": encode(values.token_name),
            "clusterNamespace": encode(values.cluster_namespace),
            "systemRegistrationNamespace": encode(values.system_registration_namespace),
        }}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(spec: Value) -> Cluster {
        serde_json::from_value(json!({
            "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "Cluster",
            "metadata": {"name": "c1", "namespace": "fleet-default", "labels": {"env": "prod"}},
            "spec": spec,
        }))
        .unwrap()
    }

    fn find<'a>(objects: &'a [Object], kind: &str) -> &'a Value {
        &objects.iter().find(|o| o.kind == kind).unwrap().body
    }

    #[test]
    fn names_follow_fleets_agent_manifest() {
        let objects = agent_objects(&cluster(json!({"clientID": "id-1"})), &Default::default());
        let names: Vec<_> = objects
            .iter()
            .map(|o| (o.kind, o.namespace.as_str(), o.name.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("Namespace", "", "cattle-fleet-system"),
                ("ServiceAccount", "cattle-fleet-system", "fleet-agent"),
                ("ClusterRole", "", "cattle-fleet-system-fleet-agent-role"),
                (
                    "ClusterRoleBinding",
                    "",
                    "cattle-fleet-system-fleet-agent-role-binding"
                ),
                ("ConfigMap", "cattle-fleet-system", "fleet-agent"),
                ("Deployment", "cattle-fleet-system", "fleet-agent"),
            ]
        );
        let config: Value = serde_json::from_str(
            find(&objects, "ConfigMap")["data"]["config"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            config,
            json!({"clientID": "id-1", "labels": {"env": "prod"}})
        );
        let deployment = find(&objects, "Deployment");
        assert_eq!(
            deployment["spec"]["template"]["metadata"]["labels"]["app"],
            "fleet-agent"
        );
        let pod = &deployment["spec"]["template"]["spec"];
        assert_eq!(pod["serviceAccountName"], "fleet-agent");
        assert_eq!(
            pod["containers"][0]["args"],
            json!([
                "agent",
                "--namespace=cattle-fleet-system",
                "--client-id=id-1"
            ])
        );
        assert_eq!(pod["containers"][0]["image"], default_image());
    }

    #[test]
    fn agent_settings_shape_the_deployment() {
        let objects = agent_objects(
            &cluster(json!({
                "clientID": "id-1",
                "agentNamespace": "edge-agent",
                "privateRepoURL": "registry.example.com",
                "agentEnvVars": [{"name": "HTTPS_PROXY", "value": "http://proxy:3128"}],
                "agentTolerations": [{"key": "dedicated", "operator": "Exists"}],
                "agentAffinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                    {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}]}}},
                "agentResources": {"limits": {"memory": "256Mi"}},
                "hostNetwork": true,
            })),
            &AgentDefaults {
                image: "fleet:9.9".into(),
                checkin_interval: "1m0s".into(),
                ..Default::default()
            },
        );
        assert_eq!(objects[0].name, "edge-agent");
        let pod = &find(&objects, "Deployment")["spec"]["template"]["spec"];
        let container = &pod["containers"][0];
        assert_eq!(container["image"], "registry.example.com/fleet:9.9");
        assert_eq!(
            container["args"],
            json!([
                "agent",
                "--namespace=edge-agent",
                "--scope=edge-agent",
                "--client-id=id-1"
            ])
        );
        let env: Vec<_> = container["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            env,
            [
                "NAMESPACE",
                "AGENT_SCOPE",
                "CHECKIN_INTERVAL",
                "HTTPS_PROXY"
            ]
        );
        assert_eq!(container["resources"]["limits"]["memory"], "256Mi");
        assert_eq!(pod["tolerations"].as_array().unwrap().len(), 3);
        assert_eq!(pod["tolerations"][2]["key"], "dedicated");
        assert!(
            pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                .is_object()
        );
        assert_eq!(pod["hostNetwork"], true);
        let binding = find(&objects, "ClusterRoleBinding");
        assert_eq!(binding["subjects"][0]["namespace"], "edge-agent");
        assert_eq!(binding["roleRef"]["name"], "edge-agent-fleet-agent-role");
    }

    #[test]
    fn images_are_resolved_as_fleet_resolves_them() {
        assert_eq!(resolve_image("", "", "fleet:1"), "fleet:1");
        assert_eq!(resolve_image("", "reg.io", "fleet:1"), "reg.io/fleet:1");
        assert_eq!(
            resolve_image("", "reg.io", "reg.io/fleet:1"),
            "reg.io/fleet:1"
        );
        assert_eq!(
            resolve_image("glob.io", "", "glob.io/fleet:1"),
            "glob.io/fleet:1"
        );
        assert_eq!(
            resolve_image("glob.io", "reg.io", "glob.io/fleet:1"),
            "reg.io/fleet:1"
        );
    }
}
