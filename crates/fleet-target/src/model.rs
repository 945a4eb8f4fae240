//! The plain input model of the targeting core: clusters (labels, annotations, template values,
//! properties, health; taints, custom scores and resource usage as fleet-api's types) and cluster
//! groups. The controller maps Fleet's Cluster and ClusterGroup CRDs onto these; `fleet target`
//! reads them from YAML. The time is supplied by the caller (Unix seconds), so every function here
//! stays pure.

use std::collections::BTreeMap;
use std::fmt;

use fleet_api::{ClusterScore, ClusterTaint, ResourceUsage, TAINT_NO_SCHEDULE, TAINT_NO_SELECT};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::{Deserialize, Serialize};

use crate::selector::{LabelSelector, Labels};

/// Unix time in seconds.
pub type UnixSeconds = i64;

/// Identity of a cluster: its namespace (the Fleet workspace) and name. Ordered by namespace,
/// then name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ClusterKey {
    pub namespace: String,
    pub name: String,
}

impl ClusterKey {
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        ClusterKey {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

impl fmt::Display for ClusterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// One cluster as the targeting core sees it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterInfo {
    pub name: String,
    pub namespace: String,
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub labels: Labels,
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub annotations: Labels,
    /// `spec.templateValues`, exposed to `${ }` templates as `.ClusterValues`.
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub template_values: serde_json::Map<String, serde_json::Value>,
    /// `spec.paused`: BundleDeployments are staged but never promoted.
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub paused: bool,
    /// `spec.taints`.
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub taints: Vec<ClusterTaint>,
    /// Named properties (Kubernetes quantity strings), e.g. `kubernetes-fleet.io/node-count`.
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub properties: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub resource_usage: ResourceUsage,
    /// Custom scores with an optional expiry (like OCM's AddOnPlacementScore); readable by
    /// property sorters and selectors under their name until they expire.
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub scores: Vec<ClusterScore>,
    /// Agent-reported health; `None` means no agent data is known (offline use), which the
    /// scheduler treats as eligible.
    #[serde(default)]
    pub health: Option<ClusterHealth>,
}

impl ClusterInfo {
    /// A cluster with only a namespace, name and labels (the rest defaulted).
    pub fn new<'a>(
        namespace: &str,
        name: &str,
        labels: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Self {
        ClusterInfo {
            name: name.to_string(),
            namespace: namespace.to_string(),
            labels: labels
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..ClusterInfo::default()
        }
    }

    pub fn key(&self) -> ClusterKey {
        ClusterKey::new(&self.namespace, &self.name)
    }
}

/// Membership and health facts reported by the agent and the hub.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterHealth {
    /// The cluster's agent has joined (registration granted, `Joined=True`).
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub joined: bool,
    /// The cluster is leaving the fleet (being deleted).
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub leaving: bool,
    #[serde(default)]
    pub last_heartbeat: Option<UnixSeconds>,
    /// The `Healthy` condition, if the agent reported one.
    #[serde(default)]
    pub healthy: Option<HealthCondition>,
}

/// A `Healthy` condition: its status and when it last changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HealthCondition {
    pub status: bool,
    pub last_transition: UnixSeconds,
}

/// What a taint does to placements that do not tolerate it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum TaintEffect {
    /// No new placement; existing placements stay (KubeFleet's only effect).
    NoSchedule,
    /// No new placement, and existing placements move away once no toleration covers the
    /// taint any more (OCM's effect; an expired `tolerationSeconds` stops covering it).
    NoSelect,
}

impl TaintEffect {
    /// The effect of a Cluster taint (`spec.taints[].effect`).
    pub fn of(taint: &ClusterTaint) -> Result<TaintEffect, UnknownTaintEffect> {
        match taint.effect.as_str() {
            TAINT_NO_SCHEDULE => Ok(TaintEffect::NoSchedule),
            TAINT_NO_SELECT => Ok(TaintEffect::NoSelect),
            _ => Err(UnknownTaintEffect {
                taint: show_taint(taint),
            }),
        }
    }

    /// The name the API stores.
    pub fn as_str(self) -> &'static str {
        match self {
            TaintEffect::NoSchedule => TAINT_NO_SCHEDULE,
            TaintEffect::NoSelect => TAINT_NO_SELECT,
        }
    }
}

/// A taint whose effect is neither `NoSchedule` nor `NoSelect`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("taint {taint} has an unknown effect (expected NoSchedule or NoSelect)")]
pub struct UnknownTaintEffect {
    /// The taint as `key[=value]:effect`.
    pub taint: String,
}

/// A taint as `key[=value]:effect`, for messages.
pub fn show_taint(taint: &ClusterTaint) -> String {
    if taint.value.is_empty() {
        format!("{}:{}", taint.key, taint.effect)
    } else {
        format!("{}={}:{}", taint.key, taint.value, taint.effect)
    }
}

/// Unix seconds of a Kubernetes time.
pub fn unix(t: &Time) -> UnixSeconds {
    t.0.as_second()
}

/// A Kubernetes time from Unix seconds; `None` outside the range a timestamp can hold.
pub fn time(seconds: UnixSeconds) -> Option<Time> {
    k8s_openapi::jiff::Timestamp::from_second(seconds)
        .ok()
        .map(Time)
}

/// A fleet written down (the clusters file of `fleet target`): clusters and cluster groups.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FleetSnapshot {
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub clusters: Vec<ClusterInfo>,
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub groups: Vec<ClusterGroupInfo>,
}

/// A ClusterGroup: its labels (matched by `clusterGroupSelector`) and its cluster selector. A
/// `None` selector selects nothing; an empty selector selects every cluster in its namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterGroupInfo {
    pub name: String,
    pub namespace: String,
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub labels: Labels,
    #[serde(default)]
    pub selector: Option<LabelSelector>,
}
