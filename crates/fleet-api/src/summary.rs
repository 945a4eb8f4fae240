//! Status building blocks shared by Bundle, BundleDeployment, GitRepo, Cluster and
//! ClusterGroup: per-state counts of BundleDeployments, non-ready and modified resources,
//! and per-state resource counts.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omit::{is_false, is_zero, null_as_zero};
use crate::state::BundleState;

/// How many BundleDeployments are in each state, plus up to ten non-ready bundles.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct BundleSummary {
    /// Deployed, with some resources not ready.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub not_ready: i64,
    /// Waiting to be deployed by the agent.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub wait_applied: i64,
    /// Failed to deploy.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub err_applied: i64,
    /// Staged but not yet picked up by the agent.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub out_of_sync: i64,
    /// Deployed and ready, but drifted from the bundle.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub modified: i64,
    /// Deployed with every resource ready (always serialized).
    #[serde(deserialize_with = "null_as_zero")]
    pub ready: i64,
    /// Not yet created by the controller.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub pending: i64,
    /// How many should be ready (always serialized).
    #[serde(deserialize_with = "null_as_zero")]
    pub desired_ready: i64,
    /// Bundles that are not ready, with their states (at most ten).
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub non_ready_resources: Vec<NonReadyResource>,
}

/// A bundle (or BundleDeployment) that is not ready, with the resources that make it so.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct NonReadyResource {
    /// Name of the bundle or BundleDeployment.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub name: String,
    /// Its state, e.g. `NotReady` or `ErrApplied`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bundle_state: Option<BundleState>,
    /// Why it is not ready.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub message: String,
    /// Modified resources.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub modified_status: Vec<ModifiedStatus>,
    /// Non-ready resources.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub non_ready_status: Vec<NonReadyStatus>,
}

/// Identifies a Kubernetes object in Fleet's status types: kind, API version, namespace and
/// name, in that (Go) order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ObjectRef {
    /// Kind of the object.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub kind: String,
    /// API version of the object.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub api_version: String,
    /// Namespace of the object.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub namespace: String,
    /// Name of the object.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub name: String,
}

impl fmt::Display for ObjectRef {
    /// Fleet's spelling in status messages: `kind.group namespace/name`, where the group is
    /// the part of the API version before `/` (so core objects read `configmap.v1 ns/name`).
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.kind.to_lowercase();
        match self
            .api_version
            .split('/')
            .next()
            .filter(|group| !group.is_empty())
        {
            Some(group) => write!(formatter, "{kind}.{group} ")?,
            None => write!(formatter, "{kind} ")?,
        }
        if self.namespace.is_empty() {
            formatter.write_str(&self.name)
        } else {
            write!(formatter, "{}/{}", self.namespace, self.name)
        }
    }
}

/// A deployed object that differs from the bundle: missing, extra, or patched.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ModifiedStatus {
    /// The object.
    #[serde(flatten)]
    pub object: ObjectRef,
    /// The object is in the bundle but missing from the cluster (Go name `Create`).
    #[serde(
        rename = "missing",
        skip_serializing_if = "is_false",
        deserialize_with = "null_as_zero"
    )]
    pub create: bool,
    /// A missing object's name is taken by an object the bundle does not own.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub exist: bool,
    /// The object is on the cluster but no longer in the bundle (orphaned).
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub delete: bool,
    /// JSON patch from the desired to the live object.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub patch: String,
}

impl fmt::Display for ModifiedStatus {
    /// Fleet's message: `<object> missing`, `<object> extra` or `<object> modified <patch>`.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.create {
            write!(formatter, "{} missing", self.object)
        } else if self.delete {
            write!(formatter, "{} extra", self.object)
        } else {
            write!(formatter, "{} modified {}", self.object, self.patch)
        }
    }
}

/// A deployed object that is not ready, with its readiness summary.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct NonReadyStatus {
    /// UID of the object.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub uid: String,
    /// The object.
    #[serde(flatten)]
    pub object: ObjectRef,
    /// Readiness summary. Go embeds it by value, so it is always serialized.
    #[serde(deserialize_with = "null_as_zero")]
    pub summary: ResourceSummary,
}

/// Readiness of one object as computed by the agent (wrangler's `summary.Summary`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ResourceSummary {
    /// Short state, e.g. `in-progress` or `unavailable`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub state: String,
    /// The object is in an error state.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub error: bool,
    /// The object is changing state.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub transitioning: bool,
    /// Messages explaining the state.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub message: Vec<String>,
}

/// How many deployed resources are in each state. Every count is always serialized.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ResourceCounts {
    /// Ready resources.
    #[serde(deserialize_with = "null_as_zero")]
    pub ready: i64,
    /// Resources that should be ready.
    #[serde(deserialize_with = "null_as_zero")]
    pub desired_ready: i64,
    /// Resources waiting to be applied.
    #[serde(deserialize_with = "null_as_zero")]
    pub wait_applied: i64,
    /// Modified resources.
    #[serde(deserialize_with = "null_as_zero")]
    pub modified: i64,
    /// Resources on the cluster that the bundle no longer declares.
    #[serde(deserialize_with = "null_as_zero")]
    pub orphaned: i64,
    /// Resources the bundle declares that are missing from the cluster.
    #[serde(deserialize_with = "null_as_zero")]
    pub missing: i64,
    /// Resources whose state is unknown.
    #[serde(deserialize_with = "null_as_zero")]
    pub unknown: i64,
    /// Resources that are not ready.
    #[serde(deserialize_with = "null_as_zero")]
    pub not_ready: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(api_version: &str, kind: &str, namespace: &str, name: &str) -> ObjectRef {
        ObjectRef {
            kind: kind.into(),
            api_version: api_version.into(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    #[test]
    fn objects_display_like_fleet_messages() {
        let deployment = object("apps/v1", "Deployment", "default", "frontend");
        assert_eq!(deployment.to_string(), "deployment.apps default/frontend");
        assert_eq!(
            object("v1", "ConfigMap", "", "c").to_string(),
            "configmap.v1 c"
        );
        assert_eq!(object("", "Secret", "ns", "s").to_string(), "secret ns/s");
        let patched = ModifiedStatus {
            object: deployment.clone(),
            patch: r#"{"spec":{"replicas":3}}"#.into(),
            ..ModifiedStatus::default()
        };
        assert_eq!(
            patched.to_string(),
            r#"deployment.apps default/frontend modified {"spec":{"replicas":3}}"#
        );
        let extra = ModifiedStatus {
            object: deployment,
            delete: true,
            ..ModifiedStatus::default()
        };
        assert_eq!(extra.to_string(), "deployment.apps default/frontend extra");
    }

    #[test]
    fn ready_and_desired_ready_are_always_serialized() {
        assert_eq!(
            serde_json::to_string(&BundleSummary::default()).unwrap(),
            r#"{"ready":0,"desiredReady":0}"#
        );
    }

    #[test]
    fn modified_status_uses_go_names() {
        let status = ModifiedStatus {
            object: ObjectRef {
                kind: "ConfigMap".into(),
                name: "a".into(),
                ..ObjectRef::default()
            },
            create: true,
            ..ModifiedStatus::default()
        };
        assert_eq!(
            serde_json::to_string(&status).unwrap(),
            r#"{"kind":"ConfigMap","name":"a","missing":true}"#
        );
        assert_eq!(status.to_string(), "configmap a missing");
    }
}
