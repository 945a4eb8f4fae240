//! One cluster as the clusters file writes it: the fields of [`ClusterInfo`], with times in Unix
//! seconds (`timeAdded` of a taint, `validUntil` of a score) and the taint effect checked while the
//! file is read, so a wrong value is reported with its line. Converted into the targeting core's
//! [`ClusterInfo`], whose taints, scores and resource usage are fleet-api's types.

use std::collections::BTreeMap;

use fleet_api::{ClusterScore, ClusterTaint, ResourceUsage};
use fleet_target::model::{ClusterHealth, ClusterInfo, TaintEffect, UnixSeconds, time};
use fleet_target::selector::Labels;
use fleet_target::serde_util::null_default;
use serde::Deserialize;

/// A cluster entry (`clusters[]`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FileCluster {
    name: String,
    namespace: String,
    #[serde(default, deserialize_with = "null_default")]
    labels: Labels,
    #[serde(default, deserialize_with = "null_default")]
    annotations: Labels,
    #[serde(default, deserialize_with = "null_default")]
    template_values: serde_json::Map<String, serde_json::Value>,
    #[serde(default, deserialize_with = "null_default")]
    paused: bool,
    #[serde(default, deserialize_with = "null_default")]
    taints: Vec<FileTaint>,
    #[serde(default, deserialize_with = "null_default")]
    properties: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "null_default")]
    resource_usage: FileResourceUsage,
    #[serde(default, deserialize_with = "null_default")]
    scores: Vec<FileScore>,
    #[serde(default)]
    health: Option<ClusterHealth>,
}

/// `taints[]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FileTaint {
    key: String,
    #[serde(default, deserialize_with = "null_default")]
    value: String,
    effect: TaintEffect,
    #[serde(default)]
    time_added: Option<UnixSeconds>,
}

/// `resourceUsage`: quantity strings by resource name.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FileResourceUsage {
    #[serde(default, deserialize_with = "null_default")]
    capacity: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "null_default")]
    allocatable: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "null_default")]
    available: BTreeMap<String, String>,
}

/// `scores[]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FileScore {
    name: String,
    value: i64,
    #[serde(default)]
    valid_until: Option<UnixSeconds>,
}

impl From<FileCluster> for ClusterInfo {
    fn from(c: FileCluster) -> Self {
        ClusterInfo {
            name: c.name,
            namespace: c.namespace,
            labels: c.labels,
            annotations: c.annotations,
            template_values: c.template_values,
            paused: c.paused,
            taints: c
                .taints
                .into_iter()
                .map(|t| ClusterTaint {
                    key: t.key,
                    value: t.value,
                    effect: t.effect.as_str().to_string(),
                    time_added: t.time_added.and_then(time),
                })
                .collect(),
            properties: c.properties,
            resource_usage: ResourceUsage {
                capacity: c.resource_usage.capacity,
                allocatable: c.resource_usage.allocatable,
                available: c.resource_usage.available,
                observation_time: None,
            },
            scores: c
                .scores
                .into_iter()
                .map(|s| ClusterScore {
                    name: s.name,
                    value: s.value,
                    valid_until: s.valid_until.and_then(time),
                })
                .collect(),
            health: c.health,
        }
    }
}
