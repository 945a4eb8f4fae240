//! Per-cluster preprocessing of `helm.values` (Fleet's `preprocessHelmValues`): the
//! `global.fleet.clusterLabels.<label>` substitution, then the `${ }` templates of `values` and
//! `templateValues` rendered against `{ClusterNamespace, ClusterName, ClusterLabels,
//! ClusterAnnotations, ClusterValues}` on fleet-helm's Go-template engine.
//!
//! This follows Rancher Fleet's code (`internal/cmd/controller/target/builder.go`), which the docs
//! only sketch: the values are written out as YAML the way `sigs.k8s.io/yaml` writes them (Helm's
//! `toYaml`: sorted keys, strings quoted only where YAML needs it), that whole text is one Go
//! template with `${`/`}` delimiters, Sprig's functions minus `env`, `expandenv` and
//! `getHostByName`, and `missingkey=error`, and its output is read back as YAML 1.1. So
//! `replicas: ${ .ClusterLabels.replicas }` becomes the number 3, `${ … | quote }` written
//! unquoted in fleet.yaml becomes a string without the quotes, and `${ toJson … }` a list or map.
//! Each `templateValues` entry is a template of its own whose output is read as YAML; its keys
//! replace those of `values`. Any error fails the cluster's targeting, as in Fleet; ours names
//! the field the failing template is in (found by rendering the templated strings one at a time,
//! each in its place in the YAML, once the whole text has failed).
//!
//! Fleet's quirks that change the DeploymentID are kept: nothing happens when the cluster has no
//! labels left after cleaning; missing `helm` becomes `{}` and missing `values` becomes `{}`.
//! Values without any `${` are not sent through the YAML round trip, whose output would mean the
//! same to Helm.

use fleet_api::{BundleDeploymentOptions, HelmOptions};
use fleet_helm::{TemplateError, TextOptions, render_text};
use serde_json::{Map, Value};

use crate::error::{TargetError, TemplateProblem};
use crate::model::ClusterInfo;
use crate::selector::Labels;

/// Prefix of the magic string replaced by a cluster label's value.
pub const CLUSTER_LABEL_PREFIX: &str = "global.fleet.clusterLabels.";
const MAX_DEPTH: usize = 50;
/// The field `values` templates are in, as errors name it.
const VALUES_FIELD: &str = "helm.values";

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
    options: &mut BundleDeploymentOptions,
    cluster: &ClusterInfo,
) -> Result<(), TargetError> {
    let labels = export_labels(&cluster.labels);
    if labels.is_empty() {
        return Ok(());
    }
    let Some(helm) = &mut options.helm else {
        options.helm = Some(HelmOptions::default());
        return Ok(());
    };
    let values = helm.values.get_or_insert_default();
    if helm.template_values.is_empty() && values.is_empty() {
        return Ok(());
    }
    let fail = |(field, problem): FieldError| TargetError::Template {
        cluster: cluster.key().to_string(),
        field,
        problem,
    };
    substitute_labels(values, &labels, 0, VALUES_FIELD).map_err(fail)?;
    if helm.disable_pre_process {
        return Ok(());
    }
    let context = template_context(cluster);
    values.0 = render_values(values, &context).map_err(fail)?;
    for (key, template) in &helm.template_values {
        let field = format!("helm.templateValues.{key}");
        let value = render_template_value(&field, template, &context).map_err(fail)?;
        values.insert(key.clone(), value);
    }
    Ok(())
}

/// A failed template's field and problem.
pub type FieldError = (String, TemplateProblem);

fn substitute_labels(
    values: &mut Map<String, Value>,
    labels: &Labels,
    depth: usize,
    path: &str,
) -> Result<(), FieldError> {
    if depth > MAX_DEPTH {
        return Err((path.to_string(), TemplateProblem::TooDeep(MAX_DEPTH)));
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

/// Renders `helm.values` as Fleet's `processTemplateValues` does: the values written out as YAML,
/// rendered as one template against `context` (a [`template_context`]), read back as YAML.
pub fn render_values(
    values: &Map<String, Value>,
    context: &Value,
) -> Result<Map<String, Value>, FieldError> {
    if !values
        .iter()
        .any(|(k, v)| k.contains("${") || has_template(v))
    {
        return Ok(values.clone());
    }
    let data = fleet_helm::values_from_json(context);
    let document = Value::Object(values.clone());
    match round_trip(&document, &data) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(Value::Null) => Ok(Map::new()),
        Ok(_) => Err((VALUES_FIELD.to_string(), TemplateProblem::NotAMap)),
        Err(whole) => Err(locate(&document, &data, &whole, &mut Vec::new())
            .unwrap_or((VALUES_FIELD.to_string(), whole))),
    }
}

/// Renders one `templateValues` entry (Fleet's `processTemplateValuesData`): the template's output
/// read as a YAML document (empty output is null).
pub fn render_template_value(
    field: &str,
    template: &str,
    context: &Value,
) -> Result<Value, FieldError> {
    let data = fleet_helm::values_from_json(context);
    let text = render_text(field, template, &data, &TextOptions::fleet())
        .map_err(|e| (field.to_string(), problem(e)))?;
    read_yaml(&text).map_err(|p| (field.to_string(), p))
}

/// Whether any string or key in `value` holds a `${`.
fn has_template(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains("${"),
        Value::Array(items) => items.iter().any(has_template),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains("${") || has_template(v)),
        _ => false,
    }
}

/// `document` as `sigs.k8s.io/yaml` writes it (numbers as Go's float64, as Fleet holds them),
/// rendered against `data`, read back.
fn round_trip(document: &Value, data: &fleet_helm::Value) -> Result<Value, TemplateProblem> {
    let text = fleet_helm::yaml::to_yaml(&fleet_helm::values_from_json(document))
        .map_err(|e| TemplateProblem::Engine(e.to_string()))?;
    let rendered = render_text("values", &text, data, &TextOptions::fleet()).map_err(problem)?;
    read_yaml(&rendered)
}

/// Reads rendered text as `sigs.k8s.io/yaml` does: the first YAML 1.1 document; empty is null.
fn read_yaml(text: &str) -> Result<Value, TemplateProblem> {
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    fleet_yaml::parse::first_value(text, "values").map_err(|e| TemplateProblem::NotYaml(e.message))
}

/// One step of the path from the values' root to a templated string.
enum Step {
    Key(String),
    Index(usize),
}

fn field_of(path: &[Step]) -> String {
    let mut field = VALUES_FIELD.to_string();
    for step in path {
        match step {
            Step::Key(k) => {
                field.push('.');
                field.push_str(k);
            }
            Step::Index(i) => field.push_str(&format!("[{i}]")),
        }
    }
    field
}

/// `leaf` wrapped in maps and lists along `path`: the leaf's only ancestors, so it is written out
/// at the same depth and in the same style as in the whole document.
fn skeleton(path: &[Step], leaf: Value) -> Value {
    path.iter().rev().fold(leaf, |inner, step| match step {
        Step::Key(k) => Value::Object(Map::from_iter([(k.clone(), inner)])),
        Step::Index(_) => Value::Array(vec![inner]),
    })
}

/// The first templated string (in the order the YAML writes them) that fails on its own as the
/// whole document failed (`whole`): alone (its template's errors, with lines of its own text),
/// then in its place in the YAML (what its output does to the document). A string that fails
/// otherwise alone (half of an `if` whose `end` is in another value) is not blamed.
fn locate(
    value: &Value,
    data: &fleet_helm::Value,
    whole: &TemplateProblem,
    path: &mut Vec<Step>,
) -> Option<FieldError> {
    let check = |path: &[Step], text: &str, leaf: Value| -> Option<FieldError> {
        let alone = match render_text("values", text, data, &TextOptions::fleet()) {
            Err(e) => Some(problem(e)),
            Ok(_) => round_trip(&skeleton(path, leaf), data).err(),
        };
        alone
            .filter(|p| same_failure(whole, p))
            .map(|p| (field_of(path), p))
    };
    match value {
        Value::String(s) if s.contains("${") => check(path, s, value.clone()),
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for key in keys {
                path.push(Step::Key(key.clone()));
                let found = if key.contains("${") {
                    check(path, key, Value::Null)
                } else {
                    None
                }
                .or_else(|| locate(&map[key], data, whole, path));
                path.pop();
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(Step::Index(i));
                let found = locate(item, data, whole, path);
                path.pop();
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        _ => None,
    }
}

/// Whether a string's own failure is the one the whole document met (lines differ).
fn same_failure(whole: &TemplateProblem, alone: &TemplateProblem) -> bool {
    use TemplateProblem::*;
    match (whole, alone) {
        (Syntax { message: a, .. }, Syntax { message: b, .. }) => a == b,
        (NotYaml(_), NotYaml(_)) => true,
        (a, b) => a == b,
    }
}

/// What the engine's error says, without the template's name (the field says where).
fn problem(e: TemplateError) -> TemplateProblem {
    match e {
        TemplateError::Parse { line, message, .. } => TemplateProblem::Syntax { line, message },
        TemplateError::At(at) => TemplateProblem::Execution {
            expression: at.context,
            message: at.message,
        },
        TemplateError::Fail { message, .. } => TemplateProblem::Failed(message),
        TemplateError::Budget(_) => TemplateProblem::Budget,
        TemplateError::Exec(message) => TemplateProblem::Engine(message),
    }
}

#[cfg(test)]
mod tests;
