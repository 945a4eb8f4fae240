//! Content: the manifest of a bundle (its resources as gzip'd JSON), stored once per
//! manifest ID and shared by every BundleDeployment that deploys it. Cluster-scoped.

use k8s_openapi::ByteString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omit::{is_zero, null_as_zero};

/// Content fields (top level, no `spec` wrapper, as in Fleet). The object is named after the
/// manifest ID (`s-<sha256>` truncated to 63 characters).
#[derive(
    CustomResource, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "fleet.cattle.io",
    version = "v1alpha1",
    kind = "Content",
    no_spec,
    status = "ContentStatus",
    doc = "A Fleet Content: the gzip-compressed JSON manifest of a bundle's resources, named after its manifest ID."
)]
#[serde(default)]
pub struct ContentFields {
    /// Gzip of the manifest JSON (base64 in JSON).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", extend("format" = "byte"))]
    pub content: Option<ByteString>,
    /// SHA-256 (hex) of the uncompressed manifest JSON.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub sha256sum: String,
}

/// Observed state of a Content object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ContentStatus {
    /// Number of BundleDeployments referring to it.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub reference_count: i64,
}
