//! Cluster registration: ClusterRegistrationToken (a credential agents use to register) and
//! ClusterRegistration (an agent's request to join, granted by the controller).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omit::{is_false, null_as_zero};

/// ClusterRegistrationToken spec.
#[derive(
    CustomResource, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "fleet.cattle.io",
    version = "v1alpha1",
    kind = "ClusterRegistrationToken",
    namespaced,
    status = "ClusterRegistrationTokenStatus",
    doc = "A Fleet ClusterRegistrationToken: a credential that lets agents register clusters into a namespace, optionally expiring.",
    printcolumn = r#"{"name":"Secret-Name","type":"string","jsonPath":".status.secretName"}"#
)]
#[serde(default)]
pub struct ClusterRegistrationTokenSpec {
    /// Time to live (Go duration, e.g. `12h`); the token is deleted when it expires.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32), extend("x-kubernetes-validations" = crate::validation::go_duration_rules()))]
    pub ttl: Option<String>,
}

/// Observed state of a ClusterRegistrationToken.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ClusterRegistrationTokenStatus {
    /// When the token expires.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires: Option<Time>,
    /// Secret holding the agent's registration values.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub secret_name: String,
}

/// ClusterRegistration spec, written by an agent (`generateName: request-`).
#[derive(
    CustomResource, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "fleet.cattle.io",
    version = "v1alpha1",
    kind = "ClusterRegistration",
    namespaced,
    status = "ClusterRegistrationStatus",
    doc = "A Fleet ClusterRegistration: an agent's request to register its cluster, granted by the controller."
)]
#[serde(default, rename_all = "camelCase")]
pub struct ClusterRegistrationSpec {
    /// Identity of the cluster.
    #[serde(
        rename = "clientID",
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_zero"
    )]
    pub client_id: String,
    /// Random string chosen by the agent; part of the registration secret's name.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub client_random: String,
    /// Labels copied onto the Cluster.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_zero")]
    pub cluster_labels: BTreeMap<String, String>,
}

/// Observed state of a ClusterRegistration.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ClusterRegistrationStatus {
    /// The Cluster this registration resolved to.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub cluster_name: String,
    /// Credentials were granted.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub granted: bool,
}
