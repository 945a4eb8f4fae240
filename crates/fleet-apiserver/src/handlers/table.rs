//! `meta.k8s.io/v1` Table responses (what `kubectl get` asks for) built from printer columns, and
//! `PartialObjectMetadata` responses, plus the small JSONPath subset printer columns use.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::kinds::registry::{PrinterColumn, ResourceType};
use crate::storage::object;

pub fn wants_table(accept: &str) -> bool {
    accept
        .split(',')
        .next()
        .is_some_and(|first| first.contains("as=Table"))
}

pub fn wants_metadata(accept: &str) -> bool {
    accept
        .split(',')
        .next()
        .is_some_and(|first| first.contains("as=PartialObjectMetadata"))
}

fn metadata_only(obj: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

pub fn partial_metadata(obj: &Arc<Value>) -> Value {
    metadata_only(obj)
}

pub fn partial_metadata_list(objects: &[Arc<Value>], rv: u64, next: Option<&str>) -> Value {
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if let Some(next) = next {
        metadata["continue"] = json!(next);
    }
    let items: Vec<Value> = objects.iter().map(|o| metadata_only(o)).collect();
    json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": metadata, "items": items})
}

/// A Table of `objects` with Name, the type's printer columns, and Age.
pub fn table(
    rt: &ResourceType,
    objects: &[Arc<Value>],
    rv: Option<u64>,
    next: Option<&str>,
) -> Value {
    let mut columns = vec![
        json!({"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace.", "priority": 0}),
    ];
    let has_age = rt
        .printer_columns
        .iter()
        .any(|c| c.json_path == ".metadata.creationTimestamp");
    for col in &rt.printer_columns {
        let type_ = match col.type_.as_str() {
            "count" => "integer",
            "ratio" => "string",
            other => other,
        };
        columns.push(json!({"name": col.name, "type": type_, "format": col.format, "description": col.description, "priority": col.priority}));
    }
    if !has_age {
        columns.push(json!({"name": "Age", "type": "date", "format": "", "description": "CreationTimestamp", "priority": 0}));
    }
    let rows: Vec<Value> = objects
        .iter()
        .map(|obj| {
            let mut cells = vec![json!(object::name(obj))];
            for col in &rt.printer_columns {
                cells.push(cell(obj, col));
            }
            if !has_age {
                cells.push(age(obj));
            }
            json!({"cells": cells, "object": metadata_only(obj)})
        })
        .collect();
    let mut metadata = json!({});
    if let Some(rv) = rv {
        metadata["resourceVersion"] = json!(rv.to_string());
    }
    if let Some(next) = next {
        metadata["continue"] = json!(next);
    }
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata, "columnDefinitions": columns, "rows": rows})
}

fn cell(obj: &Value, col: &PrinterColumn) -> Value {
    if col.type_ == "ratio" {
        // kube-apiserver's printers show ready workloads as "ready/desired" (`kubectl get deploy`: READY 3/3),
        // a missing count as 0.
        let (ready, desired) = col
            .json_path
            .split_once('/')
            .unwrap_or((&col.json_path, ""));
        let count = |path: &str| {
            eval(obj, path)
                .first()
                .and_then(|v| v.as_i64())
                .unwrap_or(0)
        };
        return json!(format!("{}/{}", count(ready), count(desired)));
    }
    let found = eval(obj, &col.json_path);
    if col.type_ == "count" {
        return json!(
            found
                .first()
                .map(|v| match v {
                    Value::Object(m) => m.len(),
                    Value::Array(a) => a.len(),
                    _ => 0,
                })
                .unwrap_or(0)
        );
    }
    if col.type_ == "date" {
        return found
            .first()
            .map(|v| age_of(v.as_str().unwrap_or("")))
            .unwrap_or(Value::Null);
    }
    match found.as_slice() {
        [] => Value::Null,
        [one] => (*one).clone(),
        many => json!(
            many.iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

fn age(obj: &Value) -> Value {
    age_of(object::meta_str(obj, "creationTimestamp").unwrap_or(""))
}

/// kubectl's short duration form (`5s`, `3m`, `2h`, `4d`).
fn age_of(timestamp: &str) -> Value {
    let Ok(t) = chrono::DateTime::parse_from_rfc3339(timestamp) else {
        return json!("<unknown>");
    };
    let secs = (chrono::Utc::now() - t.with_timezone(&chrono::Utc))
        .num_seconds()
        .max(0);
    let text = match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s if s < 172_800 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    };
    json!(text)
}

/// Evaluates a JSONPath such as `.status.conditions[?(@.type=="Ready")].status` or `.spec.items[0].name`.
pub fn eval<'a>(obj: &'a Value, path: &str) -> Vec<&'a Value> {
    let path = path
        .trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .trim_start_matches('$');
    let mut current = vec![obj];
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let field = &after[..end];
            rest = &after[end..];
            if field.is_empty() {
                continue;
            }
            current = current.into_iter().filter_map(|v| v.get(field)).collect();
        } else if let Some(after) = rest.strip_prefix('[') {
            let Some(end) = after.find(']') else {
                return vec![];
            };
            let selector = &after[..end];
            rest = &after[end + 1..];
            current = current
                .into_iter()
                .flat_map(|v| index(v, selector))
                .collect();
        } else {
            return vec![];
        }
    }
    current
}

fn index<'a>(value: &'a Value, selector: &str) -> Vec<&'a Value> {
    let Some(items) = value.as_array() else {
        return vec![];
    };
    if selector == "*" {
        return items.iter().collect();
    }
    if let Ok(i) = selector.parse::<i64>() {
        let idx = if i < 0 { items.len() as i64 + i } else { i };
        return items.get(idx as usize).into_iter().collect();
    }
    // `?(@.field=="value")`
    let Some(cond) = selector
        .strip_prefix("?(@.")
        .and_then(|s| s.strip_suffix(')'))
    else {
        return vec![];
    };
    let Some((field, wanted)) = cond.split_once("==") else {
        return vec![];
    };
    let wanted = wanted.trim().trim_matches('"').trim_matches('\'');
    items
        .iter()
        .filter(|item| {
            item.get(field.trim()).is_some_and(|v| match v {
                Value::String(s) => s == wanted,
                other => *other == wanted,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_workloads_show_as_ready_over_desired() {
        let column = PrinterColumn {
            name: "Ready".into(),
            type_: "ratio".into(),
            json_path: ".status.readyReplicas/.spec.replicas".into(),
            description: String::new(),
            priority: 0,
            format: String::new(),
        };
        let deployment = json!({"spec": {"replicas": 3}, "status": {"readyReplicas": 2}});
        assert_eq!(cell(&deployment, &column), json!("2/3"));
        assert_eq!(
            cell(&json!({"spec": {"replicas": 1}}), &column),
            json!("0/1")
        );
    }

    #[test]
    fn jsonpath_subset() {
        let obj = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "X", "status": "False"}]}, "spec": {"a": [1, 2]}});
        assert_eq!(
            eval(&obj, ".status.conditions[?(@.type==\"Ready\")].status"),
            vec![&json!("True")]
        );
        assert_eq!(eval(&obj, ".spec.a[1]"), vec![&json!(2)]);
        assert_eq!(eval(&obj, ".spec.a[-1]"), vec![&json!(2)]);
        assert!(eval(&obj, ".missing.x").is_empty());
    }
}
