//! Cluster: a downstream Kubernetes cluster registered with Fleet, with its agent's
//! deployment settings and the aggregated state of the bundles deployed to it.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, EnvVar, LocalObjectReference, ResourceRequirements, Toleration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cluster_properties::{PropertyValue, ResourceUsage};
use crate::condition::Condition;
use crate::generic_map::GenericMap;
use crate::omit::{is_false, is_zero, null_as_zero};
use crate::placement::{ClusterScore, ClusterTaint};
use crate::summary::{BundleSummary, ResourceCounts};

/// Cluster spec: identity, how the manager reaches the cluster, and agent settings.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "fleet.cattle.io",
    version = "v1alpha1",
    kind = "Cluster",
    namespaced,
    status = "ClusterStatus",
    doc = "A Fleet Cluster: a downstream cluster that Fleet deploys bundles to, through the agent running in it.",
    printcolumn = r#"{"name":"Bundles-Ready","type":"string","jsonPath":".status.display.readyBundles"}"#,
    printcolumn = r#"{"name":"Last-Seen","type":"string","jsonPath":".status.agent.lastSeen"}"#,
    printcolumn = r#"{"name":"Status","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].message"}"#
)]
#[serde(default, rename_all = "camelCase")]
pub struct ClusterSpec {
    /// Stop updating this cluster's BundleDeployments; they show OutOfSync.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub paused: bool,
    /// Unique identity of the cluster (the agent's configured ID or `kube-system` UID).
    #[serde(
        rename = "clientID",
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_zero"
    )]
    pub client_id: String,
    /// Secret with a kubeconfig (and optionally `apiServerURL`/`apiServerCA`) for
    /// manager-initiated import.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub kube_config_secret: String,
    /// Namespace of `kubeConfigSecret`; the Cluster's namespace when empty.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub kube_config_secret_namespace: String,
    /// Bump to redeploy the agent.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub redeploy_agent_generation: i64,
    /// Extra environment variables of the agent.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub agent_env_vars: Vec<EnvVar>,
    /// Namespace the agent runs in; the system namespace when empty.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub agent_namespace: String,
    /// Registry prefix for the agent image.
    #[serde(
        rename = "privateRepoURL",
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_zero"
    )]
    pub private_repo_url: String,
    /// Cluster values for fleet.yaml templating (`.ClusterValues`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template_values: Option<GenericMap>,
    /// Extra tolerations of the agent.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub agent_tolerations: Vec<Toleration>,
    /// Affinity of the agent; the default affinity when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_affinity: Option<Affinity>,
    /// Resources of the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_resources: Option<ResourceRequirements>,
    /// Run the agent with `hostNetwork: true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_network: Option<bool>,
    /// PriorityClass and PodDisruptionBudget for the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_scheduling_customization: Option<AgentSchedulingCustomization>,
    /// Image pull secrets of the agent; override the chart-wide ones.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub agent_pull_secrets: Vec<LocalObjectReference>,
    /// Our addition: taints that keep placements away unless tolerated.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub taints: Vec<ClusterTaint>,
}

/// Scheduling objects created for the agent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct AgentSchedulingCustomization {
    /// Create a PriorityClass for the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority_class: Option<PriorityClassSpec>,
    /// Create a PodDisruptionBudget for the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod_disruption_budget: Option<PodDisruptionBudgetSpec>,
}

/// The agent's PriorityClass.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct PriorityClassSpec {
    /// Priority value.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub value: i64,
    /// `PreemptLowerPriority` or `Never`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preemption_policy: Option<String>,
}

/// The agent's PodDisruptionBudget.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct PodDisruptionBudgetSpec {
    /// Minimum available pods (number or percentage).
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub min_available: String,
    /// Maximum unavailable pods (number or percentage).
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub max_unavailable: String,
}

/// Observed state of a Cluster: its namespace, agent check-ins and deployed bundles.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ClusterStatus {
    /// `Ready` and `Processed`.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub conditions: Vec<Condition>,
    /// The cluster namespace holding its BundleDeployments.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub namespace: String,
    /// BundleDeployments per state.
    #[serde(deserialize_with = "null_as_zero")]
    pub summary: BundleSummary,
    /// Resources per state.
    #[serde(deserialize_with = "null_as_zero")]
    pub resource_counts: ResourceCounts,
    /// Ready GitRepos targeting this cluster.
    #[serde(deserialize_with = "null_as_zero")]
    pub ready_git_repos: i64,
    /// GitRepos targeting this cluster.
    #[serde(deserialize_with = "null_as_zero")]
    pub desired_ready_git_repos: i64,
    /// Ready HelmOps targeting this cluster.
    #[serde(deserialize_with = "null_as_zero")]
    pub ready_helm_ops: i64,
    /// HelmOps targeting this cluster.
    #[serde(deserialize_with = "null_as_zero")]
    pub desired_ready_helm_ops: i64,
    /// Hash of the agent's environment variables.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub agent_env_vars_hash: String,
    /// Image registry prefix the agent currently uses.
    #[serde(
        rename = "agentPrivateRepoURL",
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_zero"
    )]
    pub agent_private_repo_url: String,
    /// The agent runs with host networking.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub agent_host_network: bool,
    /// Generation of the deployed agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_deployed_generation: Option<i64>,
    /// The agent was migrated (always true after import).
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub agent_migrated: bool,
    /// The agent namespace was migrated.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub agent_namespace_migrated: bool,
    /// The cattle namespace was migrated.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub cattle_namespace_migrated: bool,
    /// Hash of the agent's affinity.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub agent_affinity_hash: String,
    /// Hash of the agent's resources.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub agent_resources_hash: String,
    /// Hash of the agent's tolerations.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub agent_tolerations_hash: String,
    /// Agent configuration changed; triggers a re-import.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub agent_config_changed: bool,
    /// URL of the manager's API server the agent uses.
    #[serde(
        rename = "apiServerURL",
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_zero"
    )]
    pub api_server_url: String,
    /// Hash of the manager API server's CA.
    #[serde(
        rename = "apiServerCAHash",
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_zero"
    )]
    pub api_server_ca_hash: String,
    /// `system-store` or `strict`.
    #[serde(
        rename = "agentTLSMode",
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_zero"
    )]
    pub agent_tls_mode: String,
    /// Display fields.
    #[serde(deserialize_with = "null_as_zero")]
    pub display: ClusterDisplay,
    /// Agent check-in information.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentStatus>,
    /// How often the agent garbage-collects releases (Go duration).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub garbage_collection_interval: Option<String>,
    /// Hash of the agent scheduling customization.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub agent_scheduling_customization_hash: String,
    /// The cluster belongs to a Schedule.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub scheduled: bool,
    /// The cluster is inside an active schedule window.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub active_schedule: bool,
    /// Our addition: custom scores with an expiry, used by placement policies.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub scores: Vec<ClusterScore>,
    /// Our addition: properties the agent observed (node count, Kubernetes version, and
    /// each custom claim under its name), keyed by property name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<BTreeMap<String, PropertyValue>>,
    /// Our addition: CPU and memory summed over the cluster's nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_usage: Option<ResourceUsage>,
}

/// Display fields of a Cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ClusterDisplay {
    /// `"<ready>/<desired>"` bundles.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub ready_bundles: String,
    /// Highest-ranked bundle state, or `WaitCheckIn` before the agent's first check-in.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub state: String,
}

/// The agent's last check-in.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct AgentStatus {
    /// When the agent last checked in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<Time>,
    /// Namespace the agent runs in.
    #[serde(deserialize_with = "null_as_zero")]
    pub namespace: String,
}
