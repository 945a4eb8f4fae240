//! Validation of written objects against their schema, as kube-apiserver does: fields the schema does not
//! declare are dropped (and refused under `fieldValidation=Strict`); custom resources are checked against
//! their CRD's `openAPIV3Schema` (value types and required fields, answered 422), built-in kinds against the
//! schemas of [`crate::kinds::builtin_schema`] with the decoding errors of Go's JSON decoder (answered 400).

use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::kinds::builtin_schema::GO_TYPE;
use crate::kinds::registry::ResourceType;
use crate::storage::object;

/// The schema objects of `rt` are checked against: the CRD's, or the built-in kind's.
pub fn schema_of(rt: &ResourceType) -> Option<std::sync::Arc<Value>> {
    match &rt.crd {
        Some(_) => rt.schema.clone(),
        None => crate::kinds::builtin_schema::inlined(&rt.api_version(), &rt.kind),
    }
}

/// Prunes, defaults and validates an object about to be written. Unknown fields are refused under
/// `fieldValidation=Strict`, reported as warnings under `Warn` (the default) and dropped silently under
/// `Ignore`.
pub fn check_write(req: &crate::http::request::Request, obj: &mut Value) -> ApiResult<()> {
    let rt = &*req.rt;
    let Some(schema) = schema_of(rt) else {
        return Ok(());
    };
    let pruned = prune_and_default(&schema, obj);
    let field_validation = req.query.get("fieldValidation");
    reject_unknown_fields(rt, field_validation, &pruned)?;
    if field_validation.is_none_or(|v| v == "Warn") {
        for field in &pruned {
            req.warn(format!("unknown field \"{field}\""));
        }
    }
    match rt.crd {
        Some(_) => against_schema(rt, &schema, obj),
        None => {
            decode_types(rt, &schema, obj)?;
            required_fields(rt, &schema, obj)
        }
    }
}

/// Built-in kinds: fields their schema lists as `required` that are missing or null, answered 422 as
/// kube-apiserver's validation answers them (`spec.selector: Required value`).
fn required_fields(rt: &ResourceType, schema: &Value, obj: &Value) -> ApiResult<()> {
    let mut causes = Vec::new();
    missing_required(schema, obj, "", &mut causes);
    if causes.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(
        &rt.group,
        &rt.kind,
        object::name(obj),
        &causes,
    ))
}

fn missing_required(schema: &Value, value: &Value, path: &str, causes: &mut Vec<(String, String)>) {
    let join = |field: &str| {
        if path.is_empty() {
            field.to_string()
        } else {
            format!("{path}.{field}")
        }
    };
    match value {
        Value::Object(map) => {
            let required = schema.get("required").and_then(Value::as_array);
            for field in required.into_iter().flatten().filter_map(Value::as_str) {
                let identity =
                    path.is_empty() && matches!(field, "apiVersion" | "kind" | "metadata");
                if !identity && map.get(field).is_none_or(Value::is_null) {
                    causes.push((join(field), "Required value".into()));
                }
            }
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            for (key, item) in map {
                if path.is_empty() && key == "metadata" {
                    continue;
                }
                match (props.and_then(|p| p.get(key)), additional) {
                    (Some(sub), _) => missing_required(sub, item, &join(key), causes),
                    (None, Some(sub)) => {
                        missing_required(sub, item, &format!("{path}[{key}]"), causes)
                    }
                    _ => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    missing_required(sub, item, &format!("{path}[{i}]"), causes);
                }
            }
        }
        _ => {}
    }
}

/// Built-in kinds: the first value whose JSON type the Go field cannot hold, in `encoding/json`'s words.
fn decode_types(rt: &ResourceType, schema: &Value, obj: &Value) -> ApiResult<()> {
    let Some(map) = obj.as_object() else {
        return Ok(());
    };
    let props = schema.get("properties").and_then(Value::as_object);
    let go_type = schema.get(GO_TYPE).and_then(Value::as_str).unwrap_or("");
    let struct_name = go_type.rsplit('.').next().unwrap_or(go_type);
    for (field, value) in map {
        if matches!(field.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        if let Some(sub) = props.and_then(|p| p.get(field))
            && let Some(message) = go_decode(sub, value, struct_name, field)
        {
            return Err(ApiError::bad_request(format!(
                "{kind} in version \"{version}\" cannot be handled as a {kind}: {message}",
                kind = rt.kind,
                version = rt.version,
            )));
        }
    }
    Ok(())
}

fn go_decode(schema: &Value, value: &Value, struct_name: &str, path: &str) -> Option<String> {
    if value.is_null() {
        return None;
    }
    let mismatch = |found: String| {
        Some(format!(
            "json: cannot unmarshal {found} into Go struct field {struct_name}.{path} of type {}",
            go_type_name(schema)
        ))
    };
    if schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        == Some(true)
    {
        return match value {
            Value::String(_) | Value::Number(_) => None,
            other => mismatch(json_type(other).into()),
        };
    }
    match (schema.get("type").and_then(Value::as_str), value) {
        (Some("integer"), Value::Number(n)) if !(n.is_i64() || n.is_u64()) => {
            return mismatch(format!("number {n}"));
        }
        (Some("integer" | "number"), Value::Number(_))
        | (Some("string"), Value::String(_))
        | (Some("boolean"), Value::Bool(_))
        | (Some("array"), Value::Array(_))
        | (Some("object") | None, Value::Object(_)) => {}
        (None, _) => return None,
        (Some(_), other) => return mismatch(json_type(other).into()),
    }
    match value {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            let inner = schema
                .get(GO_TYPE)
                .and_then(Value::as_str)
                .map(|t| t.rsplit('.').next().unwrap_or(t))
                .unwrap_or(struct_name);
            for (key, item) in map {
                let found = match (props.and_then(|p| p.get(key)), additional) {
                    (Some(sub), _) => go_decode(sub, item, inner, &format!("{path}.{key}")),
                    (None, Some(sub)) => go_decode(sub, item, struct_name, path),
                    _ => None,
                };
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        Value::Array(items) => {
            let sub = schema.get("items")?;
            items
                .iter()
                .find_map(|item| go_decode(sub, item, struct_name, path))
        }
        _ => None,
    }
}

/// Go's `encoding/json` names JSON types this way in its errors.
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn go_type_name(schema: &Value) -> String {
    if let Some(name) = schema.get(GO_TYPE).and_then(Value::as_str) {
        return name.to_string();
    }
    if schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        == Some(true)
    {
        return "intstr.IntOrString".into();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("integer") => match schema.get("format").and_then(Value::as_str) {
            Some("int32") => "int32".into(),
            _ => "int64".into(),
        },
        Some("number") => "float64".into(),
        Some("boolean") => "bool".into(),
        Some("string") => "string".into(),
        Some("array") => format!(
            "[]{}",
            schema.get("items").map(go_type_name).unwrap_or_default()
        ),
        Some("object") => match schema.get("additionalProperties").filter(|a| a.is_object()) {
            Some(values) => format!("map[string]{}", go_type_name(values)),
            None => "map[string]interface {}".into(),
        },
        _ => "interface {}".into(),
    }
}

fn against_schema(rt: &ResourceType, schema: &Value, obj: &Value) -> ApiResult<()> {
    let mut causes = Vec::new();
    // apiVersion, kind and metadata are validated by the server itself.
    if let (Some(props), Some(map)) = (
        schema.get("properties").and_then(Value::as_object),
        obj.as_object(),
    ) {
        for (field, value) in map {
            if matches!(field.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            if let Some(sub) = props.get(field) {
                check(sub, value, field, &mut causes);
            }
        }
        required(schema, obj, "", &mut causes);
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            &rt.group,
            &rt.kind,
            object::name(obj),
            &causes,
        ))
    }
}

fn required(schema: &Value, value: &Value, path: &str, causes: &mut Vec<(String, String)>) {
    if let Some(req) = schema.get("required").and_then(Value::as_array) {
        for field in req.iter().filter_map(Value::as_str) {
            if value.get(field).is_none() && !matches!(field, "apiVersion" | "kind" | "metadata") {
                let full = if path.is_empty() {
                    field.to_string()
                } else {
                    format!("{path}.{field}")
                };
                causes.push((full, "Required value".into()));
            }
        }
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn check(schema: &Value, value: &Value, path: &str, causes: &mut Vec<(String, String)>) {
    if schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        == Some(true)
    {
        if !matches!(value, Value::String(_) | Value::Number(_)) {
            causes.push((
                path.into(),
                format!(
                    "Invalid value: \"{}\": {path} in body must be of type integer-or-string",
                    type_name(value)
                ),
            ));
        }
        return;
    }
    if value.is_null() && schema.get("nullable").and_then(Value::as_bool) == Some(true) {
        return;
    }
    let actual = type_name(value);
    if let Some(expected) = schema.get("type").and_then(Value::as_str) {
        let ok = expected == actual || (expected == "number" && actual == "integer");
        if !ok {
            causes.push((path.into(), format!("Invalid value: \"{actual}\": {path} in body must be of type {expected}: \"{actual}\"")));
            return;
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        causes.push((
            path.into(),
            format!(
                "Unsupported value: {value}: supported values: {}",
                list.join(", ")
            ),
        ));
    }
    match value {
        Value::Object(map) => {
            required(schema, value, path, causes);
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties");
            for (k, v) in map {
                let child = format!("{path}.{k}");
                if let Some(sub) = props.and_then(|p| p.get(k)) {
                    check(sub, v, &child, causes);
                } else if let Some(sub) = additional.filter(|a| a.is_object()) {
                    check(sub, v, &child, causes);
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(sub, item, &format!("{path}[{i}]"), causes);
                }
            }
        }
        _ => {}
    }
}

/// Structural-schema treatment of a custom resource before validation, as kube-apiserver does: fields the
/// schema does not declare are pruned (unless `x-kubernetes-preserve-unknown-fields`), and missing fields
/// with a `default` get it. Returns the paths of the pruned fields.
fn prune_and_default(schema: &Value, obj: &mut Value) -> Vec<String> {
    let mut pruned = Vec::new();
    let Some(map) = obj.as_object_mut() else {
        return pruned;
    };
    let props = schema.get("properties").and_then(Value::as_object);
    if schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        != Some(true)
    {
        map.retain(|k, _| {
            let keep = matches!(k.as_str(), "apiVersion" | "kind" | "metadata")
                || props.is_some_and(|p| p.contains_key(k));
            if !keep {
                pruned.push(k.clone());
            }
            keep
        });
    }
    for (key, value) in map.iter_mut() {
        if matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        if let Some(sub) = props.and_then(|p| p.get(key)) {
            shape(sub, value, key, &mut pruned);
        }
    }
    add_defaults(schema, obj, true);
    pruned
}

fn shape(schema: &Value, value: &mut Value, path: &str, pruned: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            let preserve = schema
                .get("x-kubernetes-preserve-unknown-fields")
                .and_then(Value::as_bool)
                == Some(true);
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            if !preserve
                && additional.is_none()
                && (props.is_some() || schema.get("type").and_then(Value::as_str) == Some("object"))
            {
                let embedded = schema
                    .get("x-kubernetes-embedded-resource")
                    .and_then(Value::as_bool)
                    == Some(true);
                map.retain(|k, _| {
                    let keep = props.is_some_and(|p| p.contains_key(k))
                        || embedded && matches!(k.as_str(), "apiVersion" | "kind" | "metadata");
                    if !keep {
                        pruned.push(format!("{path}.{k}"));
                    }
                    keep
                });
            }
            for (k, v) in map.iter_mut() {
                if let Some(sub) = props.and_then(|p| p.get(k)).or(additional) {
                    shape(sub, v, &format!("{path}.{k}"), pruned);
                }
            }
            add_defaults(schema, value, false);
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    shape(sub, item, &format!("{path}[{i}]"), pruned);
                }
            }
        }
        _ => {}
    }
}

fn add_defaults(schema: &Value, value: &mut Value, top: bool) {
    let (Some(props), Some(map)) = (
        schema.get("properties").and_then(Value::as_object),
        value.as_object_mut(),
    ) else {
        return;
    };
    for (key, sub) in props {
        if top && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        if !map.contains_key(key)
            && let Some(default) = sub.get("default")
        {
            let mut v = default.clone();
            shape(sub, &mut v, key, &mut Vec::new());
            map.insert(key.clone(), v);
        }
    }
}

/// `fieldValidation=Strict` turns pruned (unknown) fields into a 400, as kube-apiserver does.
fn reject_unknown_fields(
    rt: &ResourceType,
    field_validation: Option<&str>,
    pruned: &[String],
) -> ApiResult<()> {
    if field_validation != Some("Strict") || pruned.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = pruned
        .iter()
        .map(|p| format!("unknown field \"{p}\""))
        .collect();
    Err(ApiError::bad_request(format!(
        "{kind} in version \"{version}\" cannot be handled as a {kind}: strict decoding error: {}",
        list.join(", "),
        kind = rt.kind,
        version = rt.version,
    )))
}
