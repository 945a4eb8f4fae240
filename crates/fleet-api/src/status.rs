//! The status Fleet aggregates for a source of bundles (GitRepo; HelmOp in Fleet), its
//! `StatusBase`: ready clusters, BundleDeployment summary, display fields and per-resource
//! states across clusters.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::condition::Condition;
use crate::omit::{is_false, null_as_zero};
use crate::summary::{BundleSummary, ResourceCounts};

/// Fields shared by the status of every bundle source (Fleet's `StatusBase`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct StatusBase {
    /// Lowest number of ready clusters over all bundles of this source.
    #[serde(deserialize_with = "null_as_zero")]
    pub ready_clusters: i64,
    /// Number of clusters that should be ready.
    #[serde(deserialize_with = "null_as_zero")]
    pub desired_ready_clusters: i64,
    /// BundleDeployments per state.
    #[serde(deserialize_with = "null_as_zero")]
    pub summary: BundleSummary,
    /// Human-readable summary.
    #[serde(deserialize_with = "null_as_zero")]
    pub display: StatusDisplay,
    /// `Ready`, `Accepted`, `GitPolling`, `Reconciling`, `Stalled`, …
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub conditions: Vec<Condition>,
    /// Every deployed resource, with its state on each cluster.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub resources: Vec<Resource>,
    /// Resources per state over all bundles.
    #[serde(deserialize_with = "null_as_zero")]
    pub resource_counts: ResourceCounts,
    /// Resources per state, per cluster (keyed by cluster namespace/name).
    #[serde(skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_zero")]
    pub per_cluster_resource_counts: BTreeMap<String, ResourceCounts>,
    /// Sorted errors reported by resources.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub resource_errors: Vec<String>,
}

/// Display fields of a bundle source, shown by `kubectl get`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct StatusDisplay {
    /// `"<ready>/<total>"` BundleDeployments.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub ready_bundle_deployments: String,
    /// Highest-ranked BundleDeployment state, or `GitUpdating`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub state: String,
    /// The relevant message from the deployment conditions.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub message: String,
    /// `true` when `message` reports an error.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub error: bool,
}

/// One resource deployed from a bundle source, and its state across clusters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct Resource {
    /// API version of the resource.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub api_version: String,
    /// Kind of the resource.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub kind: String,
    /// Lowercased type, e.g. `configmap` or `apiextensions.k8s.io.customresourcedefinition`.
    #[serde(
        rename = "type",
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_zero"
    )]
    pub type_: String,
    /// `namespace/name`, or just the name for cluster-scoped resources.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub id: String,
    /// Namespace of the resource.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub namespace: String,
    /// Name of the resource.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub name: String,
    /// The state lists were truncated.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub incomplete_state: bool,
    /// Overall state, e.g. `Ready`, `Modified` or `Unknown`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub state: String,
    /// Some cluster reports an error for it.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub error: bool,
    /// Some cluster reports it as transitioning.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub transitioning: bool,
    /// First message reported for it.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub message: String,
    /// Clusters per state of this resource.
    #[serde(deserialize_with = "null_as_zero")]
    pub per_cluster_state: PerClusterState,
}

/// The clusters (as `namespace/name`) on which a resource is in each state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct PerClusterState {
    /// Clusters where it is ready.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub ready: Vec<String>,
    /// Clusters where it waits to be applied.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub wait_applied: Vec<String>,
    /// Clusters where it is pending.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub pending: Vec<String>,
    /// Clusters where it is modified.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub modified: Vec<String>,
    /// Clusters where it is orphaned.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub orphaned: Vec<String>,
    /// Clusters where it is missing.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub missing: Vec<String>,
    /// Clusters where its state is unknown.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub unknown: Vec<String>,
    /// Clusters where it is not ready.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub not_ready: Vec<String>,
}
