//! OpenAPI v3 documents: the `/openapi/v3` index and one document per group/version with a path item per
//! served resource (carrying `x-kubernetes-group-version-kind` and the `fieldValidation` parameter that
//! tells kubectl the server validates fields) and a schema per kind: a CRD's own `openAPIV3Schema`, or for a
//! built-in kind its Kubernetes definition with every definition it refers to (for `kubectl explain`).

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::kinds::registry::{Registry, ResourceType};

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// `/openapi/v3`.
pub fn root(registry: &Registry) -> Value {
    let mut paths = Map::new();
    for (group, versions) in registry.group_versions() {
        for version in versions {
            let Some(doc) = group_version(registry, &group, &version) else {
                continue;
            };
            let hash = hex_digest(&doc);
            let path = gv_path(&group, &version);
            paths.insert(
                path.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash={hash}")}),
            );
        }
    }
    json!({"paths": paths})
}

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

fn hex_digest(doc: &Value) -> String {
    let digest = Sha256::digest(doc.to_string().as_bytes());
    digest.iter().take(16).map(|b| format!("{b:02X}")).collect()
}

/// The schema name of a kind, in kube-apiserver's reversed-group style.
fn schema_name(rt: &ResourceType) -> String {
    let group = if rt.group.is_empty() {
        "core".to_string()
    } else {
        rt.group.split('.').rev().collect::<Vec<_>>().join(".")
    };
    format!("{group}.{}.{}", rt.version, rt.kind)
}

fn gvk(rt: &ResourceType) -> Value {
    json!({"group": rt.group, "version": rt.version, "kind": rt.kind})
}

/// `/openapi/v3/api/v1` or `/openapi/v3/apis/{group}/{version}`.
pub fn group_version(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let types = registry.in_group_version(group, version);
    if types.is_empty() {
        return None;
    }
    let mut paths = Map::new();
    let builtin_names: Vec<&str> = types
        .iter()
        .filter(|rt| rt.crd.is_none())
        .filter_map(|rt| crate::kinds::builtin_schema::definition_name(&rt.api_version(), &rt.kind))
        .collect();
    let mut schemas = crate::kinds::builtin_schema::definitions_closure(
        builtin_names.into_iter().chain([OBJECT_META]),
    );
    for rt in &types {
        let builtin = rt
            .crd
            .is_none()
            .then(|| crate::kinds::builtin_schema::definition_name(&rt.api_version(), &rt.kind))
            .flatten();
        let name = match builtin {
            Some(name) => {
                if let Some(schema) = schemas.get_mut(name) {
                    schema["x-kubernetes-group-version-kind"] = json!([gvk(rt)]);
                }
                name.to_string()
            }
            None => {
                let name = schema_name(rt);
                schemas.insert(name.clone(), kind_schema(rt));
                name
            }
        };
        let prefix = format!("/{}", gv_path(group, version));
        let collection = if rt.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}", rt.plural)
        } else {
            format!("{prefix}/{}", rt.plural)
        };
        let reference = json!({"$ref": format!("#/components/schemas/{name}")});
        let mut operations = vec![(collection.clone(), &["list", "post"][..])];
        if !rt.virtual_only {
            operations.push((
                format!("{collection}/{{name}}"),
                &["get", "put", "patch", "delete"],
            ));
            if rt.status_subresource {
                operations.push((
                    format!("{collection}/{{name}}/status"),
                    &["get", "put", "patch"],
                ));
            }
        }
        for (path, verbs) in operations {
            let item: serde_json::Map<String, Value> = verbs
                .iter()
                .map(|&verb| {
                    (
                        http_method(verb).to_string(),
                        operation(rt, verb, &reference),
                    )
                })
                .collect();
            paths.insert(path, Value::Object(item));
        }
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

/// The HTTP method of a kube-apiserver action (`x-kubernetes-action`): a list is a GET of the collection.
fn http_method(action: &str) -> &str {
    match action {
        "list" => "get",
        other => other,
    }
}

fn operation(rt: &ResourceType, action: &str, reference: &Value) -> Value {
    let mut parameters = vec![
        json!({"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": true}}),
        json!({"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": true}}),
    ];
    if matches!(action, "post" | "put" | "patch") {
        parameters.push(json!({"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true}}));
    }
    if action == "patch" {
        parameters.push(json!({"name": "force", "in": "query", "schema": {"type": "boolean", "uniqueItems": true}}));
    }
    let mut op = json!({
        "operationId": format!("{action}{}", rt.kind),
        "parameters": parameters,
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": reference}}}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk(rt),
    });
    if matches!(action, "post" | "put" | "patch") {
        op["requestBody"] = json!({"content": {"*/*": {"schema": reference}}, "required": true});
    }
    op
}

fn kind_schema(rt: &ResourceType) -> Value {
    let mut schema = match &rt.schema {
        Some(s) => s.as_ref().clone(),
        None => json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
    };
    if let Some(map) = schema.as_object_mut() {
        map.entry("type").or_insert_with(|| json!("object"));
        let props = map.entry("properties").or_insert_with(|| json!({}));
        if let Some(props) = props.as_object_mut() {
            props.insert("apiVersion".into(), json!({"type": "string"}));
            props.insert("kind".into(), json!({"type": "string"}));
            props.insert(
                "metadata".into(),
                json!({"allOf": [{"$ref": format!("#/components/schemas/{OBJECT_META}")}]}),
            );
        }
        map.insert("x-kubernetes-group-version-kind".into(), json!([gvk(rt)]));
    }
    schema
}
