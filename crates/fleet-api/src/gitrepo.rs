//! GitRepo: a git repository (branch or revision, paths) that Fleet watches and turns into
//! Bundles, with the clusters those bundles target.

use k8s_openapi::ByteString;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omit::{is_false, is_zero, null_as_zero};
use crate::options::CorrectDrift;
use crate::placement::{BundlePlacementStatus, PlacementPolicy};
use crate::selector::LabelSelector;
use crate::status::StatusBase;

/// GitRepo spec: where the repository is, how to reach it, what to read from it and where
/// to deploy it.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "fleet.cattle.io",
    version = "v1alpha1",
    kind = "GitRepo",
    namespaced,
    status = "GitRepoStatus",
    category = "fleet",
    doc = "A Fleet GitRepo: a git repository watched by Fleet; each commit is read into Bundles deployed to the targeted clusters.",
    printcolumn = r#"{"name":"Repo","type":"string","jsonPath":".spec.repo"}"#,
    printcolumn = r#"{"name":"Commit","type":"string","jsonPath":".status.commit"}"#,
    printcolumn = r#"{"name":"BundleDeployments-Ready","type":"string","jsonPath":".status.display.readyBundleDeployments"}"#,
    printcolumn = r#"{"name":"Status","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].message"}"#,
    printcolumn = r#"{"name":"Scheduled","type":"string","jsonPath":".status.conditions[?(@.type==\"Scheduled\")].status"}"#
)]
#[serde(default, rename_all = "camelCase")]
pub struct GitRepoSpec {
    /// URL of the repository (https, ssh, `file://` or a local path).
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    #[schemars(length(min = 1))]
    pub repo: String,
    /// Branch to follow; `master` when neither branch nor revision is set.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub branch: String,
    /// Commit SHA or tag; takes precedence over `branch`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub revision: String,
    /// Forces every resource into this namespace; cluster-scoped resources are rejected.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub target_namespace: String,
    /// Secret with git credentials (`kubernetes.io/basic-auth` or `kubernetes.io/ssh-auth`).
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub client_secret_name: String,
    /// Secret with credentials for private Helm repositories.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub helm_secret_name: String,
    /// Secret with Helm credentials per bundle path (key `secrets-path.yaml`).
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub helm_secret_name_for_paths: String,
    /// Helm credentials are only sent to repository URLs matching this regex.
    #[serde(
        rename = "helmRepoURLRegex",
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_zero"
    )]
    pub helm_repo_url_regex: String,
    /// PEM CA bundle to verify the git server (base64 in JSON).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", extend("format" = "byte"))]
    pub ca_bundle: Option<ByteString>,
    /// Skip TLS verification of the git server.
    #[serde(
        rename = "insecureSkipTLSVerify",
        skip_serializing_if = "is_false",
        deserialize_with = "null_as_zero"
    )]
    pub insecure_skip_tls_verify: bool,
    /// Directories (globs) to read bundles from; the repository root when empty.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub paths: Vec<String>,
    /// Do not roll out changes; deployments show OutOfSync.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub paused: bool,
    /// Downstream service account used to deploy.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub service_account: String,
    /// Clusters or cluster groups to deploy to; the `default` ClusterGroup when empty.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub targets: Vec<GitTarget>,
    /// How often to poll the remote (Go duration); 15s by default.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32), extend("x-kubernetes-validations" = crate::validation::go_duration_rules()))]
    pub polling_interval: Option<String>,
    /// Increment to force a redeployment.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub force_sync_generation: i64,
    /// Interval of image scan write-back (Go duration).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32), extend("x-kubernetes-validations" = crate::validation::go_duration_rules()))]
    pub image_scan_interval: Option<String>,
    /// How image-scan commits are authored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_scan_commit: Option<CommitSpec>,
    /// Keep deployed resources when the GitRepo is deleted.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub keep_resources: bool,
    /// Delete the created namespace when the GitRepo is deleted.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub delete_namespace: bool,
    /// Drift correction for all bundles of this repository.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub correct_drift: Option<CorrectDrift>,
    /// Do not poll; only webhooks trigger fetches.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub disable_polling: bool,
    /// Secret of an OCI registry to store bundle contents in (experimental in Fleet).
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub oci_registry_secret: String,
    /// Secret with the webhook secrets for this GitRepo.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub webhook_secret: String,
    /// Explicit bundle list ("driven scan") instead of walking `paths`.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub bundles: Vec<BundlePath>,
    /// Our addition: placement policy for every bundle of this repository (see
    /// [`crate::placement`]). Absent means Fleet's behaviour.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<PlacementPolicy>,
}

/// A cluster or cluster group to deploy to. All given criteria must match; an entry with
/// none matches nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct GitTarget {
    /// Name of the target.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub name: String,
    /// A cluster, by name.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub cluster_name: String,
    /// Clusters, by labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_selector: Option<LabelSelector>,
    /// A ClusterGroup in the clusters' namespace, by name.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub cluster_group: String,
    /// ClusterGroups, by labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_group_selector: Option<LabelSelector>,
}

/// One entry of a driven scan: a bundle directory and, optionally, the options file to use
/// instead of its `fleet.yaml`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct BundlePath {
    /// Bundle directory, relative to the repository root.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub base: String,
    /// Alternative fleet.yaml file, relative to `base` (paths inside it are relative to `base` too).
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub options: String,
}

/// Author and message template of image-scan commits.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct CommitSpec {
    /// Author name.
    #[serde(deserialize_with = "null_as_zero")]
    pub author_name: String,
    /// Author email.
    #[serde(deserialize_with = "null_as_zero")]
    pub author_email: String,
    /// Template of the commit message.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub message_template: String,
}

/// Observed state of a GitRepo: the deployed commit, polling and job state, and the
/// aggregated status of its bundles.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct GitRepoStatus {
    /// Aggregated status of the bundles (Go embeds `StatusBase` inline).
    #[serde(flatten)]
    pub base: StatusBase,
    /// Generation of the spec this status describes.
    #[serde(deserialize_with = "null_as_zero")]
    pub observed_generation: i64,
    /// `forceSyncGeneration` of the last sync.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub update_generation: i64,
    /// Commit of the last successful read.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub commit: String,
    /// Latest commit announced by a webhook.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub webhook_commit: String,
    /// When the last webhook arrived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_webhook_time: Option<Time>,
    /// Latest commit found by polling.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub polling_commit: String,
    /// State of the last sync job (`Current`, `InProgress`, `Failed`, `Terminating`).
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub git_job_status: String,
    /// When images were last scanned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_synced_image_scan_time: Option<Time>,
    /// When polling last ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_polling_triggered: Option<Time>,
    /// Our addition: the placement decisions of the repository's Bundles that have a placement
    /// block, by Bundle name.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub placement: Vec<BundlePlacementStatus>,
}
