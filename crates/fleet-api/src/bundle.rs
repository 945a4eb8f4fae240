//! Bundle: the unit Fleet deploys. A bundle holds the files read from one directory of a git
//! repository (or a CLI call), how to deploy them, and which clusters get them.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::condition::Condition;
use crate::omit::{is_false, is_zero, null_as_zero};
use crate::options::{BundleDeploymentOptions, HelmOpOptions};
use crate::placement::{PlacementPolicy, PlacementStatus};
use crate::selector::LabelSelector;
use crate::state::BundleState;
use crate::summary::{BundleSummary, ObjectRef};

/// Bundle spec: the bundle-wide deployment options (inline), its resources, targets and
/// rollout. Field order and `omitempty` follow Fleet's Go `BundleSpec`.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "fleet.cattle.io",
    version = "v1alpha1",
    kind = "Bundle",
    namespaced,
    status = "BundleStatus",
    doc = "A Fleet Bundle: resources read from a git path, their deployment options and the clusters they target. The agent renders it as one Helm-style release per cluster.",
    printcolumn = r#"{"name":"BundleDeployments-Ready","type":"string","jsonPath":".status.display.readyClusters"}"#,
    printcolumn = r#"{"name":"Status","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].message"}"#,
    printcolumn = r#"{"name":"Scheduled","type":"string","jsonPath":".status.placement.scheduled"}"#
)]
#[serde(default, rename_all = "camelCase")]
pub struct BundleSpec {
    /// Deployment options shared by every target (Go embeds them inline).
    #[serde(flatten)]
    pub options: BundleDeploymentOptions,
    /// Stop updating BundleDeployments; they show OutOfSync.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub paused: bool,
    /// How fast a change rolls out across clusters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout_strategy: Option<RolloutStrategy>,
    /// The files of the bundle, sorted by name.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub resources: Vec<BundleResource>,
    /// `FirstMatch` (default) or `AllMatches`: how target customizations combine.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    #[schemars(extend("enum" = [TARGET_CUSTOMIZATION_FIRST_MATCH, TARGET_CUSTOMIZATION_ALL_MATCHES]))]
    pub target_customization_mode: String,
    /// Targets: fleet.yaml targets and customizations first, then the GitRepo's targets.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub targets: Vec<BundleTarget>,
    /// Allow-list of targets (the GitRepo's); a cluster must match one to get a deployment.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub target_restrictions: Vec<BundleTargetRestriction>,
    /// Bundles that must be ready first.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub depends_on: Vec<BundleRef>,
    /// Contents ID when the contents are stored in an OCI registry.
    #[serde(
        rename = "contentsId",
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_zero"
    )]
    pub contents_id: String,
    /// Chart access options of bundles made by Fleet's HelmOp.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub helm_op_options: Option<HelmOpOptions>,
    /// Hash of the Helm values moved to the bundle's values Secret.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub values_hash: String,
    /// Our addition: placement policy choosing among the targeted clusters (see
    /// [`crate::placement`]). Absent means Fleet's behaviour.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<PlacementPolicy>,
}

/// `targetCustomizationMode` value (the default): the first matching customization applies.
pub const TARGET_CUSTOMIZATION_FIRST_MATCH: &str = "FirstMatch";
/// `targetCustomizationMode` value: all matching customizations are merged in order.
pub const TARGET_CUSTOMIZATION_ALL_MATCHES: &str = "AllMatches";

/// One file of a bundle.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct BundleResource {
    /// Path relative to the bundle directory.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub name: String,
    /// File content: UTF-8 text, or base64 of gzip when `encoding` is `base64+gz`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub content: String,
    /// Empty for plain text, or `base64+gz`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub encoding: String,
}

impl BundleSpec {
    /// The names of the bundle's files, in the order they are listed.
    pub fn resource_names(&self) -> Vec<&str> {
        self.resources.iter().map(|r| r.name.as_str()).collect()
    }
}

/// A set of clusters to deploy to, with options that customize the deployment for them
/// (a fleet.yaml `targets`/`targetCustomizations` entry, or a GitRepo target).
///
/// Go's `BundleTarget` also declares its own `namespaceLabels` and `namespaceAnnotations`,
/// which shadow the embedded options' fields of the same JSON name; here there is one
/// field each, in `options`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct BundleTarget {
    /// Options that replace or merge into the bundle's for matching clusters.
    #[serde(flatten)]
    pub options: BundleDeploymentOptions,
    /// Target name; `target000`, `target001`, … when not given.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub name: String,
    /// Match a cluster by name (or by its display-name label).
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub cluster_name: String,
    /// Match clusters by labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_selector: Option<LabelSelector>,
    /// Match the clusters of a ClusterGroup by name.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub cluster_group: String,
    /// Match the clusters of ClusterGroups by the groups' labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_group_selector: Option<LabelSelector>,
    /// Do not deploy to the matched clusters.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub do_not_deploy: bool,
}

/// Internal allow-list entry of a bundle: the GitRepo's targets, copied so that fleet.yaml
/// customizations cannot widen where a bundle goes. Same shape as a GitRepo target.
pub type BundleTargetRestriction = crate::gitrepo::GitTarget;

/// A dependency on other bundles, by name or by label selector.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct BundleRef {
    /// Name of a bundle in the same namespace.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub name: String,
    /// Selects bundles by their labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// States of the dependency that unblock this bundle; `[Ready]` when empty.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub accepted_states: Vec<BundleState>,
}

/// How a bundle change rolls out across clusters: partitions and unavailability budgets.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct RolloutStrategy {
    /// Clusters (number or percentage) that may be unavailable during an update; 100%.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Partitions (number or percentage) that may be unavailable; 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_unavailable_partitions: Option<IntOrString>,
    /// Size of automatic partitions (number or percentage); 25%.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_partition_size: Option<IntOrString>,
    /// Minimum number of clusters before automatic partitioning starts; 200.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_partition_threshold: Option<i64>,
    /// Maximum BundleDeployments created per reconcile; 50.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_new: Option<i64>,
    /// Manual partitions. Clusters matching none get no deployment.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub partitions: Vec<Partition>,
}

/// A manually defined rollout partition.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct Partition {
    /// Display name of the partition.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub name: String,
    /// Clusters of this partition that may be unavailable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Include a cluster by name.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub cluster_name: String,
    /// Include clusters by labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_selector: Option<LabelSelector>,
    /// Include the clusters of a ClusterGroup.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub cluster_group: String,
    /// Include the clusters of ClusterGroups selected by labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_group_selector: Option<LabelSelector>,
}

/// Observed state of a Bundle: deployments per state, rollout progress and display fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct BundleStatus {
    /// `Ready` and other conditions.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub conditions: Vec<Condition>,
    /// BundleDeployments per state.
    #[serde(deserialize_with = "null_as_zero")]
    pub summary: BundleSummary,
    /// BundleDeployments created (not updated) in the last reconcile.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub newly_created: i64,
    /// BundleDeployments not ready or not yet at their deploymentID.
    #[serde(deserialize_with = "null_as_zero")]
    pub unavailable: i64,
    /// Unavailable partitions.
    #[serde(deserialize_with = "null_as_zero")]
    pub unavailable_partitions: i64,
    /// Allowed unavailable BundleDeployments.
    #[serde(deserialize_with = "null_as_zero")]
    pub max_unavailable: i64,
    /// Allowed unavailable partitions.
    #[serde(deserialize_with = "null_as_zero")]
    pub max_unavailable_partitions: i64,
    /// Maximum new BundleDeployments per reconcile.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub max_new: i64,
    /// Status of each rollout partition.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub partitions: Vec<PartitionStatus>,
    /// Display fields.
    #[serde(deserialize_with = "null_as_zero")]
    pub display: BundleDisplay,
    /// Deprecated, always empty in current Fleet.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub resource_key: Vec<ResourceKey>,
    /// OCI reference of the stored contents (informational).
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub oci_reference: String,
    /// Generation of the bundle this status describes.
    #[serde(deserialize_with = "null_as_zero")]
    pub observed_generation: i64,
    /// SHA-256 of the JSON of `spec.resources`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub resources_sha256_sum: String,
    /// Our addition: the placement decisions, when the Bundle has a placement block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<PlacementStatus>,
}

/// Rollout status of one partition.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct PartitionStatus {
    /// Partition name.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub name: String,
    /// Clusters in the partition.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub count: i64,
    /// Allowed unavailable clusters.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub max_unavailable: i64,
    /// Unavailable clusters.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub unavailable: i64,
    /// BundleDeployments of the partition per state.
    #[serde(deserialize_with = "null_as_zero")]
    pub summary: BundleSummary,
}

/// Display fields of a Bundle.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct BundleDisplay {
    /// `"<ready>/<desired>"` clusters.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub ready_clusters: String,
    /// Highest-ranked non-ready state.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub state: String,
}

/// Deprecated in Fleet (always empty now): a resource that would likely be deployed.
pub type ResourceKey = ObjectRef;
