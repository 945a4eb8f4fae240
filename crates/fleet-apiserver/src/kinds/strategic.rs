//! Strategic merge patch for built-in kinds, through the shared `fleet_yaml::patch::strategic`, with the
//! merge keys and patch strategies of the kind's OpenAPI schema (`x-kubernetes-patch-strategy`,
//! `x-kubernetes-patch-merge-key`, from k8s.io/api's struct tags). Only those tags count, as in
//! kube-apiserver: a list without one is replaced, whatever its `x-kubernetes-list-type`. Custom resources
//! have no strategic-merge metadata: kube-apiserver answers 415 for them, and so do we.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use fleet_yaml::patch::strategic::{MergeSchema, OpenApiSchema, Schemaless};
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::kinds::registry::ResourceType;

pub fn apply(rt: &ResourceType, old: &Value, patch: &Value) -> ApiResult<Value> {
    if rt.crd.is_some() {
        return Err(ApiError::unsupported_media_type(
            "application/strategic-merge-patch+json",
        ));
    }
    let schema = patch_schema(rt);
    let schema: &dyn MergeSchema = match &schema {
        Some(schema) => &**schema,
        None => &Schemaless,
    };
    fleet_yaml::patch::strategic::apply(old, patch, schema).map_err(|e| {
        ApiError::invalid(
            &rt.group,
            &rt.kind,
            crate::storage::object::name(old),
            &[("patch".into(), e.to_string())],
        )
    })
}

/// apiVersion and kind → the kind's patch metadata (`None` for kinds without a schema).
type PatchSchemas = HashMap<(String, String), Option<Arc<OpenApiSchema>>>;

/// The patch metadata of a built-in kind, built once from its schema.
fn patch_schema(rt: &ResourceType) -> Option<Arc<OpenApiSchema>> {
    static CACHE: LazyLock<Mutex<PatchSchemas>> = LazyLock::new(Default::default);
    let key = (rt.api_version(), rt.kind.clone());
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    cache
        .entry(key)
        .or_insert_with(|| {
            let mut schema =
                (*crate::kinds::builtin_schema::inlined(&rt.api_version(), &rt.kind)?).clone();
            without_list_types(&mut schema);
            Some(Arc::new(OpenApiSchema::from_json_schema(&schema)))
        })
        .clone()
}

/// Drops `x-kubernetes-list-type` and `x-kubernetes-list-map-keys`, which the OpenAPI reader would
/// otherwise take for merge keys where no patch tag is.
fn without_list_types(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            map.remove("x-kubernetes-list-type");
            map.remove("x-kubernetes-list-map-keys");
            map.values_mut().for_each(without_list_types);
        }
        Value::Array(items) => items.iter_mut().for_each(without_list_types),
        _ => {}
    }
}
