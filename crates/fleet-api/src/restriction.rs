//! GitRepoRestriction: limits what the GitRepos of a namespace may use (service accounts,
//! repository URLs, client secrets, target namespaces). Deprecated in Fleet in favour of
//! Policy, still honoured.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omit::null_as_zero;

use crate::namespace_mapping::EmptyStatus;
use crate::selector::LabelSelector;

/// GitRepoRestriction fields (top level, no `spec` wrapper, as in Fleet).
#[derive(
    CustomResource, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "fleet.cattle.io",
    version = "v1alpha1",
    kind = "GitRepoRestriction",
    namespaced,
    no_spec,
    status = "EmptyStatus",
    doc = "A Fleet GitRepoRestriction: restricts the service accounts, repositories, client secrets and target namespaces that GitRepos in its namespace may use.",
    printcolumn = r#"{"name":"Default-ServiceAccount","type":"string","jsonPath":".defaultServiceAccount"}"#,
    printcolumn = r#"{"name":"Allowed-ServiceAccounts","type":"string","jsonPath":".allowedServiceAccounts"}"#
)]
#[serde(default, rename_all = "camelCase")]
pub struct GitRepoRestrictionFields {
    /// Service account used by GitRepos that set none.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub default_service_account: String,
    /// Service accounts GitRepos may use.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub allowed_service_accounts: Vec<String>,
    /// Regexes (unanchored) that the GitRepo's `repo` must match.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub allowed_repo_patterns: Vec<String>,
    /// Client secret used by GitRepos that set none.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub default_client_secret_name: String,
    /// Client secrets GitRepos may use.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub allowed_client_secret_names: Vec<String>,
    /// Target namespaces GitRepos may use; when set, a target namespace is required.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub allowed_target_namespaces: Vec<String>,
    /// Downstream namespaces with matching labels are also allowed targets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_target_namespace_selector: Option<LabelSelector>,
}
