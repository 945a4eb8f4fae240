//! ImageScan: a container image repository whose tags the controller lists periodically, choosing the newest by
//! a semver range or alphabetical order, so that the markers (`# {"$imagescan": "<tagName>"}`) in the GitRepo's
//! files can be rewritten to it and committed. Created from fleet.yaml's `imageScans` (or by hand), one per
//! entry, with `spec.gitrepoName` naming the GitRepo whose repository is updated.

use k8s_openapi::api::core::v1::LocalObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::condition::Condition;
use crate::omit::{is_false, is_zero, null_as_zero};

/// Condition type on an ImageScan: the result of the last tag listing (Fleet's `ImageScanScanCondition`).
pub const IMAGESCAN_SCANNED: &str = "ImageScanned";
/// Condition type on a GitRepo: the result of the last commit and push of scanned images (Fleet's
/// `ImageScanSyncCondition`).
pub const IMAGESCAN_SYNCED: &str = "ImageSynced";

/// ImageScan spec (Fleet's `ImageScanSpec`, itself modelled on Flux's image reflector).
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "fleet.cattle.io",
    version = "v1alpha1",
    kind = "ImageScan",
    plural = "imagescans",
    namespaced,
    status = "ImageScanStatus",
    doc = "A Fleet ImageScan: an image repository scanned for the newest tag, written back to the GitRepo's files at their $imagescan markers.",
    printcolumn = r#"{"name":"Repository","type":"string","jsonPath":".spec.image"}"#,
    printcolumn = r#"{"name":"Latest","type":"string","jsonPath":".status.latestTag"}"#
)]
#[serde(default, rename_all = "camelCase")]
pub struct ImageScanSpec {
    /// The marker name used in the repository's files (`{"$imagescan": "<tagName>"}`); unique per bundle.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    #[schemars(extend("nullable" = true))]
    pub tag_name: String,
    /// The GitRepo (same namespace) whose repository the scan updates.
    #[serde(
        rename = "gitrepoName",
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_zero"
    )]
    #[schemars(extend("nullable" = true))]
    pub gitrepo_name: String,
    /// The image repository, e.g. `registry.example.com/team/app` (a tag or digest in it is ignored).
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    #[schemars(extend("nullable" = true))]
    pub image: String,
    /// Time between scans (Go duration); 15m when unset or `0`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    #[schemars(length(min = 1, max = 32), extend("nullable" = true, "x-kubernetes-validations" = crate::validation::go_duration_rules()))]
    pub interval: String,
    /// A `kubernetes.io/dockerconfigjson` Secret with the registry's credentials.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("nullable" = true))]
    pub secret_ref: Option<LocalObjectReference>,
    /// Stops further scans.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub suspend: bool,
    /// How the newest tag is chosen; semver `*` when neither is set.
    #[serde(deserialize_with = "null_as_zero")]
    pub policy: ImagePolicyChoice,
}

/// One of the tag policies.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ImagePolicyChoice {
    /// The highest semantic version within a range.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("nullable" = true))]
    pub semver: Option<SemVerPolicy>,
    /// The last tag in alphabetical order.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("nullable" = true))]
    pub alphabetical: Option<AlphabeticalPolicy>,
}

/// A semver range (Masterminds syntax: `>=1.2.0 <2`, `~1.2`, `^1`, `1.x`, `*`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct SemVerPolicy {
    /// The range; pre-releases count only when the range names one.
    #[serde(deserialize_with = "null_as_zero")]
    #[schemars(extend("nullable" = true))]
    pub range: String,
}

/// Alphabetical ordering of tags.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct AlphabeticalPolicy {
    /// `asc` picks the first tag, `desc` (the default) the last.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    #[schemars(extend("nullable" = true))]
    pub order: String,
}

/// What the last scan found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ImageScanStatus {
    /// `ImageScanned`: the last scan's result, its error in the message.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub conditions: Vec<Condition>,
    /// When the tags were last listed successfully.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_scan_time: Option<Time>,
    /// `<canonicalImageName>:<latestTag>`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub latest_image: String,
    /// The newest tag by the policy.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub latest_tag: String,
    /// The manifest digest of the latest tag (`sha256:…`).
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub latest_digest: String,
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub observed_generation: i64,
    /// The image repository with the implied registry made explicit, e.g. `index.docker.io/library/alpine`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub canonical_image_name: String,
}
