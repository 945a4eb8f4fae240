//! BundleNamespaceMapping: lets the bundles of one namespace target clusters registered in
//! other namespaces.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::selector::LabelSelector;

/// BundleNamespaceMapping fields (top level, no `spec` wrapper, as in Fleet). Both selectors
/// are required: a mapping with either missing matches nothing.
#[derive(
    CustomResource, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "fleet.cattle.io",
    version = "v1alpha1",
    kind = "BundleNamespaceMapping",
    namespaced,
    no_spec,
    status = "EmptyStatus",
    doc = "A Fleet BundleNamespaceMapping: bundles of this namespace matching bundleSelector may target clusters in namespaces matching namespaceSelector."
)]
#[serde(default, rename_all = "camelCase")]
pub struct BundleNamespaceMappingFields {
    /// Selects the bundles (of the mapping's namespace) by their labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bundle_selector: Option<LabelSelector>,
    /// Selects the namespaces whose clusters those bundles may target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
}

/// Status of kinds whose Fleet CRD has a status subresource but no status fields.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EmptyStatus {}
