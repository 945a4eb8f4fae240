//! The `scale` subresource of Deployments, ReplicaSets and StatefulSets, as kube-apiserver serves it: an
//! `autoscaling/v1` `Scale` whose `spec.replicas` is the object's and whose status carries the observed
//! replicas and the label selector in its string form. GET reads it; PUT and PATCH (JSON, merge and
//! strategic merge patches of the Scale) change only the object's `spec.replicas`, which is what
//! `kubectl scale` does.

use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};
use crate::handlers::patch::decode_patch;
use crate::handlers::update::{WriteKind, write_existing};
use crate::http::request::Request;
use crate::state::Inner;
use crate::storage::object;

/// GET, PUT or PATCH on `…/{name}/scale`.
pub fn handle(inner: &Inner, req: &Request, verb: &str) -> ApiResult<Response> {
    let rt = &req.rt;
    let name = req.path.name.clone().unwrap_or_default();
    let scale = match verb {
        "get" => {
            let key = crate::handlers::respond::object_key(req, &name);
            let obj = inner
                .store
                .get(&key)
                .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, &name))?;
            scale_of(&obj)
        }
        "update" | "patch" => {
            let change = change_of(req, verb)?;
            let stored = write_existing(inner, req, WriteKind::Update, |old| {
                let wanted = change(&scale_of(old))?;
                set_replicas(old, &wanted)
            })?;
            scale_of(&stored)
        }
        _ => return Err(ApiError::method_not_allowed(req.method.as_str())),
    };
    Ok(axum::Json(scale).into_response())
}

type Change = Box<dyn Fn(&Value) -> ApiResult<Value>>;

/// How the request turns the current Scale into the wanted one.
fn change_of(req: &Request, verb: &str) -> ApiResult<Change> {
    if verb == "update" {
        let body = req.object()?;
        return Ok(Box::new(move |_| Ok(body.clone())));
    }
    let (content_type, patch) = decode_patch(req)?;
    let json_patch = content_type == "application/json-patch+json";
    Ok(Box::new(move |current| {
        let mut doc = current.clone();
        if json_patch {
            crate::handlers::patch::apply_json_patch(&mut doc, &patch)?;
        } else {
            if !patch.is_object() {
                return Err(ApiError::bad_request("a merge patch must be a JSON object"));
            }
            // A Scale has no lists: a strategic merge patch merges as a merge patch does.
            fleet_yaml::patch::merge_patch::apply(&mut doc, &patch);
        }
        Ok(doc)
    }))
}

/// The object with the wanted Scale's replicas, checked as kube-apiserver checks a Scale.
fn set_replicas(old: &Value, wanted: &Value) -> ApiResult<Value> {
    let name = object::name(old);
    if let Some(wanted_name) = object::meta_str(wanted, "name")
        && !wanted_name.is_empty()
        && wanted_name != name
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({wanted_name}) does not match the name on the URL ({name})"
        )));
    }
    let replicas = match wanted.pointer("/spec/replicas") {
        None | Some(Value::Null) => 0,
        Some(value) => value.as_i64().ok_or_else(|| {
            ApiError::bad_request(format!(
                "Scale in version \"v1\" cannot be handled as a Scale: spec.replicas: expected an integer, got {value}"
            ))
        })?,
    };
    if replicas < 0 {
        return Err(ApiError::invalid(
            "autoscaling",
            "Scale",
            name,
            &[(
                "spec.replicas".into(),
                format!("Invalid value: {replicas}: must be greater than or equal to 0"),
            )],
        ));
    }
    let mut new = old.clone();
    new["spec"]["replicas"] = json!(replicas);
    // The Scale's resourceVersion, when it names one, is the precondition of the write.
    let rv = object::meta_str(wanted, "resourceVersion").unwrap_or("");
    let meta = object::metadata_mut(&mut new);
    if rv.is_empty() {
        meta.remove("resourceVersion");
    } else {
        meta.insert("resourceVersion".into(), json!(rv));
    }
    Ok(new)
}

/// The `autoscaling/v1` Scale of a scalable object.
pub fn scale_of(obj: &Value) -> Value {
    let mut metadata = serde_json::Map::new();
    for field in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(value) = object::metadata(obj).and_then(|m| m.get(field)) {
            metadata.insert(field.into(), value.clone());
        }
    }
    let replicas = obj
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let observed = obj
        .pointer("/status/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let mut status = json!({"replicas": observed});
    let selector = obj.pointer("/spec/selector").map(selector_string);
    if let Some(selector) = selector.filter(|s| !s.is_empty()) {
        status["selector"] = json!(selector);
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": {"replicas": replicas},
        "status": status,
    })
}

/// A LabelSelector in its string form (`app=web,tier in (a,b),!legacy`), requirements sorted by key.
fn selector_string(selector: &Value) -> String {
    let mut requirements: Vec<(String, String)> = Vec::new();
    if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
        for (key, value) in labels {
            let value = value.as_str().unwrap_or_default();
            requirements.push((key.clone(), format!("{key}={value}")));
        }
    }
    for expression in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = expression
            .get("key")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut values: Vec<&str> = expression
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        let text = match expression.get("operator").and_then(Value::as_str) {
            Some("In") => format!("{key} in ({})", values.join(",")),
            Some("NotIn") => format!("{key} notin ({})", values.join(",")),
            Some("Exists") => key.to_string(),
            Some("DoesNotExist") => format!("!{key}"),
            _ => continue,
        };
        requirements.push((key.to_string(), text));
    }
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    requirements
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_in_string_form() {
        let selector = json!({"matchLabels": {"tier": "web", "app": "x"},
            "matchExpressions": [{"key": "env", "operator": "In", "values": ["b", "a"]},
                {"key": "legacy", "operator": "DoesNotExist"}]});
        assert_eq!(
            selector_string(&selector),
            "app=x,env in (a,b),!legacy,tier=web"
        );
    }
}
