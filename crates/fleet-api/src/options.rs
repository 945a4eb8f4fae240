//! `BundleDeploymentOptions` and everything nested in it: how one bundle is deployed to one
//! cluster (Helm, kustomize and raw-YAML settings, namespaces, drift correction, diff rules).
//!
//! Fleet hashes the Go-JSON encoding of these options into every deploymentID, so each struct
//! declares its fields in the Go declaration order and omits exactly what Go's `omitempty`
//! omits. `serde_json::to_string(&options)` then yields the bytes Fleet hashes (apart from Go's
//! HTML escaping, which [`crate::go_json`] adds).

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::generic_map::GenericMap;
use crate::omit::{is_false, is_zero, null_as_zero};
use crate::selector::LabelSelector;

/// How a bundle is deployed to a cluster: the options of a Bundle (its spec, inline), of each
/// of its targets, and the merged result staged in a BundleDeployment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct BundleDeploymentOptions {
    /// Raw-YAML options: overlay names that map to `overlays/<name>/` folders.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yaml: Option<YamlOptions>,
    /// Kustomize options, such as the directory holding `kustomization.yaml`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kustomize: Option<KustomizeOptions>,
    /// Namespace for objects that do not set one; also the Helm release namespace.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub default_namespace: String,
    /// Forces every object into this namespace; cluster-scoped objects then fail the deployment.
    /// Fleet's Go name is `TargetNamespace`.
    #[serde(
        rename = "namespace",
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_zero"
    )]
    pub target_namespace: String,
    /// Helm options: chart, repo, version, values and install flags.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub helm: Option<HelmOptions>,
    /// Downstream service account the agent impersonates to deploy.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub service_account: String,
    /// Whether the agent creates the target namespace; unset means yes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub create_namespace: Option<bool>,
    /// Bumping it forces a redeployment.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub force_sync_generation: i64,
    /// Rules that exclude fields or objects from drift ("Modified") detection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<DiffOptions>,
    /// Keep the deployed objects when the bundle is removed.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub keep_resources: bool,
    /// Delete the deployed namespace when the bundle is removed.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub delete_namespace: bool,
    /// Status conditions to ignore when judging readiness. Go embeds this struct by value
    /// under `ignore`, so it is always serialized, as `{}` when empty.
    #[serde(deserialize_with = "null_as_zero")]
    pub ignore: IgnoreOptions,
    /// Drift correction settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub correct_drift: Option<CorrectDrift>,
    /// Labels the agent sets on the target namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace_labels: Option<BTreeMap<String, String>>,
    /// Whether `pod-security.kubernetes.io/` namespace labels are applied (set by the
    /// controller from Policy objects; never taken from fleet.yaml).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_pod_security_namespace_labels: Option<bool>,
    /// Annotations the agent sets on the target namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace_annotations: Option<BTreeMap<String, String>>,
    /// Delete CRDs (and so all their custom resources) when the bundle is removed.
    #[serde(
        rename = "deleteCRDResources",
        skip_serializing_if = "is_false",
        deserialize_with = "null_as_zero"
    )]
    pub delete_crd_resources: bool,
    /// Secrets and ConfigMaps copied from the bundle's namespace into downstream clusters.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub downstream_resources: Vec<DownstreamResource>,
    /// Internal: objects that a pruned bundle also owned, so the agent re-installs them.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub overwrites: Vec<OverwrittenResource>,
    /// Internal: set from GitRepoRestrictions; the target namespace must match it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_target_namespace_selector: Option<LabelSelector>,
}

/// Raw-YAML bundle options.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct YamlOptions {
    /// Names of `overlays/<name>/` folders whose files replace or patch (`_patch.` files)
    /// the bundle's files, applied in order.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub overlays: Vec<String>,
}

/// Kustomize bundle options.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct KustomizeOptions {
    /// Directory (relative to the bundle) containing `kustomization.yaml`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub dir: String,
}

/// Helm options of a bundle. Most apply only to Helm bundles; `releaseName` applies to all,
/// since every bundle is installed as one Helm-style release.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct HelmOptions {
    /// Files (relative to the bundle) whose values are merged into `values`, in order.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub values_files: Vec<String>,
    /// Local chart path, go-getter URL, `oci://` reference, or chart name in `repo`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub chart: String,
    /// HTTPS or `oci://` chart repository.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub repo: String,
    /// Helm release name; derived from the bundle name when empty.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    #[schemars(length(max = 53))]
    #[schemars(regex(
        pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    ))]
    pub release_name: String,
    /// Chart version or semver constraint.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub version: String,
    /// Time to wait for Helm operations; above zero it also waits for readiness.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub timeout_seconds: i64,
    /// Helm values; strings may hold `${ }` templates over cluster labels and values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<GenericMap>,
    /// Values whose strings are templated first and then parsed as YAML; they override
    /// `values` keys.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_zero")]
    pub template_values: BTreeMap<String, String>,
    /// Values read downstream from ConfigMaps and Secrets at install time.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub values_from: Vec<ValuesFrom>,
    /// Replace objects that cannot be updated in place. Disables server-side apply.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub force: bool,
    /// Adopt existing objects that Helm does not own.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub take_ownership: bool,
    /// Maximum number of release revisions kept.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "null_as_zero")]
    pub max_history: i64,
    /// With `timeoutSeconds`, also wait for Jobs to complete.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub wait_for_jobs: bool,
    /// Roll back on a failed upgrade.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub atomic: bool,
    /// Skip `${ }` templating of values.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub disable_pre_process: bool,
    /// Disable DNS lookups in templates (Fleet enables them by default).
    #[serde(
        rename = "disableDNS",
        skip_serializing_if = "is_false",
        deserialize_with = "null_as_zero"
    )]
    pub disable_dns: bool,
    /// Skip validating values against the chart's `values.schema.json`.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub skip_schema_validation: bool,
    /// Do not update local chart dependencies when reading the bundle.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub disable_dependency_update: bool,
}

/// A downstream source of Helm values: a ConfigMap or a Secret key.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ValuesFrom {
    /// A ConfigMap key holding values YAML.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_map_key_ref: Option<ValuesKeyRef>,
    /// A Secret key holding values YAML.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_key_ref: Option<ValuesKeyRef>,
}

/// A key of a ConfigMap or Secret (Fleet's `ConfigMapKeySelector` / `SecretKeySelector`,
/// which have the same shape). `key` defaults to `values.yaml` and `namespace` to the
/// release namespace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ValuesKeyRef {
    /// Name of the ConfigMap or Secret. Go always prints it, even when empty.
    #[serde(deserialize_with = "null_as_zero")]
    pub name: String,
    /// Namespace of the object.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub namespace: String,
    /// Key within the object.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub key: String,
}

/// Drift-detection exclusions.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct DiffOptions {
    /// Objects and JSON paths excluded from modification checks.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub compare_patches: Vec<ComparePatch>,
}

/// Matches objects and removes fields (or, with `op: ignore`, the whole object) from drift
/// detection.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ComparePatch {
    /// API version of the objects to match.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub api_version: String,
    /// Kind of the objects to match.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub kind: String,
    /// Name of the objects to match (a regex for `op: ignore`).
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub name: String,
    /// Namespace of the objects to match.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub namespace: String,
    /// JSON pointers whose differences are ignored.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub json_pointers: Vec<String>,
    /// Operations applied before comparing.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub operations: Vec<Operation>,
}

/// One operation of a [`ComparePatch`]: `remove` a path, or `ignore` the whole object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Operation {
    /// `remove` or `ignore`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub op: String,
    /// JSON path to remove; not needed for `ignore`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub path: String,
    /// Usually empty.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub value: String,
}

/// Status conditions to leave out of readiness evaluation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct IgnoreOptions {
    /// A condition is ignored when all key/value pairs of one entry match it.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub conditions: Vec<BTreeMap<String, String>>,
}

/// Drift correction: roll the release back to what the bundle declares when objects change.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct CorrectDrift {
    /// Correct drift.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub enabled: bool,
    /// Recreate objects when they cannot be patched.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub force: bool,
    /// Keep failed rollbacks in the release history.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "null_as_zero")]
    pub keep_fail_history: bool,
}

/// A Secret or ConfigMap copied from the bundle's namespace into downstream clusters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct DownstreamResource {
    /// `Secret` or `ConfigMap`.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub kind: String,
    /// Name of the object in the bundle's namespace.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub name: String,
}

/// Internal: an object that a pruned bundle also deployed, recorded so that the agent
/// re-installs it instead of losing it with the old release.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct OverwrittenResource {
    /// Kind of the object.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub kind: String,
    /// Name of the object.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub name: String,
    /// Namespace of the object.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub namespace: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The deploymentID vector of reference §3 (`integrationtests/cli/assets/bundledeployment`).
    fn reference_options() -> BundleDeploymentOptions {
        let values = match json!({"name": "example-value"}) {
            serde_json::Value::Object(map) => GenericMap(map),
            _ => unreachable!("literal object"),
        };
        BundleDeploymentOptions {
            helm: Some(HelmOptions {
                chart: "config-chart".into(),
                values: Some(values),
                ..HelmOptions::default()
            }),
            ..BundleDeploymentOptions::default()
        }
    }

    #[test]
    fn reference_vector_serializes_like_go() {
        assert_eq!(
            serde_json::to_string(&reference_options()).unwrap(),
            r#"{"helm":{"chart":"config-chart","values":{"name":"example-value"}},"ignore":{}}"#
        );
    }

    #[test]
    fn reference_vector_hashes_to_fleets_deployment_id_suffix() {
        use sha2::{Digest, Sha256};
        let encoded = crate::go_json::to_string(&reference_options()).unwrap();
        let digest = hex::encode(Sha256::digest(format!("{encoded}\n").as_bytes()));
        // Full value from Fleet's `integrationtests/cli/assets/bundledeployment/bd.yaml`.
        assert_eq!(
            digest,
            "c32e813ecbf48f56833aa2267cd3d8758eecc94f9948fb0dea510147a57760b5"
        );
    }

    #[test]
    fn every_field_follows_go_declaration_order() {
        let options = BundleDeploymentOptions {
            yaml: Some(YamlOptions {
                overlays: vec!["o".into()],
            }),
            kustomize: Some(KustomizeOptions { dir: "k".into() }),
            default_namespace: "d".into(),
            target_namespace: "n".into(),
            helm: Some(HelmOptions {
                values_files: vec!["v.yaml".into()],
                chart: "c".into(),
                repo: "r".into(),
                release_name: "rel".into(),
                version: "1".into(),
                timeout_seconds: 5,
                values: Some(GenericMap::new()),
                template_values: BTreeMap::from([
                    ("b".into(), "2".into()),
                    ("a".into(), "1".into()),
                ]),
                values_from: vec![ValuesFrom {
                    config_map_key_ref: Some(ValuesKeyRef::default()),
                    secret_key_ref: None,
                }],
                force: true,
                take_ownership: true,
                max_history: 3,
                wait_for_jobs: true,
                atomic: true,
                disable_pre_process: true,
                disable_dns: true,
                skip_schema_validation: true,
                disable_dependency_update: true,
            }),
            service_account: "sa".into(),
            create_namespace: Some(false),
            force_sync_generation: 2,
            diff: Some(DiffOptions::default()),
            keep_resources: true,
            delete_namespace: true,
            ignore: IgnoreOptions::default(),
            correct_drift: Some(CorrectDrift {
                enabled: true,
                force: false,
                keep_fail_history: true,
            }),
            namespace_labels: Some(BTreeMap::new()),
            allow_pod_security_namespace_labels: None,
            namespace_annotations: Some(BTreeMap::from([("x".into(), "y".into())])),
            delete_crd_resources: true,
            downstream_resources: vec![DownstreamResource {
                kind: "Secret".into(),
                name: "s".into(),
            }],
            overwrites: vec![],
            allowed_target_namespace_selector: Some(LabelSelector::default()),
        };
        assert_eq!(
            serde_json::to_string(&options).unwrap(),
            concat!(
                r#"{"yaml":{"overlays":["o"]},"kustomize":{"dir":"k"},"defaultNamespace":"d","namespace":"n","#,
                r#""helm":{"valuesFiles":["v.yaml"],"chart":"c","repo":"r","releaseName":"rel","version":"1","#,
                r#""timeoutSeconds":5,"values":{},"templateValues":{"a":"1","b":"2"},"#,
                r#""valuesFrom":[{"configMapKeyRef":{"name":""}}],"force":true,"takeOwnership":true,"#,
                r#""maxHistory":3,"waitForJobs":true,"atomic":true,"disablePreProcess":true,"disableDNS":true,"#,
                r#""skipSchemaValidation":true,"disableDependencyUpdate":true},"#,
                r#""serviceAccount":"sa","createNamespace":false,"forceSyncGeneration":2,"diff":{},"#,
                r#""keepResources":true,"deleteNamespace":true,"ignore":{},"#,
                r#""correctDrift":{"enabled":true,"keepFailHistory":true},"namespaceLabels":{},"#,
                r#""namespaceAnnotations":{"x":"y"},"deleteCRDResources":true,"#,
                r#""downstreamResources":[{"kind":"Secret","name":"s"}],"allowedTargetNamespaceSelector":{}}"#
            )
        );
    }

    #[test]
    fn unknown_fields_are_tolerated() {
        let options: BundleDeploymentOptions =
            serde_json::from_str(r#"{"defaultNamespace":"a","somethingNew":{"x":1}}"#).unwrap();
        assert_eq!(options.default_namespace, "a");
    }
}

/// Chart access of bundles that Fleet's HelmOp creates: the agent downloads the chart itself
/// (Fleet's `BundleHelmOptions`, used as a Bundle's `helmOpOptions` and a BundleDeployment's
/// `helmChartOptions`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct HelmOpOptions {
    /// Secret with credentials for the chart repository.
    #[serde(
        rename = "helmOpSecretName",
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_zero"
    )]
    pub secret_name: String,
    /// Skip TLS verification of the chart repository.
    #[serde(
        rename = "helmOpInsecureSkipTLSVerify",
        skip_serializing_if = "is_false",
        deserialize_with = "null_as_zero"
    )]
    pub insecure_skip_tls_verify: bool,
    /// PEM CA bundle for the chart repository (base64 in JSON).
    #[serde(rename = "helmOpCABundle", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", extend("format" = "byte"))]
    pub ca_bundle: Option<ByteString>,
}
