//! ClusterGroup: a named, reusable label selector over the Clusters of a namespace, and the
//! aggregated state of its clusters.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omit::null_as_zero;

use crate::condition::Condition;
use crate::selector::LabelSelector;
use crate::summary::{BundleSummary, ResourceCounts};

/// ClusterGroup spec. A missing selector selects nothing; `{}` selects every cluster of
/// the namespace.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "fleet.cattle.io",
    version = "v1alpha1",
    kind = "ClusterGroup",
    namespaced,
    status = "ClusterGroupStatus",
    category = "fleet",
    doc = "A Fleet ClusterGroup: a reusable selector that groups Clusters for targeting.",
    printcolumn = r#"{"name":"Clusters-Ready","type":"string","jsonPath":".status.display.readyClusters"}"#,
    printcolumn = r#"{"name":"Bundles-Ready","type":"string","jsonPath":".status.display.readyBundles"}"#,
    printcolumn = r#"{"name":"Status","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].message"}"#
)]
#[serde(default)]
pub struct ClusterGroupSpec {
    /// Selects the group's clusters by their labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}

/// Observed state of a ClusterGroup.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ClusterGroupStatus {
    /// Clusters in the group.
    #[serde(deserialize_with = "null_as_zero")]
    pub cluster_count: i64,
    /// Clusters that are not ready.
    #[serde(deserialize_with = "null_as_zero")]
    pub non_ready_cluster_count: i64,
    /// Names of the clusters that are not ready.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub non_ready_clusters: Vec<String>,
    /// `Ready` and `Processed`.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub conditions: Vec<Condition>,
    /// BundleDeployments of the group's clusters per state.
    #[serde(deserialize_with = "null_as_zero")]
    pub summary: BundleSummary,
    /// Display fields.
    #[serde(deserialize_with = "null_as_zero")]
    pub display: ClusterGroupDisplay,
    /// Resources per state over the group's clusters.
    #[serde(deserialize_with = "null_as_zero")]
    pub resource_counts: ResourceCounts,
}

/// Display fields of a ClusterGroup.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ClusterGroupDisplay {
    /// `"<ready>/<desired>"` clusters.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub ready_clusters: String,
    /// `"<ready>/<desired>"` bundles.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub ready_bundles: String,
    /// Summary state of the group.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub state: String,
}
