//! Merging BundleDeploymentOptions the way Fleet merges a target customization onto the bundle's
//! options (`options.Merge`): non-empty strings override, `helm.values` deep-merge (custom wins),
//! `templateValues`, `namespaceLabels` and `namespaceAnnotations` are key-copied, `valuesFrom`,
//! `diff.comparePatches` and `downstreamResources` merge by identity, booleans are sticky ORs,
//! `yaml.overlays` append, a negative `helm.timeoutSeconds` resets it and `correctDrift` is
//! replaced wholesale. Options are JSON objects in the CRD's field names, so the controller can
//! deserialize the result into its typed options.
//!
//! Fleet documents `"-"` as a way to reset a string option, but its code never reaches that branch
//! (a non-empty `"-"` simply overrides); we follow the documentation (DECISIONS 1): `"-"` clears.

use serde_json::{Map, Value};

type Object = Map<String, Value>;

const RESET: &str = "-";

/// Merges `custom` onto `base` and returns the result; neither input is changed.
pub fn merge_options(base: &Object, custom: &Object) -> Object {
    let mut result = base.clone();
    for key in ["defaultNamespace", "namespace", "serviceAccount"] {
        merge_string(&mut result, custom, key);
    }
    if let Some(Value::Object(custom_helm)) = custom.get("helm") {
        let helm = object_entry(&mut result, "helm");
        merge_helm(helm, custom_helm);
    }
    if let Some(Value::Object(custom_kustomize)) = custom.get("kustomize") {
        let kustomize = object_entry(&mut result, "kustomize");
        merge_string(kustomize, custom_kustomize, "dir");
    }
    if let Some(Value::Object(custom_diff)) = custom.get("diff") {
        let diff = object_entry(&mut result, "diff");
        merge_by_key(diff, custom_diff, "comparePatches", compare_patch_key);
    }
    if let Some(Value::Object(custom_yaml)) = custom.get("yaml") {
        let yaml = object_entry(&mut result, "yaml");
        if let Some(Value::Array(extra)) = custom_yaml.get("overlays") {
            match yaml.get_mut("overlays") {
                Some(Value::Array(overlays)) => overlays.extend(extra.iter().cloned()),
                _ => {
                    yaml.insert("overlays".into(), Value::Array(extra.clone()));
                }
            }
        }
    }
    if let Some(n) = custom.get("forceSyncGeneration").and_then(Value::as_i64)
        && n > 0
    {
        result.insert("forceSyncGeneration".into(), n.into());
    }
    sticky_or(&mut result, custom, "keepResources");
    if let Some(drift) = custom.get("correctDrift")
        && !drift.is_null()
    {
        result.insert("correctDrift".into(), drift.clone());
    }
    merge_by_key(
        &mut result,
        custom,
        "downstreamResources",
        downstream_resource_key,
    );
    for key in ["namespaceLabels", "namespaceAnnotations"] {
        copy_keys(&mut result, custom, key);
    }
    result
}

fn merge_helm(helm: &mut Object, custom: &Object) {
    match custom.get("timeoutSeconds").and_then(Value::as_i64) {
        Some(t) if t > 0 => {
            helm.insert("timeoutSeconds".into(), t.into());
        }
        Some(t) if t < 0 => {
            helm.remove("timeoutSeconds");
        }
        _ => {}
    }
    if let Some(Value::Object(custom_values)) = custom.get("values") {
        match helm.get_mut("values") {
            Some(Value::Object(values)) => deep_merge(values, custom_values),
            _ => {
                helm.insert("values".into(), Value::Object(custom_values.clone()));
            }
        }
    }
    copy_keys(helm, custom, "templateValues");
    merge_by_key(helm, custom, "valuesFrom", values_from_key);
    for key in ["repo", "chart", "version", "releaseName"] {
        merge_string(helm, custom, key);
    }
    for key in [
        "force",
        "atomic",
        "takeOwnership",
        "disablePreProcess",
        "waitForJobs",
        "disableDNS",
    ] {
        sticky_or(helm, custom, key);
    }
}

/// Wrangler's `data.MergeMaps`: nested objects merge recursively, anything else is replaced.
pub fn deep_merge(base: &mut Object, overlay: &Object) {
    for (key, value) in overlay {
        match (base.get_mut(key), value) {
            (Some(Value::Object(b)), Value::Object(o)) => deep_merge(b, o),
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

fn object_entry<'a>(obj: &'a mut Object, key: &str) -> &'a mut Object {
    if !matches!(obj.get(key), Some(Value::Object(_))) {
        obj.insert(key.to_string(), Value::Object(Object::new()));
    }
    match obj.get_mut(key) {
        Some(Value::Object(o)) => o,
        _ => unreachable!("inserted an object above"),
    }
}

fn merge_string(result: &mut Object, custom: &Object, key: &str) {
    match custom.get(key).and_then(Value::as_str) {
        Some(RESET) => {
            result.remove(key);
        }
        Some(s) if !s.is_empty() => {
            result.insert(key.to_string(), s.into());
        }
        _ => {}
    }
}

fn sticky_or(result: &mut Object, custom: &Object, key: &str) {
    if custom.get(key).and_then(Value::as_bool) == Some(true) {
        result.insert(key.to_string(), true.into());
    }
}

fn copy_keys(result: &mut Object, custom: &Object, key: &str) {
    let Some(Value::Object(extra)) = custom.get(key) else {
        return;
    };
    if !matches!(result.get(key), Some(Value::Object(_))) {
        result.insert(key.to_string(), Value::Object(extra.clone()));
        return;
    }
    let target = object_entry(result, key);
    for (k, v) in extra {
        target.insert(k.clone(), v.clone());
    }
}

/// Custom entries replace base entries with the same identity (in the base's position); new
/// entries are appended in order; entries without an identity are always appended.
fn merge_by_key(result: &mut Object, custom: &Object, key: &str, identity: fn(&Value) -> String) {
    let Some(Value::Array(extra)) = custom.get(key) else {
        return;
    };
    if extra.is_empty() {
        return;
    }
    let mut merged = match result.get(key) {
        Some(Value::Array(items)) => items.clone(),
        _ => Vec::new(),
    };
    for item in extra {
        let id = identity(item);
        match merged
            .iter_mut()
            .find(|existing| !id.is_empty() && identity(existing) == id)
        {
            Some(existing) => *existing = item.clone(),
            None => merged.push(item.clone()),
        }
    }
    result.insert(key.to_string(), Value::Array(merged));
}

fn field<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter()
        .try_fold(v, |v, k| v.get(*k))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn values_from_key(v: &Value) -> String {
    for (kind, label) in [("configMapKeyRef", "configmap"), ("secretKeyRef", "secret")] {
        if v.get(kind).is_some_and(|r| !r.is_null()) {
            return format!(
                "{label}|{}|{}|{}",
                field(v, &[kind, "namespace"]),
                field(v, &[kind, "name"]),
                field(v, &[kind, "key"])
            );
        }
    }
    String::new()
}

fn compare_patch_key(v: &Value) -> String {
    ["apiVersion", "kind", "namespace", "name"]
        .map(|k| field(v, &[k]))
        .join("|")
}

fn downstream_resource_key(v: &Value) -> String {
    format!(
        "{}|{}",
        field(v, &["kind"]).to_lowercase(),
        field(v, &["name"])
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Object {
        match v {
            Value::Object(o) => o,
            _ => panic!("not an object"),
        }
    }

    fn merged(base: Value, custom: Value) -> Value {
        Value::Object(merge_options(&obj(base), &obj(custom)))
    }

    #[test]
    fn strings_override_when_non_empty_and_dash_resets() {
        let base = json!({"defaultNamespace": "a", "namespace": "t", "serviceAccount": "sa"});
        assert_eq!(
            merged(
                base.clone(),
                json!({"defaultNamespace": "b", "namespace": "", "serviceAccount": "-"})
            ),
            json!({"defaultNamespace": "b", "namespace": "t"})
        );
        assert_eq!(merged(base.clone(), json!({})), base);
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
                {"configMapKeyRef": {"name": "cm", "namespace": "n", "key": "k"}, "note": "replaced"},
                {"secretKeyRef": {"name": "s", "namespace": "n", "key": "k"}}
            ]
        }});
        assert_eq!(
            merged(base, custom),
            json!({"helm": {
                "chart": "c", "version": "2.0.0", "force": true, "atomic": true,
                "values": {"a": {"x": 1, "y": 3, "z": 4}, "list": [9]},
                "templateValues": {"k1": "v1", "k2": "v2"},
                "valuesFrom": [
                    {"configMapKeyRef": {"name": "cm", "namespace": "n", "key": "k"}, "note": "replaced"},
                    {"secretKeyRef": {"name": "s", "namespace": "n", "key": "k"}}
                ]
            }})
        );
    }

    #[test]
    fn helm_created_when_base_has_none() {
        assert_eq!(
            merged(json!({}), json!({"helm": {"values": {"a": 1}}})),
            json!({"helm": {"values": {"a": 1}}})
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
            "downstreamResources": [{"kind": "secret", "name": "s1", "v": 2}, {"kind": "ConfigMap", "name": "c"}],
            "diff": {"comparePatches": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "jsonPointers": ["/b"]}]},
            "forceSyncGeneration": 0
        });
        assert_eq!(
            merged(base, custom),
            json!({
                "yaml": {"overlays": ["a", "b"]}, "keepResources": true,
                "correctDrift": {"enabled": false},
                "namespaceLabels": {"a": "1", "b": "2"},
                "downstreamResources": [{"kind": "secret", "name": "s1", "v": 2}, {"kind": "ConfigMap", "name": "c"}],
                "diff": {"comparePatches": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "jsonPointers": ["/b"]}]},
                "forceSyncGeneration": 1
            })
        );
    }
}
