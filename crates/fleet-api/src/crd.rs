//! CustomResourceDefinitions of every Fleet kind, generated from the Rust types, and their
//! YAML as committed in `charts/fleet-crd/templates/crds.yaml`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSON, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use kube::CustomResourceExt;

use crate::{
    Bundle, BundleDeployment, BundleNamespaceMapping, Cluster, ClusterGroup, ClusterRegistration,
    ClusterRegistrationToken, Content, GitRepo, GitRepoRestriction, HelmOp, ImageScan,
    TARGET_CUSTOMIZATION_FIRST_MATCH,
};

/// The CRDs of every Fleet kind, sorted by name (as in Fleet's chart).
pub fn crds() -> Vec<CustomResourceDefinition> {
    let mut crds = vec![
        Bundle::crd(),
        BundleDeployment::crd(),
        BundleNamespaceMapping::crd(),
        Cluster::crd(),
        ClusterGroup::crd(),
        ClusterRegistration::crd(),
        ClusterRegistrationToken::crd(),
        Content::crd(),
        GitRepo::crd(),
        GitRepoRestriction::crd(),
        HelmOp::crd(),
        ImageScan::crd(),
    ];
    for crd in &mut crds {
        finish(crd);
    }
    crds.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    crds
}

/// Brings a derived CRD in line with Fleet's: `listKind` set; no schema `default`s (the
/// derive adds them for always-serialized fields, Fleet declares none and the apiserver
/// would write them into stored objects) except Fleet's `targetCustomizationMode:
/// FirstMatch` on Bundles and HelmOps; GitRepo `spec.repo` and ImageScan
/// `spec.image`, `spec.interval` required (as in Fleet's CRD).
fn finish(crd: &mut CustomResourceDefinition) {
    let names = &mut crd.spec.names;
    names.list_kind = Some(format!("{}List", names.kind));
    for version in &mut crd.spec.versions {
        if let Some(schema) = version
            .schema
            .as_mut()
            .and_then(|validation| validation.open_api_v3_schema.as_mut())
        {
            strip_defaults(schema);
            match names.kind.as_str() {
                // A HelmOp's spec embeds a Bundle's, with the same default.
                "Bundle" | "HelmOp" => {
                    if let Some(mode) = property_mut(schema, &["spec", "targetCustomizationMode"]) {
                        mode.default = Some(JSON(TARGET_CUSTOMIZATION_FIRST_MATCH.into()));
                    }
                }
                "GitRepo" => {
                    if let Some(spec) = property_mut(schema, &["spec"]) {
                        spec.required = Some(vec!["repo".to_string()]);
                    }
                }
                "ImageScan" => {
                    if let Some(spec) = property_mut(schema, &["spec"]) {
                        spec.required = Some(vec!["image".to_string(), "interval".to_string()]);
                    }
                }
                _ => {}
            }
        }
    }
}

/// The schema of the property at `path` (through object properties).
fn property_mut<'a>(
    schema: &'a mut JSONSchemaProps,
    path: &[&str],
) -> Option<&'a mut JSONSchemaProps> {
    path.iter().try_fold(schema, |node, name| {
        node.properties.as_mut()?.get_mut(*name)
    })
}

/// Removes `default` from a schema and every schema nested in it.
fn strip_defaults(schema: &mut JSONSchemaProps) {
    schema.default = None;
    for property in schema
        .properties
        .iter_mut()
        .flat_map(|map| map.values_mut())
    {
        strip_defaults(property);
    }
    if let Some(JSONSchemaPropsOrArray::Schema(items)) = schema.items.as_mut() {
        strip_defaults(items);
    }
    if let Some(JSONSchemaPropsOrArray::Schemas(items)) = schema.items.as_mut() {
        items.iter_mut().for_each(strip_defaults);
    }
    if let Some(JSONSchemaPropsOrBool::Schema(additional)) = schema.additional_properties.as_mut() {
        strip_defaults(additional);
    }
}

/// Header of the generated CRD file.
const HEADER: &str =
    "# Generated from the fleet-api Rust types; do not edit. Regenerate with `make crds`.\n";

/// All CRDs as one multi-document YAML stream, deterministic from run to run.
pub fn crds_yaml() -> String {
    let mut yaml = String::from(HEADER);
    for crd in crds() {
        yaml.push_str("---\n");
        // Serializing a typed CRD to YAML cannot fail: every value is a string, number,
        // boolean, sequence or string-keyed mapping.
        let document = serde_saphyr::to_string(&crd).expect("a CRD always serializes to YAML");
        yaml.push_str(&document);
        if !yaml.ends_with('\n') {
            yaml.push('\n');
        }
    }
    yaml
}
