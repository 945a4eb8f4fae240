//! The objects of a fleet-agent installed by the controller into a downstream cluster (manager-initiated
//! registration). Names and labels are those of the `fleet-agent` chart and of Fleet's agent manifest: the
//! agent's Namespace, the ServiceAccount `fleet-agent`, the ClusterRole `<ns>-fleet-agent-role` and its binding
//! `<ns>-fleet-agent-role-binding` (all verbs on all resources: the agent deploys whatever bundles hold), the
//! ConfigMap `fleet-agent` (key `config`: `clientID` and `labels`), the bootstrap Secret `fleet-agent-bootstrap`
//! the Deployment `fleet-agent` (pods labelled `app: fleet-agent`) and the NetworkPolicy `default-allow-all`
//! of the agent's namespace (Fleet's manifest always adds it, so that a default-deny policy of the cluster
//! does not cut the agent off). The Cluster's agent settings (`agentEnvVars`, `agentTolerations`,
//! `agentAffinity`, `agentResources`, `privateRepoURL`, `hostNetwork`) shape the Deployment as Fleet's
//! manifest does, and its `agentSchedulingCustomization` adds the PriorityClass `fleet-agent-priority-class`
//! (which the pod then uses) and the PodDisruptionBudget `fleet-agent-pod-disruption-budget`, as Fleet's
//! import controller does.

use std::collections::BTreeMap;

use fleet_api::Cluster;
use fleet_bundle::names::safe_concat_name;
use kube::ResourceExt;
use serde_json::{Value, json};

use crate::error::{Error, Result};

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
/// The agent's PriorityClass (Fleet's `FleetAgentPriorityClassName`), cluster-scoped.
pub const PRIORITY_CLASS: &str = "fleet-agent-priority-class";
/// The agent's PodDisruptionBudget (Fleet's `FleetAgentPodDisruptionBudgetName`).
pub const POD_DISRUPTION_BUDGET: &str = "fleet-agent-pod-disruption-budget";
/// The NetworkPolicy allowing all traffic in the agent's namespace (the name in Fleet's manifest).
pub const NETWORK_POLICY: &str = "default-allow-all";
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
    /// `agentTLSMode`, written into the agent's ConfigMap as Fleet's import controller writes it.
    pub tls_mode: String,
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

/// A PodDisruptionBudget's `minAvailable`/`maxUnavailable`: a number when the text is one, else the text
/// (a percentage), as Go's `intstr.Parse` reads it.
fn int_or_string(text: &str) -> Value {
    match text.parse::<i64>() {
        Ok(number) => json!(number),
        Err(_) => json!(text),
    }
}

/// The PriorityClass and PodDisruptionBudget the Cluster's `agentSchedulingCustomization` asks for, and
/// whether the pod uses the PriorityClass. Fleet's rules for the budget: neither bound set means
/// `maxUnavailable: 0`; one set (the other empty or "0") is used; both set is an error.
fn scheduling_objects(cluster: &Cluster, namespace: &str) -> Result<Vec<Object>> {
    let Some(custom) = &cluster.spec.agent_scheduling_customization else {
        return Ok(Vec::new());
    };
    let mut objects = Vec::new();
    if let Some(priority) = &custom.priority_class {
        let mut body = json!({"metadata": {"labels": labels()}, "value": priority.value,
            "description": "Priority class for Fleet Agent"});
        if let Some(policy) = &priority.preemption_policy {
            body["preemptionPolicy"] = json!(policy);
        }
        objects.push(object("PriorityClass", "", PRIORITY_CLASS, body));
    }
    if let Some(budget) = &custom.pod_disruption_budget {
        let (max, min) = (
            budget.max_unavailable.as_str(),
            budget.min_available.as_str(),
        );
        let bound = match (max, min) {
            ("", "") => json!({"maxUnavailable": 0}),
            (max, "" | "0") => json!({"maxUnavailable": int_or_string(max)}),
            ("" | "0", min) => json!({"minAvailable": int_or_string(min)}),
            (max, min) => {
                return Err(Error::invalid(
                    format!(
                        "Cluster {}/{}",
                        cluster.namespace().unwrap_or_default(),
                        cluster.name_any()
                    ),
                    format!(
                        "spec.agentSchedulingCustomization.podDisruptionBudget: both maxUnavailable ({max}) and minAvailable ({min}) are set"
                    ),
                ));
            }
        };
        let mut spec = json!({"selector": {"matchLabels": {"app": AGENT_NAME}}});
        spec.as_object_mut()
            .unwrap_or_else(|| unreachable!("a JSON object"))
            .extend(bound.as_object().cloned().unwrap_or_default());
        objects.push(object(
            "PodDisruptionBudget",
            namespace,
            POD_DISRUPTION_BUDGET,
            json!({"metadata": {"labels": labels()}, "spec": spec}),
        ));
    }
    Ok(objects)
}

/// The agent's objects for `cluster`, in the order they are applied; without the bootstrap Secret
/// ([`bootstrap_secret`]), which is written only when the agent is to (re-)register. A
/// `podDisruptionBudget` with both bounds is an error naming the Cluster and the field.
pub fn agent_objects(cluster: &Cluster, defaults: &AgentDefaults) -> Result<Vec<Object>> {
    let namespace = agent_namespace(cluster);
    let scheduling = scheduling_objects(cluster, &namespace)?;
    let priority_class = scheduling.iter().any(|o| o.kind == "PriorityClass");
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
    if !defaults.tls_mode.is_empty() {
        config.insert("agentTLSMode".into(), json!(defaults.tls_mode));
    }
    let config = Value::Object(config).to_string();
    let (priority, budget): (Vec<Object>, Vec<Object>) = scheduling
        .into_iter()
        .partition(|o| o.kind == "PriorityClass");
    let mut objects = vec![object(
        "Namespace",
        "",
        &namespace,
        json!({"metadata": {"labels": labels()}}),
    )];
    objects.extend(priority);
    objects.extend([
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
            "NetworkPolicy",
            &namespace,
            NETWORK_POLICY,
            json!({"metadata": {"labels": labels()}, "spec": {
                "podSelector": {},
                "ingress": [{}],
                "egress": [{}],
                "policyTypes": ["Ingress", "Egress"],
            }}),
        ),
    ]);
    objects.extend(budget);
    objects.push(object(
        "Deployment",
        &namespace,
        AGENT_NAME,
        deployment(cluster, &namespace, defaults, priority_class),
    ));
    Ok(objects)
}

fn deployment(
    cluster: &Cluster,
    namespace: &str,
    defaults: &AgentDefaults,
    priority_class: bool,
) -> Value {
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
    let args = vec![
        json!("agent"),
        json!(format!("--namespace={namespace}")),
        json!(format!("--client-id={}", spec.client_id)),
    ];
    // The agent scope is the Cluster's agentNamespace, empty for the default one, as in Fleet's manifest
    // (`fleet agent` reads AGENT_SCOPE).
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
    if priority_class {
        pod["priorityClassName"] = json!(PRIORITY_CLASS);
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
        let objects =
            agent_objects(&cluster(json!({"clientID": "id-1"})), &Default::default()).unwrap();
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
                ("NetworkPolicy", "cattle-fleet-system", "default-allow-all"),
                ("Deployment", "cattle-fleet-system", "fleet-agent"),
            ]
        );
        let policy = find(&objects, "NetworkPolicy");
        assert_eq!(policy["spec"]["podSelector"], json!({}));
        assert_eq!(policy["spec"]["ingress"], json!([{}]));
        assert_eq!(policy["spec"]["egress"], json!([{}]));
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
                tls_mode: "strict".into(),
                ..Default::default()
            },
        )
        .unwrap();
        let config: Value = serde_json::from_str(
            find(&objects, "ConfigMap")["data"]["config"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(config["agentTLSMode"], "strict");
        assert_eq!(objects[0].name, "edge-agent");
        let pod = &find(&objects, "Deployment")["spec"]["template"]["spec"];
        let container = &pod["containers"][0];
        assert_eq!(container["image"], "registry.example.com/fleet:9.9");
        assert_eq!(
            container["args"],
            json!(["agent", "--namespace=edge-agent", "--client-id=id-1"])
        );
        assert_eq!(
            container["env"][1],
            json!({"name": "AGENT_SCOPE", "value": "edge-agent"})
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
    fn scheduling_customization_adds_a_priority_class_and_a_disruption_budget() {
        let objects = agent_objects(
            &cluster(json!({"clientID": "id-1", "agentSchedulingCustomization": {
                "priorityClass": {"value": 1000, "preemptionPolicy": "Never"},
                "podDisruptionBudget": {"minAvailable": "50%"},
            }})),
            &Default::default(),
        )
        .unwrap();
        let kinds: Vec<_> = objects.iter().map(|o| o.kind).collect();
        assert_eq!(
            kinds,
            [
                "Namespace",
                "PriorityClass",
                "ServiceAccount",
                "ClusterRole",
                "ClusterRoleBinding",
                "ConfigMap",
                "NetworkPolicy",
                "PodDisruptionBudget",
                "Deployment"
            ]
        );
        let priority = find(&objects, "PriorityClass");
        assert_eq!(priority["metadata"]["name"], "fleet-agent-priority-class");
        assert_eq!(priority["value"], 1000);
        assert_eq!(priority["preemptionPolicy"], "Never");
        let budget = find(&objects, "PodDisruptionBudget");
        assert_eq!(
            budget["metadata"]["name"],
            "fleet-agent-pod-disruption-budget"
        );
        assert_eq!(
            budget["spec"],
            json!({"selector": {"matchLabels": {"app": "fleet-agent"}}, "minAvailable": "50%"})
        );
        let pod = &find(&objects, "Deployment")["spec"]["template"]["spec"];
        assert_eq!(pod["priorityClassName"], "fleet-agent-priority-class");

        // Fleet's budget rules: nothing set is maxUnavailable 0, a number stays a number, both is an error.
        let budget_of = |spec: Value| {
            agent_objects(
                &cluster(json!({"clientID": "id-1",
                    "agentSchedulingCustomization": {"podDisruptionBudget": spec}})),
                &Default::default(),
            )
            .map(|objects| find(&objects, "PodDisruptionBudget")["spec"].clone())
            .map_err(|e| e.to_string())
        };
        assert_eq!(budget_of(json!({})).unwrap()["maxUnavailable"], 0);
        assert_eq!(
            budget_of(json!({"maxUnavailable": "1", "minAvailable": "0"})).unwrap()["maxUnavailable"],
            1
        );
        let err = budget_of(json!({"maxUnavailable": "1", "minAvailable": "2"})).unwrap_err();
        assert!(
            err.contains("Cluster fleet-default/c1")
                && err.contains("spec.agentSchedulingCustomization.podDisruptionBudget"),
            "{err}"
        );
        let plain =
            agent_objects(&cluster(json!({"clientID": "id-1"})), &Default::default()).unwrap();
        assert!(
            find(&plain, "Deployment")["spec"]["template"]["spec"]["priorityClassName"].is_null()
        );
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
