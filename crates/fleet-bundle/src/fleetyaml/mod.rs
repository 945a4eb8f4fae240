//! `fleet.yaml` (or the fallback `fleet.yml`): the [`FleetYaml`] type, Fleet's schema with `BundleSpec` inline,
//! and its strict reading — unknown keys are errors naming file, line and column, with a suggestion when a
//! known key is close.

mod keys;

use std::collections::BTreeMap;

use fleet_api::bundle::{BundleSpec, BundleTarget};
use fleet_api::gitrepo::GitTarget;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use keys::UnknownKey;

/// The primary options file name.
pub const FLEET_YAML: &str = "fleet.yaml";
/// The fallback options file name, used when `fleet.yaml` is absent.
pub const FLEET_YML: &str = "fleet.yml";

/// Whether a file name is one of the two options file names.
pub fn is_fleet_yaml_name(name: &str) -> bool {
    name == FLEET_YAML || name == FLEET_YML
}

/// A bundle's options file, as Fleet's `FleetYAML` type: `name`, `labels`, `BundleSpec` inline,
/// `targetCustomizations`, `imageScans` and `overrideTargets`. Fleet also reads the file as object metadata,
/// so top-level `annotations` end up on the Bundle; we accept them for the same reason.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FleetYaml {
    /// Bundle name, used verbatim instead of the derived one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Labels copied onto the Bundle.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations copied onto the Bundle (undocumented Fleet behaviour).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// The bundle spec: deployment options, targets, rollout, dependencies.
    #[serde(flatten)]
    pub spec: BundleSpec,
    /// Per-target option overrides.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_customizations: Vec<BundleTarget>,
    /// Image scans (need a controller with image scanning enabled).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_scans: Vec<ImageScanEntry>,
    /// Targets that replace the GitRepo's targets for this bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub override_targets: Option<Vec<GitTarget>>,
}

/// One `imageScans` entry: a name plus fleet-api's `ImageScanSpec` inline, as Fleet's `ImageScanYAML` has it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImageScanEntry {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(flatten)]
    pub spec: fleet_api::ImageScanSpec,
}

/// Why an options file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FleetYamlError {
    #[error(transparent)]
    Yaml(#[from] fleet_yaml::Error),
    #[error("{0}")]
    UnknownKeys(UnknownKeys),
    #[error("{file}: top level must be a mapping, found {found}")]
    NotAMapping { file: String, found: &'static str },
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
}

/// Every unknown key of one file (each on its own line when displayed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKeys(pub Vec<UnknownKey>);

impl std::fmt::Display for UnknownKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lines: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&lines.join("\n"))
    }
}

fn kind_name(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a sequence",
        serde_json::Value::Object(_) => "a mapping",
    }
}

impl FleetYaml {
    /// Parses and validates an options file. `file` names it in errors (e.g. `apps/web/fleet.yaml`).
    pub fn parse(text: &str, file: &str) -> Result<Self, FleetYamlError> {
        let located = fleet_yaml::parse::located(text, file)?;
        let value = located.value();
        if value.is_null() {
            return Ok(Self::default());
        }
        if !value.is_object() {
            return Err(FleetYamlError::NotAMapping {
                file: file.to_string(),
                found: kind_name(value),
            });
        }
        let unknown = keys::unknown_keys(&located, file);
        if !unknown.is_empty() {
            return Err(FleetYamlError::UnknownKeys(UnknownKeys(unknown)));
        }
        Ok(located.deserialize::<Self>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_documented_top_level_key() {
        let text = r#"
name: my-bundle
labels: {team: a}
defaultNamespace: apps
namespace: forced
namespaceLabels: {x: "1"}
namespaceAnnotations: {y: "2"}
serviceAccount: deployer
createNamespace: true
forceSyncGeneration: 3
keepResources: true
deleteNamespace: true
deleteCRDResources: true
paused: true
correctDrift: {enabled: true, force: true, keepFailHistory: true}
ignore: {conditions: [{type: Ready}]}
diff: {comparePatches: [{apiVersion: v1, kind: Service, name: s, jsonPointers: [/spec/ports]}]}
downstreamResources: [{kind: Secret, name: creds}]
dependsOn: [{name: other}, {selector: {matchLabels: {app: db}}, acceptedStates: [Ready, Modified]}]
rolloutStrategy: {maxUnavailable: 10%, autoPartitionSize: 25%, partitions: [{name: canary, clusterSelector: {matchLabels: {env: dev}}}]}
helm: {chart: ./chart, repo: https://charts.example.com, releaseName: rel, version: 1.2.3, timeoutSeconds: 30,
  values: {a: {b: 1}}, valuesFiles: [v.yaml], templateValues: {k: v}, valuesFrom: [{secretKeyRef: {name: s, key: values.yaml}}],
  force: true, takeOwnership: true, maxHistory: 3, waitForJobs: true, atomic: true, disablePreProcess: true,
  disableDNS: true, skipSchemaValidation: true, disableDependencyUpdate: true}
kustomize: {dir: overlays/prod}
yaml: {overlays: [prod]}
targetCustomizationMode: AllMatches
targets: [{clusterGroup: all}]
targetCustomizations: [{name: prod, clusterSelector: {matchExpressions: [{key: env, operator: In, values: [prod]}]}, doNotDeploy: true}]
overrideTargets: [{clusterName: local}]
imageScans: [{tagName: t, image: nginx, interval: 5m, policy: {semver: {range: ">=1.0.0"}}}]
"#;
        let parsed = FleetYaml::parse(text, "fleet.yaml").unwrap();
        assert_eq!(parsed.name, "my-bundle");
        assert_eq!(parsed.spec.options.default_namespace, "apps");
        assert_eq!(parsed.spec.target_customization_mode, "AllMatches");
        assert_eq!(parsed.target_customizations[0].name, "prod");
        assert!(parsed.target_customizations[0].do_not_deploy);
        assert_eq!(
            parsed.override_targets.as_ref().unwrap()[0].cluster_name,
            "local"
        );
        let helm = parsed.spec.options.helm.as_ref().unwrap();
        assert_eq!(helm.values_files, ["v.yaml"]);
        assert!(helm.disable_dns);
    }

    #[test]
    fn unknown_key_names_file_line_column_and_suggests() {
        let err = FleetYaml::parse("name: x\ndefaultNamspace: apps\n", "apps/web/fleet.yaml")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "apps/web/fleet.yaml:2:1: unknown key `defaultNamspace`: did you mean `defaultNamespace`?"
        );
    }

    #[test]
    fn nested_unknown_keys_are_found_with_their_path() {
        let text = "helm:\n  chart: x\n  valuesFile: [a.yaml]\ntargetCustomizations:\n- name: a\n  clusterSelectr: {}\n";
        let err = FleetYaml::parse(text, "fleet.yaml").unwrap_err();
        assert_eq!(
            err.to_string(),
            "fleet.yaml:3:3: unknown key `helm.valuesFile`: did you mean `valuesFiles`?\n\
             fleet.yaml:6:3: unknown key `targetCustomizations[0].clusterSelectr`: did you mean `clusterSelector`?"
        );
    }

    #[test]
    fn free_form_values_accept_any_key() {
        let parsed = FleetYaml::parse(
            "helm:\n  values:\n    anything: {goes: here}\n",
            "fleet.yaml",
        )
        .unwrap();
        assert!(
            parsed
                .spec
                .options
                .helm
                .unwrap()
                .values
                .unwrap()
                .contains_key("anything")
        );
    }

    #[test]
    fn internal_bundle_fields_are_not_fleet_yaml_keys() {
        let err = FleetYaml::parse("resources: []\n", "fleet.yaml").unwrap_err();
        assert_eq!(err.to_string(), "fleet.yaml:1:1: unknown key `resources`");
    }

    #[test]
    fn far_off_keys_get_no_suggestion() {
        let err = FleetYaml::parse("zzzzzz: 1\n", "fleet.yaml").unwrap_err();
        assert_eq!(err.to_string(), "fleet.yaml:1:1: unknown key `zzzzzz`");
    }

    #[test]
    fn wrong_types_name_the_position() {
        let err = FleetYaml::parse("paused: [1]\n", "fleet.yaml").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("fleet.yaml:1:"), "{text}");
    }

    /// Options are flattened into fleet.yaml (and into each targetCustomization), where serde loses the path; the
    /// error still names the field and its line.
    #[test]
    fn wrong_types_in_options_name_the_field_and_line() {
        let cases = [
            (
                "defaultNamespace: x\nhelm:\n  timeoutSeconds: soon\n",
                "fleet.yaml:3:3: helm.timeoutSeconds: invalid type: string \"soon\", expected i64",
            ),
            (
                "helm:\n  templateValues:\n    replicas: 3\n",
                "fleet.yaml:3:5: helm.templateValues.replicas: invalid type: integer `3`, expected a string",
            ),
            (
                "targetCustomizations:\n- name: a\n  clusterSelector: {}\n  helm:\n    values: [1]\n",
                "fleet.yaml:5:5: targetCustomizations[0].helm.values: invalid type: sequence, expected a map",
            ),
        ];
        for (text, want) in cases {
            let err = FleetYaml::parse(text, "fleet.yaml").unwrap_err();
            assert_eq!(err.to_string(), want);
        }
    }

    #[test]
    fn empty_file_is_default_and_scalar_is_rejected() {
        assert_eq!(
            FleetYaml::parse("", "fleet.yaml").unwrap(),
            FleetYaml::default()
        );
        assert_eq!(
            FleetYaml::parse("just text\n", "fleet.yaml")
                .unwrap_err()
                .to_string(),
            "fleet.yaml: top level must be a mapping, found a string"
        );
    }
}
