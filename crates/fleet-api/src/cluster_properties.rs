//! Cluster properties reported by the agent for targeting (our addition, modelled on
//! KubeFleet's MemberCluster status): named properties such as the node count, the
//! Kubernetes version and each custom claim, plus the cluster's summed resource usage.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omit::null_as_zero;

/// Property holding the number of nodes in the cluster.
pub const PROPERTY_NODE_COUNT: &str = "kubernetes-fleet.io/node-count";
/// Property holding the cluster's Kubernetes version (`gitVersion`, e.g. `v1.33.0`).
pub const PROPERTY_KUBERNETES_VERSION: &str = "kubernetes-fleet.io/kubernetes-version";
/// Resource name of CPU in [`ResourceUsage`] maps.
pub const RESOURCE_CPU: &str = "cpu";
/// Resource name of memory in [`ResourceUsage`] maps.
pub const RESOURCE_MEMORY: &str = "memory";

/// One observed property value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct PropertyValue {
    /// The value: a Kubernetes quantity for numeric properties, otherwise free text.
    #[serde(deserialize_with = "null_as_zero")]
    pub value: String,
    /// When the agent observed this value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observation_time: Option<Time>,
}

/// Resources of the cluster summed over its nodes; maps resource name (`cpu`, `memory`)
/// to a Kubernetes quantity string.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ResourceUsage {
    /// Sum of the nodes' `status.capacity`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_zero")]
    pub capacity: BTreeMap<String, String>,
    /// Sum of the nodes' `status.allocatable`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_zero")]
    pub allocatable: BTreeMap<String, String>,
    /// Allocatable minus the requests of scheduled, non-terminal pods (never below 0).
    #[serde(skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_zero")]
    pub available: BTreeMap<String, String>,
    /// When the agent observed these figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observation_time: Option<Time>,
}
