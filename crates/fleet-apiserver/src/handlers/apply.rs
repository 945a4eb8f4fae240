//! Server-side apply: the applied configuration is merged into the live object, fields this manager applied
//! before and no longer applies are removed (unless another manager owns them), a field owned by another
//! manager with a different value is a conflict (409) unless `force` transfers it, and managedFields records
//! each manager's set.

use axum::response::Response;
use http::StatusCode;
use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};
use crate::handlers::create::create_object;
use crate::handlers::respond::{object_key, respond_object};
use crate::handlers::update::{WriteKind, write_existing};
use crate::http::request::{Request, decode_body};
use crate::state::Inner;
use crate::storage::fieldset::{
    FieldSet, child_schema, display_path, item_key, list_keys_for, remove_at, value_at,
};
use crate::storage::managed::{self, Entry};
use crate::storage::object;

pub fn apply(inner: &Inner, req: &Request) -> ApiResult<Response> {
    let applied = decode_body(&req.body, "application/apply-patch+yaml")?;
    if !applied.is_object() {
        return Err(ApiError::bad_request(
            "the apply configuration must be an object",
        ));
    }
    let Some(manager) = req.query.get("fieldManager").map(str::to_string) else {
        return Err(ApiError::bad_request(
            "PATCH requests with apply content type require a fieldManager",
        ));
    };
    for field in ["apiVersion", "kind"] {
        if applied
            .get(field)
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            return Err(ApiError::bad_request(format!(
                "{field} must be set in an apply configuration"
            )));
        }
    }
    let name = req.path.name.clone().unwrap_or_default();
    if let Some(body_name) = object::meta_str(&applied, "name")
        && body_name != name
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let force = req.query.flag("force");
    let schema = crate::kinds::validate::schema_of(&req.rt);
    let schema = schema.as_deref();
    let api_version = req.rt.api_version();
    let subresource = req.path.subresource.clone();
    if inner.store.get(&object_key(req, &name)).is_none() {
        if subresource.is_some() {
            return Err(ApiError::not_found(&req.rt.group, &req.rt.plural, &name));
        }
        let mut obj = applied.clone();
        let entry = Entry {
            manager: manager.clone(),
            operation: "Apply".into(),
            api_version: api_version.clone(),
            time: object::now_rfc3339(),
            subresource: None,
            fields: FieldSet::of_object(&applied, schema),
        };
        managed::write(&mut obj, &[entry]);
        let stored = create_object(inner, req, obj, WriteKind::Apply)?;
        return Ok(respond_object(req, StatusCode::CREATED, &stored));
    }
    let stored = write_existing(inner, req, WriteKind::Apply, |old| {
        merge_applied(
            old,
            &applied,
            &Applier {
                manager: &manager,
                force,
                api_version: &api_version,
                subresource: subresource.as_deref(),
                schema,
            },
        )
    })?;
    Ok(respond_object(req, StatusCode::OK, &stored))
}

/// Who applies, and how.
pub struct Applier<'a> {
    pub manager: &'a str,
    pub force: bool,
    pub api_version: &'a str,
    pub subresource: Option<&'a str>,
    /// The kind's schema, which says how its lists merge.
    pub schema: Option<&'a Value>,
}

/// The live object after `applier` applied `applied`.
pub fn merge_applied(old: &Value, applied: &Value, applier: &Applier<'_>) -> ApiResult<Value> {
    let Applier {
        manager,
        force,
        api_version,
        subresource,
        schema,
    } = *applier;
    let mut entries = managed::read(old);
    let new_set = FieldSet::of_object(applied, schema);
    let is_mine = |e: &Entry| {
        e.manager == manager && e.operation == "Apply" && e.subresource.as_deref() == subresource
    };
    let mut conflicts: Vec<(String, Vec<String>)> = Vec::new();
    for entry in entries.iter().filter(|e| !is_mine(e)) {
        for path in new_set.leaves() {
            if path.last().is_some_and(|p| p == ".") || !entry.fields.contains(&path) {
                continue;
            }
            if value_at(old, &path) != value_at(applied, &path) {
                conflicts.push((entry.manager.clone(), path));
            }
        }
    }
    if !conflicts.is_empty() {
        if !force {
            return Err(conflict_error(old, &conflicts, api_version));
        }
        for (owner, path) in &conflicts {
            for entry in entries.iter_mut().filter(|e| &e.manager == owner) {
                entry.fields.remove(path);
            }
        }
    }
    let previous = entries
        .iter()
        .find(|e| is_mine(e))
        .map(|e| e.fields.clone())
        .unwrap_or_default();
    let mut result = old.clone();
    for path in previous.leaves() {
        if new_set.contains(&path) {
            continue;
        }
        let ownership_path: &[String] = if path.last().is_some_and(|p| p == ".") {
            &path[..path.len() - 1]
        } else {
            &path
        };
        let owned_elsewhere = entries
            .iter()
            .filter(|e| !is_mine(e))
            .any(|e| e.fields.contains(ownership_path));
        if !owned_elsewhere {
            remove_at(&mut result, &path);
        }
    }
    let mut applied_body = applied.clone();
    if let Some(meta) = applied_body
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
    {
        meta.remove("managedFields");
        meta.remove("resourceVersion");
    }
    merge_into(&mut result, &applied_body, schema);
    entries.retain(|e| !is_mine(e));
    entries.push(Entry {
        manager: manager.to_string(),
        operation: "Apply".into(),
        api_version: api_version.to_string(),
        time: object::now_rfc3339(),
        subresource: subresource.map(str::to_string),
        fields: new_set,
    });
    managed::write(&mut result, &entries);
    Ok(result)
}

/// Deep merge: maps merge, keyed lists merge item by item, everything else (atomic lists included) is
/// replaced.
fn merge_into(live: &mut Value, applied: &Value, schema: Option<&Value>) {
    match (live, applied) {
        (Value::Object(live_map), Value::Object(applied_map)) => {
            for (k, v) in applied_map {
                match live_map.get_mut(k) {
                    Some(existing) => merge_into(existing, v, child_schema(schema, k)),
                    None => {
                        live_map.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (Value::Array(live_items), Value::Array(applied_items)) => {
            let Some(keys) = list_keys_for(schema, applied_items) else {
                *live_items = applied_items.clone();
                return;
            };
            let mut merged = Vec::new();
            let mut rest = std::mem::take(live_items);
            for item in applied_items {
                let id = item_key(item, &keys);
                match rest
                    .iter()
                    .position(|l| l.is_object() && item_key(l, &keys) == id)
                {
                    Some(i) => {
                        let mut existing = rest.remove(i);
                        merge_into(&mut existing, item, schema.and_then(|s| s.get("items")));
                        merged.push(existing);
                    }
                    None => merged.push(item.clone()),
                }
            }
            merged.extend(rest);
            *live_items = merged;
        }
        (live, applied) => *live = applied.clone(),
    }
}

fn conflict_error(old: &Value, conflicts: &[(String, Vec<String>)], api_version: &str) -> ApiError {
    let n = conflicts.len();
    let lines: Vec<String> = conflicts
        .iter()
        .map(|(m, p)| {
            format!(
                "conflict with \"{m}\" using {api_version}: {}",
                display_path(p)
            )
        })
        .collect();
    let message = if n == 1 {
        format!("Apply failed with 1 conflict: {}", lines[0])
    } else {
        format!("Apply failed with {n} conflicts: {}", lines.join("\n"))
    };
    let mut err = ApiError::new(409, "Conflict", message);
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|(m, p)| json!({"reason": "FieldManagerConflict", "message": format!("conflict with \"{m}\" using {api_version}"), "field": display_path(p)}))
        .collect();
    err.details = Some(json!({"name": object::name(old), "causes": causes}));
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live_after(old: &Value, applied: Value, manager: &str, force: bool) -> ApiResult<Value> {
        let applier = Applier {
            manager,
            force,
            api_version: "v1",
            subresource: None,
            schema: None,
        };
        merge_applied(old, &applied, &applier)
    }

    #[test]
    fn removes_fields_no_longer_applied_and_detects_conflicts() {
        let base =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}});
        let a1 = live_after(&base, json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"x": "1", "y": "2"}}), "a", false).unwrap();
        assert_eq!(a1["data"], json!({"x": "1", "y": "2"}));
        let a2 = live_after(&a1, json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"x": "1"}}), "a", false).unwrap();
        assert_eq!(a2["data"], json!({"x": "1"}));
        let err = live_after(
            &a2,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"x": "9"}}),
            "b",
            false,
        )
        .unwrap_err();
        assert_eq!(err.code, 409);
        assert!(
            err.message.contains("conflict with \"a\""),
            "{}",
            err.message
        );
        assert!(err.message.contains(".data.x"), "{}", err.message);
        let same = live_after(
            &a2,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"x": "1"}}),
            "b",
            false,
        )
        .unwrap();
        assert_eq!(same["data"], json!({"x": "1"}));
        let forced = live_after(
            &a2,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"x": "9"}}),
            "b",
            true,
        )
        .unwrap();
        assert_eq!(forced["data"]["x"], json!("9"));
        // After the transfer, `a` dropping x does not remove it: b owns it.
        let a3 = live_after(
            &forced,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
            "a",
            false,
        )
        .unwrap();
        assert_eq!(a3["data"]["x"], json!("9"));
    }
}
