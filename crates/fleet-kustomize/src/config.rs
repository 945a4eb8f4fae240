//! Extra transformer configuration: `configurations` files (field specs per transformer, name references) and
//! `crds` OpenAPI definition files (fields marked `x-kubernetes-object-ref-kind` become name references).

use serde::Deserialize;
use serde_json::Value;

use crate::fieldspec::{FieldSpec, FieldSpecArgs, NameReference, TransformerConfig, merge_specs};

/// A `configurations` file.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct ConfigFile {
    pub name_prefix: Vec<FieldSpecArgs>,
    pub name_suffix: Vec<FieldSpecArgs>,
    pub namespace: Vec<FieldSpecArgs>,
    pub common_labels: Vec<FieldSpecArgs>,
    pub template_labels: Vec<FieldSpecArgs>,
    pub common_annotations: Vec<FieldSpecArgs>,
    pub images: Vec<FieldSpecArgs>,
    pub replicas: Vec<FieldSpecArgs>,
    pub name_reference: Vec<NameReferenceArgs>,
    pub var_reference: Vec<FieldSpecArgs>,
}

/// A `nameReference` row of a configurations file.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct NameReferenceArgs {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    pub kind: String,
    #[serde(default)]
    pub field_specs: Vec<FieldSpecArgs>,
}

fn specs(args: &[FieldSpecArgs]) -> Vec<FieldSpec> {
    args.iter().map(FieldSpec::from).collect()
}

impl ConfigFile {
    /// Adds this file's specs to `cfg`.
    pub fn merge_into(&self, cfg: &mut TransformerConfig) {
        merge_specs(&mut cfg.name_prefix, &specs(&self.name_prefix));
        merge_specs(&mut cfg.name_prefix, &specs(&self.name_suffix));
        merge_specs(&mut cfg.namespace, &specs(&self.namespace));
        merge_specs(&mut cfg.common_labels, &specs(&self.common_labels));
        merge_specs(&mut cfg.template_labels, &specs(&self.template_labels));
        merge_specs(
            &mut cfg.common_annotations,
            &specs(&self.common_annotations),
        );
        merge_specs(&mut cfg.images, &specs(&self.images));
        merge_specs(&mut cfg.replicas, &specs(&self.replicas));
        merge_specs(&mut cfg.var_reference, &specs(&self.var_reference));
        for nr in &self.name_reference {
            cfg.add_name_reference(NameReference {
                group: nr.group.clone(),
                version: nr.version.clone(),
                kind: nr.kind.clone(),
                field_specs: specs(&nr.field_specs),
            });
        }
    }
}

/// Reads a `crds` file: OpenAPI definitions keyed by Go type name (`example.com/pkg/apis/v1.MyKind`), each
/// `{Schema: {properties…}}` (or a plain schema; a `definitions` wrapper is accepted). Properties marked
/// `x-kubernetes-object-ref-kind` become name references from `MyKind`'s `<path>/name` to the marked kind, as
/// kustomize's CRD loader does.
pub fn merge_crd_schema(doc: &Value, cfg: &mut TransformerConfig) {
    let defs = match doc.get("definitions").and_then(Value::as_object) {
        Some(d) => d,
        None => match doc.as_object() {
            Some(d) => d,
            None => return,
        },
    };
    for (key, def) in defs {
        let schema = schema_of(def);
        let is_kind = schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| p.contains_key("kind") && p.contains_key("metadata"));
        if !is_kind {
            continue;
        }
        let kind = key.rsplit('.').next().unwrap_or(key);
        let mut found = Vec::new();
        walk(schema, defs, &mut Vec::new(), &mut found, 0);
        for (path, ref_kind, ref_version) in found {
            cfg.add_name_reference(NameReference {
                group: String::new(),
                version: ref_version,
                kind: ref_kind,
                field_specs: vec![FieldSpec::new(
                    "",
                    "",
                    kind,
                    &format!("{}/name", path.join("/")),
                    false,
                )],
            });
        }
    }
}

fn schema_of(def: &Value) -> &Value {
    def.get("Schema").unwrap_or(def)
}

fn walk(
    schema: &Value,
    defs: &serde_json::Map<String, Value>,
    path: &mut Vec<String>,
    found: &mut Vec<(Vec<String>, String, String)>,
    depth: usize,
) {
    if depth > 32 {
        return;
    }
    if let Some(kind) = schema
        .get("x-kubernetes-object-ref-kind")
        .and_then(Value::as_str)
    {
        let version = schema
            .get("x-kubernetes-object-ref-api-version")
            .and_then(Value::as_str)
            .unwrap_or("");
        found.push((path.clone(), kind.to_string(), version.to_string()));
        return;
    }
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/definitions/");
        if let Some(def) = defs.get(name) {
            walk(schema_of(def), defs, path, found, depth + 1);
        }
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            path.push(k.clone());
            walk(v, defs, path, found, depth + 1);
            path.pop();
        }
    }
    if let Some(items) = schema.get("items") {
        walk(items, defs, path, found, depth + 1);
    }
}
