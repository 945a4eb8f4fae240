//! Merging BundleDeploymentOptions the way Fleet merges a target customization onto the bundle's
//! options (`options.Merge` in Fleet's controller), field by field on fleet-api's types: non-empty
//! strings override, `helm.values` deep-merge (custom wins), `templateValues` are key-copied,
//! `valuesFrom`, `diff.comparePatches` and `downstreamResources` merge by identity, booleans are
//! sticky ORs, `yaml.overlays` append, a negative `helm.timeoutSeconds` resets it and
//! `correctDrift` is replaced wholesale. A `helm`, `kustomize`, `diff` or `yaml` block in the
//! customization creates an empty one in the result, as Fleet's pointers do (it changes the
//! deploymentID).
//!
//! Two differences from Fleet's code, both deliberate:
//! - Fleet documents `"-"` as a way to reset a string option, but its code never reaches that
//!   branch (a non-empty `"-"` simply overrides); we follow the documentation (DECISIONS 1): `"-"`
//!   clears.
//! - Fleet's merge leaves `namespaceLabels` and `namespaceAnnotations` of a customization unused;
//!   ours key-copies them onto the bundle's, so a customization that sets them takes effect.

use std::collections::BTreeMap;

use fleet_api::{
    BundleDeploymentOptions, ComparePatch, DownstreamResource, HelmOptions, ValuesFrom,
};
use serde_json::{Map, Value};

const RESET: &str = "-";

/// Merges `custom` onto `base` and returns the result; neither input is changed.
pub fn merge_options(
    base: &BundleDeploymentOptions,
    custom: &BundleDeploymentOptions,
) -> BundleDeploymentOptions {
    let mut result = base.clone();
    merge_string(&mut result.default_namespace, &custom.default_namespace);
    merge_string(&mut result.target_namespace, &custom.target_namespace);
    merge_string(&mut result.service_account, &custom.service_account);
    if let Some(custom_helm) = &custom.helm {
        merge_helm(result.helm.get_or_insert_default(), custom_helm);
    }
    if let Some(custom_kustomize) = &custom.kustomize {
        let kustomize = result.kustomize.get_or_insert_default();
        merge_string(&mut kustomize.dir, &custom_kustomize.dir);
    }
    if let Some(custom_diff) = &custom.diff {
        let diff = result.diff.get_or_insert_default();
        merge_by_key(
            &mut diff.compare_patches,
            &custom_diff.compare_patches,
            compare_patch_key,
        );
    }
    if let Some(custom_yaml) = &custom.yaml {
        let yaml = result.yaml.get_or_insert_default();
        yaml.overlays.extend(custom_yaml.overlays.iter().cloned());
    }
    if custom.force_sync_generation > 0 {
        result.force_sync_generation = custom.force_sync_generation;
    }
    result.keep_resources |= custom.keep_resources;
    if custom.correct_drift.is_some() {
        result.correct_drift = custom.correct_drift.clone();
    }
    merge_by_key(
        &mut result.downstream_resources,
        &custom.downstream_resources,
        downstream_resource_key,
    );
    copy_keys(&mut result.namespace_labels, &custom.namespace_labels);
    copy_keys(
        &mut result.namespace_annotations,
        &custom.namespace_annotations,
    );
    result
}

fn merge_helm(helm: &mut HelmOptions, custom: &HelmOptions) {
    match custom.timeout_seconds {
        t if t > 0 => helm.timeout_seconds = t,
        t if t < 0 => helm.timeout_seconds = 0,
        _ => {}
    }
    match (&mut helm.values, &custom.values) {
        (Some(values), Some(custom_values)) => deep_merge(values, custom_values),
        (values @ None, custom_values) => values.clone_from(custom_values),
        (Some(_), None) => {}
    }
    helm.template_values.extend(
        custom
            .template_values
            .iter()
            .map(|(k, v)| (k.clone(), v.clone())),
    );
    merge_by_key(&mut helm.values_from, &custom.values_from, values_from_key);
    merge_string(&mut helm.repo, &custom.repo);
    merge_string(&mut helm.chart, &custom.chart);
    merge_string(&mut helm.version, &custom.version);
    merge_string(&mut helm.release_name, &custom.release_name);
    helm.force |= custom.force;
    helm.atomic |= custom.atomic;
    helm.take_ownership |= custom.take_ownership;
    helm.disable_pre_process |= custom.disable_pre_process;
    helm.wait_for_jobs |= custom.wait_for_jobs;
    helm.disable_dns |= custom.disable_dns;
}

/// Wrangler's `data.MergeMaps`: nested objects merge recursively, anything else is replaced.
pub fn deep_merge(base: &mut Map<String, Value>, overlay: &Map<String, Value>) {
    for (key, value) in overlay {
        match (base.get_mut(key), value) {
            (Some(Value::Object(b)), Value::Object(o)) => deep_merge(b, o),
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

/// A non-empty custom string overrides; `"-"` clears.
fn merge_string(result: &mut String, custom: &str) {
    match custom {
        RESET => result.clear(),
        "" => {}
        s => *result = s.to_string(),
    }
}

fn copy_keys(
    result: &mut Option<BTreeMap<String, String>>,
    custom: &Option<BTreeMap<String, String>>,
) {
    if let Some(extra) = custom {
        let target = result.get_or_insert_default();
        target.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
}

/// Custom entries replace base entries with the same identity (in the base's position); new
/// entries are appended in order; entries without an identity are always appended.
fn merge_by_key<T: Clone>(merged: &mut Vec<T>, custom: &[T], identity: fn(&T) -> String) {
    for item in custom {
        let id = identity(item);
        match merged
            .iter_mut()
            .find(|existing| !id.is_empty() && identity(existing) == id)
        {
            Some(existing) => *existing = item.clone(),
            None => merged.push(item.clone()),
        }
    }
}

fn values_from_key(v: &ValuesFrom) -> String {
    let refs = [
        ("configmap", &v.config_map_key_ref),
        ("secret", &v.secret_key_ref),
    ];
    refs.into_iter()
        .find_map(|(label, r)| {
            r.as_ref()
                .map(|r| format!("{label}|{}|{}|{}", r.namespace, r.name, r.key))
        })
        .unwrap_or_default()
}

fn compare_patch_key(p: &ComparePatch) -> String {
    format!("{}|{}|{}|{}", p.api_version, p.kind, p.namespace, p.name)
}

fn downstream_resource_key(r: &DownstreamResource) -> String {
    format!("{}|{}", r.kind.to_lowercase(), r.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn options(v: Value) -> BundleDeploymentOptions {
        serde_json::from_value(v).expect("BundleDeploymentOptions")
    }

    fn merged(base: Value, custom: Value) -> BundleDeploymentOptions {
        merge_options(&options(base), &options(custom))
    }

    #[test]
    fn strings_override_when_non_empty_and_dash_resets() {
        let base = json!({"defaultNamespace": "a", "namespace": "t", "serviceAccount": "sa"});
        assert_eq!(
            merged(
                base.clone(),
                json!({"defaultNamespace": "b", "namespace": "", "serviceAccount": "-"})
            ),
            options(json!({"defaultNamespace": "b", "namespace": "t"}))
        );
        assert_eq!(merged(base.clone(), json!({})), options(base));
    }

    #[test]
    fn helm_values_deep_merge_and_scalars() {
        let base = json!({"helm": {
            "chart": "c", "version": "1.0.0", "timeoutSeconds": 30, "force": true,
            "values": {"a": {"x": 1, "y": 2}, "list": [1, 2]},
            "templateValues": {"k1": "v1"},
            "valuesFrom": [{"configMapKeyRef": {"name": "cm", "namespace": "n", "key": "k"}}]
        }});
        let custom = json!({"helm": {
            "version": "2.0.0", "timeoutSeconds": -1, "force": false, "atomic": true,
            "values": {"a": {"y": 3, "z": 4}, "list": [9]},
            "templateValues": {"k2": "v2"},
            "valuesFrom": [
                {"configMapKeyRef": {"name": "cm", "namespace": "n", "key": "k"}, "secretKeyRef": {"name": "replaced"}},
                {"secretKeyRef": {"name": "s", "namespace": "n", "key": "k"}}
            ]
        }});
        assert_eq!(
            merged(base, custom),
            options(json!({"helm": {
                "chart": "c", "version": "2.0.0", "force": true, "atomic": true,
                "values": {"a": {"x": 1, "y": 3, "z": 4}, "list": [9]},
                "templateValues": {"k1": "v1", "k2": "v2"},
                "valuesFrom": [
                    {"configMapKeyRef": {"name": "cm", "namespace": "n", "key": "k"}, "secretKeyRef": {"name": "replaced"}},
                    {"secretKeyRef": {"name": "s", "namespace": "n", "key": "k"}}
                ]
            }}))
        );
    }

    #[test]
    fn empty_blocks_are_created_and_unmerged_fields_are_not_taken() {
        let result = merged(
            json!({"helm": {"maxHistory": 3}}),
            json!({"kustomize": {}, "diff": {}, "yaml": {},
                   "helm": {"maxHistory": 9, "valuesFiles": ["v.yaml"], "skipSchemaValidation": true},
                   "deleteNamespace": true, "serviceAccount": ""}),
        );
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            json!({"kustomize": {}, "helm": {"maxHistory": 3}, "diff": {}, "yaml": {}, "ignore": {}})
        );
    }

    #[test]
    fn helm_created_when_base_has_none() {
        assert_eq!(
            merged(json!({}), json!({"helm": {"values": {"a": 1}}})),
            options(json!({"helm": {"values": {"a": 1}}}))
        );
    }

    #[test]
    fn overlays_append_booleans_stick_correct_drift_replaced() {
        let base = json!({
            "yaml": {"overlays": ["a"]}, "keepResources": true,
            "correctDrift": {"enabled": true, "force": true},
            "namespaceLabels": {"a": "1"},
            "downstreamResources": [{"kind": "Secret", "name": "s1"}],
            "diff": {"comparePatches": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "jsonPointers": ["/a"]}]},
            "forceSyncGeneration": 1
        });
        let custom = json!({
            "yaml": {"overlays": ["b"]}, "keepResources": false,
            "correctDrift": {"enabled": false},
            "namespaceLabels": {"b": "2"},
            "downstreamResources": [{"kind": "secret", "name": "s1"}, {"kind": "ConfigMap", "name": "c"}],
            "diff": {"comparePatches": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "jsonPointers": ["/b"]}]},
            "forceSyncGeneration": 0
        });
        assert_eq!(
            merged(base, custom),
            options(json!({
                "yaml": {"overlays": ["a", "b"]}, "keepResources": true,
                "correctDrift": {"enabled": false},
                "namespaceLabels": {"a": "1", "b": "2"},
                "downstreamResources": [{"kind": "secret", "name": "s1"}, {"kind": "ConfigMap", "name": "c"}],
                "diff": {"comparePatches": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "jsonPointers": ["/b"]}]},
                "forceSyncGeneration": 1
            }))
        );
    }
}
