//! Placement policies (our addition to Fleet's API, optional everywhere): choose among the
//! clusters that Fleet targeting already allows by policy — KubeFleet's PickAll / PickFixed /
//! PickN with cluster affinity, topology spread, tolerations of cluster taints and a rolling
//! budget. Without a `placement` block, behaviour is exactly Fleet's.
//!
//! These are the API shapes stored in GitRepo, Bundle and fleet.yaml; the scheduler in
//! `fleet-target` reads the same JSON.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omit::{is_zero, null_as_zero};
use crate::selector::LabelSelector;

/// A placement policy: how many and which of the targeted clusters get the bundle.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct PlacementPolicy {
    /// `PickAll` (default: every eligible cluster), `PickFixed` (the named clusters) or
    /// `PickN` (the `numberOfClusters` best-scoring clusters).
    #[serde(
        rename = "type",
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_zero"
    )]
    #[schemars(extend("enum" = ["PickAll", "PickFixed", "PickN"]))]
    pub placement_type: String,
    /// Clusters of a `PickFixed` placement.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub cluster_names: Vec<String>,
    /// Number of clusters of a `PickN` placement.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub number_of_clusters: Option<i32>,
    /// Cluster affinity: required filters and weighted preferences.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub affinity: Option<PlacementAffinity>,
    /// Spread over topology domains (cluster label values); `PickN` only.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    /// Cluster taints this placement tolerates.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub tolerations: Vec<PlacementToleration>,
    /// Rolling-update budget of placed deployments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<PlacementStrategy>,
}

/// `placement.affinity`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct PlacementAffinity {
    /// Affinity to clusters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_affinity: Option<ClusterAffinity>,
}

/// Required and preferred cluster selection rules.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ClusterAffinity {
    /// A cluster qualifies only if one of these terms matches it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required_during_scheduling_ignored_during_execution: Option<ClusterSelector>,
    /// Weighted terms that raise or lower a cluster's score.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub preferred_during_scheduling_ignored_during_execution: Vec<PreferredClusterSelector>,
}

/// Terms ORed together.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ClusterSelector {
    /// The terms; a cluster matching any of them qualifies.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub cluster_selector_terms: Vec<ClusterSelectorTerm>,
}

/// One term; its parts are ANDed. `propertySelector` filters (required terms);
/// `propertySorter` scores (preferred terms).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ClusterSelectorTerm {
    /// Cluster labels to match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
    /// Cluster properties to compare.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub property_selector: Option<PropertySelector>,
    /// Scores clusters by a property, between the fleet's minimum and maximum.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub property_sorter: Option<PropertySorter>,
}

/// A preferred term and its weight.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct PreferredClusterSelector {
    /// Weight in [-100, 100] added to the score of matching clusters.
    #[serde(deserialize_with = "null_as_zero")]
    #[schemars(range(min = -100, max = 100))]
    pub weight: i32,
    /// The term.
    #[serde(deserialize_with = "null_as_zero")]
    pub preference: ClusterSelectorTerm,
}

/// Property requirements, ANDed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct PropertySelector {
    /// The requirements.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub match_expressions: Vec<PropertySelectorRequirement>,
}

/// `name operator values[0]`, compared as Kubernetes quantities.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct PropertySelectorRequirement {
    /// Property name, e.g. `kubernetes-fleet.io/node-count`.
    #[serde(deserialize_with = "null_as_zero")]
    pub name: String,
    /// `Gt`, `Ge`, `Eq`, `Ne`, `Lt` or `Le`.
    #[serde(deserialize_with = "null_as_zero")]
    #[schemars(extend("enum" = ["Gt", "Ge", "Eq", "Ne", "Lt", "Le"]))]
    pub operator: String,
    /// The value to compare with (one quantity).
    #[serde(deserialize_with = "null_as_zero")]
    pub values: Vec<String>,
}

/// Scores clusters by a property.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct PropertySorter {
    /// Property name.
    #[serde(deserialize_with = "null_as_zero")]
    pub name: String,
    /// `Ascending` (smallest scores highest) or `Descending`.
    #[serde(deserialize_with = "null_as_zero")]
    #[schemars(extend("enum" = ["Ascending", "Descending"]))]
    pub sort_order: String,
}

/// Spread placements evenly over the values of a cluster label.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct TopologySpreadConstraint {
    /// Largest allowed difference between domains; 1 when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_skew: Option<i64>,
    /// Cluster label whose values are the domains.
    #[serde(deserialize_with = "null_as_zero")]
    pub topology_key: String,
    /// `DoNotSchedule` (default: filter) or `ScheduleAnyway` (lower the score).
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    #[schemars(extend("enum" = ["DoNotSchedule", "ScheduleAnyway"]))]
    pub when_unsatisfiable: String,
}

/// Tolerates cluster taints.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct PlacementToleration {
    /// Taint key; empty with `Exists` tolerates every taint.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub key: String,
    /// `Equal` (default) or `Exists`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    #[schemars(extend("enum" = ["Equal", "Exists"]))]
    pub operator: String,
    /// Taint value for `Equal`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub value: String,
    /// `NoSchedule` or `NoSelect`; empty tolerates both.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    #[schemars(extend("enum" = [TAINT_NO_SCHEDULE, TAINT_NO_SELECT]))]
    pub effect: String,
    /// Tolerate only this long after the taint was added.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
}

/// Rolling-update budget of a placement, scaled against the number of placed clusters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct PlacementStrategy {
    /// Placed deployments that may be unavailable during an update; 25% by default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Extra deployments allowed above the target count during an update; 25% by default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    /// How long a deployment whose readiness cannot be tracked must have been applied before
    /// it counts as available; 60 by default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable_period_seconds: Option<i64>,
}

/// Taint effect: no new placements on the cluster; existing ones stay.
pub const TAINT_NO_SCHEDULE: &str = "NoSchedule";
/// Taint effect: no new placements, and existing ones move away once no toleration covers it.
pub const TAINT_NO_SELECT: &str = "NoSelect";

/// A taint on a Cluster: placements that do not tolerate it avoid (or leave) the cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ClusterTaint {
    /// Taint key.
    #[serde(deserialize_with = "null_as_zero")]
    pub key: String,
    /// Taint value.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub value: String,
    /// `NoSchedule` or `NoSelect`.
    #[serde(deserialize_with = "null_as_zero")]
    #[schemars(extend("enum" = [TAINT_NO_SCHEDULE, TAINT_NO_SELECT]))]
    pub effect: String,
    /// When the taint was added; `tolerationSeconds` count from here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_added: Option<Time>,
}

/// A custom score published for a cluster (like OCM's AddOnPlacementScore), readable by
/// property selectors and sorters under its name until it expires.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ClusterScore {
    /// Score name.
    #[serde(deserialize_with = "null_as_zero")]
    pub name: String,
    /// Score value.
    #[serde(deserialize_with = "null_as_zero")]
    pub value: i64,
    /// After this time the score counts as missing; never expires when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_until: Option<Time>,
}

/// The placement decisions of one Bundle (our addition to Bundle status): the clusters selected
/// with their scores, and up to 20 unselected clusters with the reason.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct PlacementStatus {
    /// `"<found>/<wanted>"` clusters (`"<found>"` for PickAll); shown as a printer column.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub scheduled: String,
    /// Fingerprint of the policy the decisions were made under (a changed policy makes older
    /// placements obsolete).
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub policy_hash: String,
    /// The selected clusters, by cluster.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub selected: Vec<SelectedCluster>,
    /// Up to 20 clusters that were not selected, with the reason.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub unselected: Vec<UnselectedCluster>,
    /// How many clusters were not selected in all.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub unselected_total: i64,
}

/// A selected cluster and the score it was picked with.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct SelectedCluster {
    /// `namespace/name` of the Cluster.
    #[serde(deserialize_with = "null_as_zero")]
    pub cluster: String,
    /// Its score (absent for PickFixed and PickAll).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<PlacementScore>,
}

/// A cluster's score in a scheduling decision.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct PlacementScore {
    /// Sum of the matching preferred affinity weights and property sorter scores.
    #[serde(deserialize_with = "null_as_zero")]
    pub affinity: i64,
    /// Topology spread score (negative when a `ScheduleAnyway` constraint is violated).
    #[serde(deserialize_with = "null_as_zero")]
    pub topology_spread: i64,
}

/// A cluster that was not selected, and why.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct UnselectedCluster {
    /// `namespace/name` of the Cluster (the bare name for a PickFixed name not found).
    #[serde(deserialize_with = "null_as_zero")]
    pub cluster: String,
    /// Which rule filtered it, or that it did not score high enough.
    #[serde(deserialize_with = "null_as_zero")]
    pub reason: String,
}

/// The placement decisions of one Bundle of a GitRepo (our addition to GitRepo status).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct BundlePlacementStatus {
    /// The Bundle's name.
    #[serde(deserialize_with = "null_as_zero")]
    pub bundle: String,
    /// Its decisions.
    #[serde(flatten)]
    pub status: PlacementStatus,
}
