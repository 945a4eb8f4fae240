//! HelmOp: a Helm chart from a repository or an OCI registry deployed to clusters without git (Fleet 0.13).
//! Its spec embeds a Bundle's spec (chart reference in `helm`, values, targets, options); the controller turns
//! it into one Bundle of the same name whose chart the agents download themselves.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::bundle::BundleSpec;
use crate::omit::{is_false, null_as_zero};
use crate::status::StatusBase;

/// Label on a HelmOp's Bundle and its BundleDeployments: the HelmOp's name (Fleet's `HelmOpLabel`).
pub const HELMOP_LABEL: &str = "fleet.cattle.io/fleet-helm-name";
/// Condition type: the HelmOp's spec was accepted (valid, its Bundle written).
pub const HELMOP_ACCEPTED: &str = "Accepted";
/// Condition type: the result of the last poll of the chart source for new versions.
pub const HELMOP_POLLED: &str = "Polled";
/// Type of the copy of a HelmOp's `helmSecretName` Secret that the agent reads in its cluster namespace.
pub const SECRET_TYPE_HELMOPS_ACCESS: &str = "fleet.cattle.io/bundle-helmops-access/v1alpha1";
/// Label on Secrets Fleet copies into cluster namespaces for agents (`"true"`).
pub const INTERNAL_SECRET_LABEL: &str = "fleet.cattle.io/bundle-internal-secret";

/// HelmOp spec: a Bundle's spec (Go embeds `BundleSpec` inline) plus the chart source's access and polling.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "fleet.cattle.io",
    version = "v1alpha1",
    kind = "HelmOp",
    plural = "helmops",
    namespaced,
    status = "HelmOpStatus",
    category = "fleet",
    doc = "A Fleet HelmOp: a Helm chart from a repository or OCI registry, with values and targets, deployed to clusters without a git repository.",
    printcolumn = r#"{"name":"Repo","type":"string","jsonPath":".spec.helm.repo"}"#,
    printcolumn = r#"{"name":"Chart","type":"string","jsonPath":".spec.helm.chart"}"#,
    printcolumn = r#"{"name":"Version","type":"string","jsonPath":".status.version"}"#,
    printcolumn = r#"{"name":"BundleDeployments-Ready","type":"string","jsonPath":".status.display.readyBundleDeployments"}"#,
    printcolumn = r#"{"name":"Status","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].message"}"#
)]
#[serde(default, rename_all = "camelCase")]
pub struct HelmOpSpec {
    /// The Bundle's spec: `helm` names the chart (`repo`, `chart`, `version` constraint), values, targets.
    #[serde(flatten)]
    pub bundle: BundleSpec,
    /// Labels copied to the Bundle (usable in a `dependsOn` selector).
    #[serde(skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_zero")]
    pub labels: BTreeMap<String, String>,
    /// How often to look for a new chart version matching the constraint (Go duration); no polling when
    /// unset or `0`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32), extend("x-kubernetes-validations" = crate::validation::go_duration_rules()))]
    pub polling_interval: Option<String>,
    /// Secret with the chart source's credentials (`username`, `password`, `cacerts`, `insecureSkipVerify`,
    /// `basicHTTP`).
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub helm_secret_name: String,
    /// Skip TLS verification of the chart source.
    #[serde(
        rename = "insecureSkipTLSVerify",
        skip_serializing_if = "is_false",
        deserialize_with = "null_as_zero"
    )]
    pub insecure_skip_tls_verify: bool,
}

/// Observed state of a HelmOp: the aggregated status of its Bundle (Go embeds `StatusBase`), the chart
/// version deployed and when polling last ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct HelmOpStatus {
    /// Aggregated status of the Bundle's BundleDeployments.
    #[serde(flatten)]
    pub base: StatusBase,
    /// When polling for a new chart version last ran.
    #[serde(rename = "lastPollingTriggered", skip_serializing_if = "Option::is_none")]
    pub last_polling_time: Option<Time>,
    /// The chart version the version constraint resolved to, which the Bundle deploys.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub version: String,
}
