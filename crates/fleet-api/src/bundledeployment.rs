//! BundleDeployment: one Bundle staged for and deployed to one cluster, in that cluster's
//! namespace. The controller writes its spec; the cluster's agent writes its status. Also the keys of its
//! options Secret, where the controller moves its Helm values, and how they are read back
//! ([`options_secret_values`]).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::bundle::BundleRef;
use crate::condition::Condition;
use crate::omit::{is_false, is_zero, null_as_zero};
use crate::options::{BundleDeploymentOptions, CorrectDrift, HelmOpOptions};
use crate::summary::{ModifiedStatus, NonReadyStatus, ObjectRef, ResourceCounts};

/// BundleDeployment spec: the staged and the current deployment (options and IDs).
/// `deploymentID` is `<manifest ID>:<sha256 of the options' Go JSON>`.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "fleet.cattle.io",
    version = "v1alpha1",
    kind = "BundleDeployment",
    namespaced,
    status = "BundleDeploymentStatus",
    doc = "A Fleet BundleDeployment: a Bundle with its cluster-specific options, staged for and deployed to one cluster by that cluster's agent.",
    printcolumn = r#"{"name":"Deployed","type":"string","jsonPath":".status.display.deployed"}"#,
    printcolumn = r#"{"name":"Monitored","type":"string","jsonPath":".status.display.monitored"}"#,
    printcolumn = r#"{"name":"Status","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].message"}"#
)]
#[serde(default, rename_all = "camelCase")]
pub struct BundleDeploymentSpec {
    /// Do not promote staged changes; the deployment shows OutOfSync.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub paused: bool,
    /// Options staged for the next deployment (always serialized, like Go).
    #[serde(deserialize_with = "null_as_zero")]
    pub staged_options: BundleDeploymentOptions,
    /// ID of the staged deployment.
    #[serde(
        rename = "stagedDeploymentID",
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_zero"
    )]
    pub staged_deployment_id: String,
    /// Options of the current deployment (always serialized, like Go).
    #[serde(deserialize_with = "null_as_zero")]
    pub options: BundleDeploymentOptions,
    /// ID of the current deployment.
    #[serde(
        rename = "deploymentID",
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_zero"
    )]
    pub deployment_id: String,
    /// Bundles that must be ready on this cluster first.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub depends_on: Vec<BundleRef>,
    /// Drift correction settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub correct_drift: Option<CorrectDrift>,
    /// Contents are stored in an OCI registry.
    #[serde(
        rename = "ociContents",
        skip_serializing_if = "is_false",
        deserialize_with = "null_as_zero"
    )]
    pub oci_contents: bool,
    /// Chart access options of HelmOp deployments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub helm_chart_options: Option<HelmOpOptions>,
    /// Hash of the values in the options Secret.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub values_hash: String,
    /// Generation of the copied downstream resources.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub downstream_resources_generation: i64,
    /// The cluster is outside its active schedule: the agent skips it.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub off_schedule: bool,
    /// The options Secret is not written yet.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub waiting_for_values: bool,
}

/// Observed state of a BundleDeployment, written by the agent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct BundleDeploymentStatus {
    /// `Ready`, `Installed`, `Deployed` and `Monitored`.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub conditions: Vec<Condition>,
    /// The deploymentID last applied by the agent.
    #[serde(
        rename = "appliedDeploymentID",
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_zero"
    )]
    pub applied_deployment_id: String,
    /// The release, as `namespace/name:version`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub release: String,
    /// All deployed resources are ready.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub ready: bool,
    /// No deployed resource has drifted.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub non_modified: bool,
    /// Resources that are not ready (at most ten).
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub non_ready_status: Vec<NonReadyStatus>,
    /// Resources that are missing, extra or patched (at most ten).
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub modified_status: Vec<ModifiedStatus>,
    /// One of the lists above was truncated.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub incomplete_state: bool,
    /// Display fields (always serialized, like Go).
    #[serde(deserialize_with = "null_as_zero")]
    pub display: BundleDeploymentDisplay,
    /// `forceSyncGeneration` last synced by the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync_generation: Option<i64>,
    /// Resources of the deployed release.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub resources: Vec<BundleDeploymentResource>,
    /// Resources per state.
    #[serde(deserialize_with = "null_as_zero")]
    pub resource_counts: ResourceCounts,
    /// Generation of the downstream resources last copied.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub downstream_resources_generation: i64,
}

/// Display fields of a BundleDeployment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct BundleDeploymentDisplay {
    /// Status of the `Deployed` condition, or `Error: <message>`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub deployed: String,
    /// Status of the `Monitored` condition, or `Error: <message>`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub monitored: String,
    /// The deployment's state.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub state: String,
}

/// A resource of the deployed release.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct BundleDeploymentResource {
    /// The object.
    #[serde(flatten)]
    pub object: ObjectRef,
    /// Creation time of the object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<Time>,
}

/// Key of a BundleDeployment's options Secret (type
/// [`SECRET_TYPE_BUNDLE_DEPLOYMENT_OPTIONS`](crate::labels::SECRET_TYPE_BUNDLE_DEPLOYMENT_OPTIONS), same
/// name) holding the Helm values of `spec.options`, as JSON.
pub const OPTIONS_SECRET_VALUES: &str = "values";
/// Key of a BundleDeployment's options Secret holding the Helm values of `spec.stagedOptions`, as JSON.
pub const OPTIONS_SECRET_STAGED_VALUES: &str = "stagedValues";

/// The values under a key of an options Secret are not a JSON object. Carries nothing of them: they may
/// hold secrets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValuesNotAnObject;

impl std::fmt::Display for ValuesNotAnObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the values are not a JSON object")
    }
}

impl std::error::Error for ValuesNotAnObject {}

/// The Helm values an options Secret's `data` holds under `key` ([`OPTIONS_SECRET_VALUES`] or
/// [`OPTIONS_SECRET_STAGED_VALUES`]): `None` when the key is absent or holds nothing, `{}` or `null` (Go's
/// `json.Marshal` of a nil map, as Fleet may write it).
pub fn options_secret_values(
    data: Option<&std::collections::BTreeMap<String, k8s_openapi::ByteString>>,
    key: &str,
) -> Result<Option<crate::GenericMap>, ValuesNotAnObject> {
    let bytes = data
        .and_then(|data| data.get(key))
        .map(|bytes| bytes.0.as_slice())
        .unwrap_or_default();
    if bytes.is_empty() || bytes == b"{}" || bytes == b"null" {
        return Ok(None);
    }
    serde_json::from_slice(bytes)
        .map(Some)
        .map_err(|_| ValuesNotAnObject)
}

/// `spec.valuesHash` of a BundleDeployment whose options Secret holds `values` and `staged_values` (the JSON
/// texts under [`OPTIONS_SECRET_VALUES`] and [`OPTIONS_SECRET_STAGED_VALUES`], empty when absent): sha256 of the
/// one followed by the other, lowercase hex, as Fleet's `HashOptions`. The controller writes it; the agent checks
/// a Secret against it before deploying its values.
pub fn options_values_hash(values: &[u8], staged_values: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let mut digest = Sha256::new();
    digest.update(values);
    digest.update(staged_values);
    hex::encode(digest.finalize())
}

#[cfg(test)]
mod options_secret_tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn options_secret_values_are_read_from_their_key_and_nothing_is_none() {
        let data = |value: &str| {
            BTreeMap::from([(
                OPTIONS_SECRET_VALUES.to_string(),
                k8s_openapi::ByteString(value.as_bytes().to_vec()),
            )])
        };
        let read = |value: &str| options_secret_values(Some(&data(value)), OPTIONS_SECRET_VALUES);
        let values = read(r#"{"replicas":2}"#).unwrap().unwrap();
        assert_eq!(values.0["replicas"], serde_json::json!(2));
        for nothing in ["", "{}", "null"] {
            assert_eq!(read(nothing), Ok(None), "{nothing:?}");
        }
        assert_eq!(
            options_secret_values(Some(&data("{}")), OPTIONS_SECRET_STAGED_VALUES),
            Ok(None)
        );
        assert_eq!(options_secret_values(None, OPTIONS_SECRET_VALUES), Ok(None));
        let err = read(r#"["password-123"]"#).unwrap_err();
        assert!(!err.to_string().contains("password-123"));
    }

    #[test]
    fn the_values_hash_is_sha256_of_the_values_then_the_staged_values() {
        // sha256("") and sha256("{\"a\":1}") (as `printf ... | sha256sum` prints them).
        assert_eq!(
            options_values_hash(b"", b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            options_values_hash(br#"{"a":1}"#, b""),
            options_values_hash(b"", br#"{"a":1}"#)
        );
        assert_ne!(
            options_values_hash(br#"{"a":1}"#, b"{}"),
            options_values_hash(b"{}", br#"{"a":1}"#)
        );
    }
}
