//! CustomResourceDefinitions: validation of the definition, and turning each served version into a resource
//! type that is served as soon as the CRD is stored and removed when it is deleted.

use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::kinds::registry::{ALL_VERBS, PrinterColumn, ResourceType};
use crate::state::Inner;
use crate::storage::object;

const CRD_GROUP: &str = "apiextensions.k8s.io";

fn is_crd_type(rt: &ResourceType) -> bool {
    rt.group == CRD_GROUP && rt.plural == "customresourcedefinitions"
}

fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// Checks what kube-apiserver requires of a CRD before accepting it.
pub fn validate(crd: &Value) -> ApiResult<()> {
    let name = object::name(crd);
    let group = text(crd, "/spec/group");
    let plural = text(crd, "/spec/names/plural");
    let mut causes = Vec::new();
    if group.is_empty() {
        causes.push(("spec.group".to_string(), "Required value".to_string()));
    }
    if plural.is_empty() {
        causes.push(("spec.names.plural".into(), "Required value".into()));
    }
    if text(crd, "/spec/names/kind").is_empty() {
        causes.push(("spec.names.kind".into(), "Required value".into()));
    }
    if !group.is_empty() && !plural.is_empty() && name != format!("{plural}.{group}") {
        causes.push((
            "metadata.name".into(),
            format!("Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"),
        ));
    }
    if !matches!(text(crd, "/spec/scope"), "Namespaced" | "Cluster") {
        causes.push((
            "spec.scope".into(),
            "Unsupported value: must be \"Namespaced\" or \"Cluster\"".into(),
        ));
    }
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if versions
        .iter()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .count()
        != 1
    {
        causes.push((
            "spec.versions".into(),
            "Invalid value: must have exactly one version marked as storage version".into(),
        ));
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            CRD_GROUP,
            "CustomResourceDefinition",
            name,
            &causes,
        ))
    }
}

/// The resource types a CRD serves.
pub fn types_of(crd: &Value) -> Vec<ResourceType> {
    let group = text(crd, "/spec/group").to_string();
    let names = crd.pointer("/spec/names").cloned().unwrap_or(Value::Null);
    let strings = |field: &str| -> Vec<String> {
        names
            .get(field)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let kind = names
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let plural = names
        .get("plural")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let singular = names
        .get("singular")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| kind.to_ascii_lowercase());
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    versions
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool).unwrap_or(true))
        .map(|v| ResourceType {
            group: group.clone(),
            version: v
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            plural: plural.clone(),
            singular: singular.clone(),
            kind: kind.clone(),
            namespaced: text(crd, "/spec/scope") == "Namespaced",
            short_names: strings("shortNames"),
            categories: strings("categories"),
            verbs: ALL_VERBS.to_vec(),
            status_subresource: v.pointer("/subresources/status").is_some(),
            other_subresources: vec![],
            printer_columns: v
                .get("additionalPrinterColumns")
                .and_then(Value::as_array)
                .map(|cols| cols.iter().map(printer_column).collect())
                .unwrap_or_default(),
            schema: v
                .pointer("/schema/openAPIV3Schema")
                .cloned()
                .map(std::sync::Arc::new),
            virtual_only: false,
            crd: Some(object::name(crd).to_string()),
        })
        .collect()
}

fn printer_column(col: &Value) -> PrinterColumn {
    let s = |f: &str| col.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    PrinterColumn {
        name: s("name"),
        type_: s("type"),
        json_path: s("jsonPath"),
        description: s("description"),
        priority: col.get("priority").and_then(Value::as_i64).unwrap_or(0),
        format: s("format"),
    }
}

/// Storage key of the custom resources a CRD defines.
pub fn storage_key_of(crd: &Value) -> String {
    format!(
        "{}/{}",
        text(crd, "/spec/group"),
        text(crd, "/spec/names/plural")
    )
}

/// Keeps the registry in step with a CRD after it was written or deleted.
pub fn after_write(inner: &Inner, rt: &ResourceType, crd: &Value) {
    if !is_crd_type(rt) {
        return;
    }
    let name = object::name(crd);
    let key = crate::storage::store::ObjKey::new(rt.storage_key(), "", name);
    match inner.store.get(&key) {
        Some(current) => inner.registry.replace_crd(name, types_of(&current)),
        None => inner.registry.remove_crd(name),
    }
}

/// Registers every stored CRD (after recovery from the journal).
pub fn register_all(inner: &Inner) {
    let (crds, _) = inner
        .store
        .list(&format!("{CRD_GROUP}/customresourcedefinitions"), None);
    for crd in crds {
        inner
            .registry
            .replace_crd(object::name(&crd), types_of(&crd));
    }
}
