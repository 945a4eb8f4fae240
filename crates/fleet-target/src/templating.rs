//! Per-cluster preprocessing of `helm.values` (Fleet's `preprocessHelmValues`): the
//! `global.fleet.clusterLabels.<label>` substitution, then `${ }` templates in `values` and
//! `templateValues` rendered against `{ClusterNamespace, ClusterName, ClusterLabels,
//! ClusterAnnotations, ClusterValues}`.
//!
//! Fleet's quirks that change the DeploymentID are kept: nothing happens when the cluster has no
//! labels left after cleaning; missing `helm` becomes `{}` and missing `values` becomes `{}`.
//! Fleet renders the whole values document as YAML text; we render each string (and key)
//! separately and, where Fleet's YAML emitter would have written the string unquoted, read the
//! result back as a YAML 1.1 scalar, so `replicas: ${ .ClusterLabels.replicas }` becomes the
//! number 3 as it does in Fleet. A template that renders to multi-line YAML stays a string.

use serde_json::{Map, Value};

use crate::error::TargetError;
use crate::model::ClusterInfo;
use crate::selector::Labels;
use crate::template_engine::ValuesTemplater;

/// Prefix of the magic string replaced by a cluster label's value.
pub const CLUSTER_LABEL_PREFIX: &str = "global.fleet.clusterLabels.";
const MAX_DEPTH: usize = 50;

/// Labels exported to templates: Fleet's `CleanAnnotationsForExport` (drops keys containing
/// `cattle.io/` or starting with `kubectl.kubernetes.io/`) with `fleet.cattle.io/*` and
/// `management.cattle.io/*` labels added back.
pub fn export_labels(labels: &Labels) -> Labels {
    labels
        .iter()
        .filter(|(k, _)| {
            (!k.contains("cattle.io/") && !k.starts_with("kubectl.kubernetes.io/"))
                || k.starts_with("fleet.cattle.io/")
                || k.starts_with("management.cattle.io/")
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn export_annotations(annotations: &Labels) -> Labels {
    annotations
        .iter()
        .filter(|(k, _)| !k.contains("cattle.io/") && !k.starts_with("kubectl.kubernetes.io/"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The template context for one cluster.
pub fn template_context(cluster: &ClusterInfo) -> Value {
    let dict = |m: &Labels| {
        Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        )
    };
    serde_json::json!({
        "ClusterNamespace": cluster.namespace,
        "ClusterName": cluster.name,
        "ClusterLabels": dict(&export_labels(&cluster.labels)),
        "ClusterAnnotations": dict(&export_annotations(&cluster.annotations)),
        "ClusterValues": Value::Object(cluster.template_values.clone()),
    })
}

/// Applies label substitution and templating to `options.helm` for `cluster`.
pub fn preprocess_helm_values(
    options: &mut Map<String, Value>,
    cluster: &ClusterInfo,
    templater: &dyn ValuesTemplater,
) -> Result<(), TargetError> {
    let labels = export_labels(&cluster.labels);
    if labels.is_empty() {
        return Ok(());
    }
    let helm = match options.get_mut("helm") {
        Some(Value::Object(helm)) => helm,
        _ => {
            options.insert("helm".into(), Value::Object(Map::new()));
            return Ok(());
        }
    };
    if !matches!(helm.get("values"), Some(Value::Object(_))) {
        helm.insert("values".into(), Value::Object(Map::new()));
    }
    let template_values = match helm.get("templateValues") {
        Some(Value::Object(t)) => Some(t.clone()),
        _ => None,
    };
    let disable_pre_process = helm.get("disablePreProcess").and_then(Value::as_bool) == Some(true);
    let Some(Value::Object(values)) = helm.get_mut("values") else {
        return Ok(());
    };
    if template_values.is_none() && values.is_empty() {
        return Ok(());
    }
    let fail = |field: String, message: String| TargetError::Template {
        cluster: cluster.key().to_string(),
        field,
        message,
    };
    substitute_labels(values, &labels, 0, "helm.values").map_err(|(f, m)| fail(f, m))?;
    if disable_pre_process {
        return Ok(());
    }
    let context = template_context(cluster);
    let rendered =
        render_object(values, &context, templater, "helm.values").map_err(|(f, m)| fail(f, m))?;
    *values = rendered;
    for (key, template) in template_values.iter().flatten() {
        let field = format!("helm.templateValues.{key}");
        let Some(template) = template.as_str() else {
            return Err(fail(field, "must be a string".into()));
        };
        let text = templater
            .render(template, &context)
            .map_err(|m| fail(field.clone(), m))?;
        // The rendered text and the parser's message may quote values, which can be secret.
        let value = parse_yaml_value(&text)
            .map_err(|_| fail(field, "the rendered template is not valid YAML".to_string()))?;
        values.insert(key.clone(), value);
    }
    Ok(())
}

type FieldError = (String, String);

fn substitute_labels(
    values: &mut Map<String, Value>,
    labels: &Labels,
    depth: usize,
    path: &str,
) -> Result<(), FieldError> {
    if depth > MAX_DEPTH {
        return Err((
            path.to_string(),
            format!(
                "maximum recursion depth of {MAX_DEPTH} exceeded for cluster label prefix processing, too many nested values"
            ),
        ));
    }
    for (key, value) in values.iter_mut() {
        let at = format!("{path}.{key}");
        match value {
            Value::String(s) => {
                if let Some(label) = s.strip_prefix(CLUSTER_LABEL_PREFIX) {
                    *s = labels.get(label).cloned().unwrap_or_default();
                }
            }
            Value::Object(map) => substitute_labels(map, labels, depth + 1, &at)?,
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    if let Value::Object(map) = item {
                        substitute_labels(map, labels, depth + 1, &format!("{at}[{i}]"))?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn render_object(
    values: &Map<String, Value>,
    context: &Value,
    templater: &dyn ValuesTemplater,
    path: &str,
) -> Result<Map<String, Value>, FieldError> {
    let mut out = Map::new();
    for (key, value) in values {
        let at = format!("{path}.{key}");
        let new_key = if key.contains("${") {
            templater
                .render(key, context)
                .map_err(|m| (at.clone(), m))?
        } else {
            key.clone()
        };
        out.insert(new_key, render_value(value, context, templater, &at)?);
    }
    Ok(out)
}

fn render_value(
    value: &Value,
    context: &Value,
    templater: &dyn ValuesTemplater,
    path: &str,
) -> Result<Value, FieldError> {
    Ok(match value {
        Value::String(s) if s.contains("${") => {
            let text = templater
                .render(s, context)
                .map_err(|m| (path.to_string(), m))?;
            if emitted_plain(s) {
                read_plain(&text)
            } else {
                Value::String(text)
            }
        }
        Value::Object(map) => Value::Object(render_object(map, context, templater, path)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| render_value(v, context, templater, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

/// Whether a YAML emitter writes this string without quotes (so its rendered text is re-read as
/// a plain scalar).
fn emitted_plain(s: &str) -> bool {
    const INDICATORS: &str = "-?:,[]{}#&*!|>'\"%@`";
    !s.is_empty()
        && !s.starts_with(|c: char| INDICATORS.contains(c) || c.is_whitespace())
        && !s.ends_with(char::is_whitespace)
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.contains('\n')
        && !s.ends_with(':')
}

/// Reads rendered text that stands where a plain scalar stood: a flow collection (`[1,2]`,
/// `{a: 1}`) becomes a list or map, anything else a scalar.
fn read_plain(text: &str) -> Value {
    let t = text.trim();
    if t.starts_with(['[', '{'])
        && let Ok(v) = serde_saphyr::from_str::<Value>(t)
    {
        return v;
    }
    resolve_scalar(text)
}

/// YAML 1.1 plain-scalar resolution (as Fleet's YAML library reads values): null, booleans
/// (including yes/no/on/off), integers, floats; anything else stays a string.
pub fn resolve_scalar(text: &str) -> Value {
    let t = text.trim();
    if t.contains('\n') {
        return Value::String(text.to_string());
    }
    match t {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "y" | "Y" => {
            return Value::Bool(true);
        }
        "false" | "False" | "FALSE" | "no" | "No" | "NO" | "off" | "Off" | "OFF" | "n" | "N" => {
            return Value::Bool(false);
        }
        _ => {}
    }
    let digits = t.trim_start_matches(['-', '+']);
    if !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '_')
        && let Ok(i) = t.replace('_', "").parse::<i64>()
    {
        return Value::from(i);
    }
    if let Some(hex) = t.strip_prefix("0x")
        && let Ok(i) = i64::from_str_radix(hex, 16)
    {
        return Value::from(i);
    }
    let looks_float = t.chars().any(|c| c.is_ascii_digit())
        && t.chars().all(|c| c.is_ascii_digit() || "+-.eE".contains(c))
        && t.contains('.');
    if looks_float
        && let Ok(f) = t.parse::<f64>()
        && let Some(n) = serde_json::Number::from_f64(f)
    {
        return Value::Number(n);
    }
    Value::String(text.to_string())
}

/// Reads a rendered `templateValues` entry: a scalar, or a YAML/JSON document for structured text.
fn parse_yaml_value(text: &str) -> Result<Value, String> {
    let trimmed = text.trim();
    let structured = trimmed.starts_with(['{', '['])
        || trimmed.contains('\n')
        || trimmed.contains(": ")
        || trimmed.starts_with("- ");
    if !structured {
        return Ok(resolve_scalar(trimmed));
    }
    serde_saphyr::from_str::<Value>(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template_engine::BuiltinTemplater;
    use serde_json::json;

    fn cluster() -> ClusterInfo {
        let mut c = ClusterInfo::new(
            "fleet-default",
            "c1",
            [
                ("env", "prod"),
                ("replicas", "3"),
                ("management.cattle.io/cluster-display-name", "one"),
                ("other.cattle.io/hidden", "x"),
                ("kubectl.kubernetes.io/last-applied", "x"),
            ],
        );
        c.annotations.insert("owner".into(), "team-a".into());
        c.template_values.insert("tier".into(), json!("gold"));
        c
    }

    fn run(options: Value, cluster: &ClusterInfo) -> Result<Value, TargetError> {
        let Value::Object(mut map) = options else {
            panic!()
        };
        preprocess_helm_values(&mut map, cluster, &BuiltinTemplater)?;
        Ok(Value::Object(map))
    }

    #[test]
    fn exported_labels_drop_cattle_but_keep_fleet_and_management() {
        let labels = export_labels(&cluster().labels);
        let keys: Vec<&str> = labels.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "env",
                "management.cattle.io/cluster-display-name",
                "replicas"
            ]
        );
    }

    #[test]
    fn target_test_cases() {
        let c = cluster();
        let cases = [
            (
                "cluster label substitution, nested and in lists",
                json!({"helm": {"values": {
                    "a": "global.fleet.clusterLabels.env",
                    "b": {"c": "global.fleet.clusterLabels.missing"},
                    "l": [{"d": "global.fleet.clusterLabels.env"}, "global.fleet.clusterLabels.env"]
                }}}),
                json!({"helm": {"values": {
                    "a": "prod", "b": {"c": ""},
                    "l": [{"d": "prod"}, "global.fleet.clusterLabels.env"]
                }}}),
            ),
            (
                "templates see name, namespace, labels, annotations and values",
                json!({"helm": {"values": {
                    "name": "${ .ClusterName }.${ .ClusterNamespace }",
                    "replicas": "${ .ClusterLabels.replicas }",
                    "owner": "${ .ClusterAnnotations.owner }",
                    "tier": "${ .ClusterValues.tier }",
                    "quoted": "'${ .ClusterLabels.replicas }'",
                    "${ .ClusterLabels.env }-key": true
                }}}),
                json!({"helm": {"values": {
                    "name": "c1.fleet-default",
                    "replicas": 3,
                    "owner": "team-a",
                    "tier": "gold",
                    "quoted": "'3'",
                    "prod-key": true
                }}}),
            ),
            (
                "templateValues render, parse and override values",
                json!({"helm": {"values": {"a": 1, "b": 2}, "templateValues": {
                    "b": "${ .ClusterLabels.replicas }",
                    "m": "{\"k\": \"${ .ClusterName }\"}"
                }}}),
                json!({"helm": {"values": {"a": 1, "b": 3, "m": {"k": "c1"}}, "templateValues": {
                    "b": "${ .ClusterLabels.replicas }",
                    "m": "{\"k\": \"${ .ClusterName }\"}"
                }}}),
            ),
            (
                "disablePreProcess keeps templates but still substitutes labels",
                json!({"helm": {"disablePreProcess": true, "values": {"t": "${ .ClusterName }", "l": "global.fleet.clusterLabels.env"}}}),
                json!({"helm": {"disablePreProcess": true, "values": {"t": "${ .ClusterName }", "l": "prod"}}}),
            ),
            (
                "no helm becomes an empty helm",
                json!({}),
                json!({"helm": {}}),
            ),
            (
                "helm without values gets empty values",
                json!({"helm": {"chart": "x"}}),
                json!({"helm": {"chart": "x", "values": {}}}),
            ),
        ];
        for (name, input, want) in cases {
            assert_eq!(run(input, &c).unwrap(), want, "{name}");
        }
    }

    /// Fleet's `TestProcessTemplateValues` (target_test.go), through the whole preprocessing.
    #[test]
    fn fleet_process_template_values() {
        let mut c = ClusterInfo::new(
            "dev-clusters",
            "my-cluster",
            [
                ("name", "local"),
                ("envType", "dev"),
                (
                    "really-long-label-name-with-many-many-characters-in-it",
                    "foobar",
                ),
            ],
        );
        c.annotations.insert("testAnnotation".into(), "test".into());
        c.template_values = json!({
            "topLevel": "foo",
            "nested": {"secondTier": {"thirdTier": "bar"}},
            "items": ["one", "two"],
            "list": ["alpha", "beta", "omega"]
        })
        .as_object()
        .cloned()
        .unwrap();
        let options = json!({"namespace": "default", "helm": {
            "releaseName": "labels",
            "templateValues": {
                "mapData": "${- range $key := .ClusterValues.items }\n\"${ $key }\":\n  nested: \"true\"\n${- end}\n",
                "listData": "${- range $key := .ClusterValues.items }\n- \"${ $key }\":\n  nested: \"true\"\n${- end}\n"
            },
            "values": {
                "clusterName": "${ .ClusterLabels.name }",
                "fromAnnotation": "${ .ClusterAnnotations.testAnnotation }",
                "clusterNamespace": "${ .ClusterNamespace }",
                "fleetClusterName": "${ .ClusterName }",
                "reallyLongClusterName": "kubernets.io/cluster/${ index .ClusterLabels \"really-long-label-name-with-many-many-characters-in-it\" }",
                "missingLabel": "${ if hasKey .ClusterLabels \"missing\" }${ .ClusterLabels.missing }${ else }missing${ end}",
                "list": "${ list 1 2 3 | toJson }",
                "customStruct": [
                    {"name": "${ .ClusterValues.topLevel }", "key1": "value1", "key2": "value2"},
                    {"element2": "${ .ClusterValues.nested.secondTier.thirdTier }"},
                    {"element3_${ .ClusterLabels.envType }": "${ .ClusterLabels.name }"}
                ],
                "funcs": {
                    "upper": "${ .ClusterValues.topLevel | upper }_test",
                    "join": "${ .ClusterValues.list | join \",\" }"
                }
            }
        }});
        let out = run(options, &c).unwrap();
        let values = &out["helm"]["values"];
        assert_eq!(values["clusterName"], "local");
        assert_eq!(values["fromAnnotation"], "test");
        assert_eq!(values["clusterNamespace"], "dev-clusters");
        assert_eq!(values["fleetClusterName"], "my-cluster");
        assert_eq!(
            values["reallyLongClusterName"],
            "kubernets.io/cluster/foobar"
        );
        assert_eq!(values["missingLabel"], "missing");
        assert_eq!(values["list"], json!([1, 2, 3]));
        assert_eq!(values["customStruct"][0]["name"], "foo");
        assert_eq!(values["customStruct"][1]["element2"], "bar");
        assert_eq!(values["customStruct"][2]["element3_dev"], "local");
        assert_eq!(values["funcs"]["upper"], "FOO_test");
        assert_eq!(values["funcs"]["join"], "alpha,beta,omega");
        assert_eq!(
            values["mapData"],
            json!({"one": {"nested": "true"}, "two": {"nested": "true"}})
        );
        assert_eq!(
            values["listData"],
            json!([{"one": null, "nested": "true"}, {"two": null, "nested": "true"}])
        );
    }

    #[test]
    fn clusters_without_exportable_labels_are_untouched() {
        let c = ClusterInfo::new("ns", "c", [("fleet.cattle.io/x", "y")]);
        // fleet.cattle.io labels are exported, so this cluster is templated...
        assert_eq!(run(json!({}), &c).unwrap(), json!({"helm": {}}));
        // ...while one with only other cattle.io labels is not.
        let c = ClusterInfo::new("ns", "c", [("provisioning.cattle.io/x", "y")]);
        let input = json!({"helm": {"values": {"t": "${ .ClusterName }"}}});
        assert_eq!(run(input.clone(), &c).unwrap(), input);
    }

    #[test]
    fn template_errors_name_cluster_and_field() {
        let err = run(
            json!({"helm": {"values": {"a": {"b": "${ .ClusterLabels.nope }"}}}}),
            &cluster(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "cluster fleet-default/c1: helm.values.a.b: map has no entry for key \"nope\""
        );
        let err = run(
            json!({"helm": {"templateValues": {"x": "${ env \"HOME\" }"}}}),
            &cluster(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "cluster fleet-default/c1: helm.templateValues.x: function \"env\" not defined"
        );
        let err = run(
            json!({"helm": {"templateValues": {"x": "password: [${ .ClusterName }"}}}),
            &cluster(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "cluster fleet-default/c1: helm.templateValues.x: the rendered template is not valid YAML"
        );
    }

    #[test]
    fn scalar_resolution() {
        assert_eq!(resolve_scalar("3"), json!(3));
        assert_eq!(resolve_scalar("-4"), json!(-4));
        assert_eq!(resolve_scalar("1.5"), json!(1.5));
        assert_eq!(resolve_scalar("yes"), json!(true));
        assert_eq!(resolve_scalar("off"), json!(false));
        assert_eq!(resolve_scalar("~"), Value::Null);
        assert_eq!(resolve_scalar("prod"), json!("prod"));
        assert_eq!(resolve_scalar("1.2.3"), json!("1.2.3"));
    }
}
