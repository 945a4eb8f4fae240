//! Strategic-merge schemas read from OpenAPI v3 / CRD structural schemas (`openAPIV3Schema`), so that custom
//! resources can be patched with merge keys: `x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key` are
//! honoured first; otherwise `x-kubernetes-list-type: map` with a single `x-kubernetes-list-map-keys` entry merges
//! by that key and `x-kubernetes-list-type: set` merges primitives as a set. `$ref`s are not followed (CRD
//! schemas have none).

use serde_json::{Map, Value};

use super::path::MAX_DEPTH;
use super::schema::{Field, MergeSchema, PatchMeta, Strategy};

/// A schema tree built from an OpenAPI v3 schema object.
#[derive(Debug, Clone, Default)]
pub struct OpenApiSchema {
    properties: Vec<(String, OpenApiField)>,
    additional_properties: Option<Box<OpenApiField>>,
}

#[derive(Debug, Clone, Default)]
struct OpenApiField {
    strategy: Strategy,
    merge_key: Option<String>,
    retain_keys: bool,
    value: OpenApiSchema,
}

impl OpenApiSchema {
    /// Builds the tree from a schema object such as a CRD version's `schema.openAPIV3Schema`. Never fails: parts
    /// it does not understand carry no patch metadata.
    pub fn from_json_schema(schema: &Value) -> Self {
        Self::object(schema, 0)
    }

    fn object(schema: &Value, depth: usize) -> Self {
        if depth > MAX_DEPTH {
            return Self::default();
        }
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| {
                properties
                    .iter()
                    .map(|(name, property)| {
                        (
                            name.clone(),
                            OpenApiField::from_property(property, depth + 1),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let additional_properties = schema
            .get("additionalProperties")
            .filter(|value| value.is_object())
            .map(|value| Box::new(OpenApiField::from_property(value, depth + 1)));
        Self {
            properties,
            additional_properties,
        }
    }
}

impl OpenApiField {
    fn from_property(property: &Value, depth: usize) -> Self {
        let empty = Map::new();
        let extensions = property.as_object().unwrap_or(&empty);
        let text = |name: &str| extensions.get(name).and_then(Value::as_str);
        let mut field = OpenApiField::default();
        if let Some(strategies) = text("x-kubernetes-patch-strategy") {
            for strategy in strategies.split(',').map(str::trim) {
                match strategy {
                    "merge" => field.strategy = Strategy::Merge,
                    "replace" => field.strategy = Strategy::Replace,
                    "retainKeys" => field.retain_keys = true,
                    _ => {}
                }
            }
            field.merge_key = text("x-kubernetes-patch-merge-key").map(str::to_owned);
        } else {
            let single_map_key = match extensions.get("x-kubernetes-list-map-keys") {
                Some(Value::Array(keys)) if keys.len() == 1 => keys[0].as_str(),
                _ => None,
            };
            match (text("x-kubernetes-list-type"), single_map_key) {
                (Some("map"), Some(key)) => {
                    field.strategy = Strategy::Merge;
                    field.merge_key = Some(key.to_owned());
                }
                (Some("set"), _) => field.strategy = Strategy::Merge,
                _ => {}
            }
        }
        let value_schema = match property.get("items") {
            Some(items) if property.get("type").and_then(Value::as_str) == Some("array") => items,
            _ => property,
        };
        field.value = OpenApiSchema::object(value_schema, depth);
        field
    }

    fn as_field(&self) -> Field<'_> {
        Field {
            meta: PatchMeta {
                strategy: self.strategy,
                merge_key: self.merge_key.as_deref(),
                retain_keys: self.retain_keys,
            },
            schema: &self.value,
        }
    }
}

impl MergeSchema for OpenApiSchema {
    fn field(&self, name: &str) -> Option<Field<'_>> {
        self.properties
            .iter()
            .find(|(property, _)| property == name)
            .map(|(_, field)| field.as_field())
            .or_else(|| {
                self.additional_properties
                    .as_deref()
                    .map(OpenApiField::as_field)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::strategic::apply;
    use serde_json::json;

    fn widget_schema() -> OpenApiSchema {
        OpenApiSchema::from_json_schema(&json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "ports": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["port"],
                            "items": {"type": "object", "properties": {"port": {"type": "integer"}}}
                        },
                        "members": {
                            "type": "array",
                            "x-kubernetes-patch-strategy": "merge",
                            "x-kubernetes-patch-merge-key": "name",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}
                                }
                            }
                        },
                        "pairs": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["a", "b"],
                            "items": {"type": "object"}
                        },
                        "selector": {"type": "object", "x-kubernetes-patch-strategy": "replace"},
                        "byName": {
                            "type": "object",
                            "additionalProperties": {
                                "type": "array",
                                "x-kubernetes-list-type": "set",
                                "items": {"type": "string"}
                            }
                        }
                    }
                }
            }
        }))
    }

    #[test]
    fn list_map_keys_and_patch_merge_keys_merge_items() {
        let original = json!({"spec": {
            "ports": [{"port": 80, "name": "http"}],
            "members": [{"name": "a", "tags": ["x"]}],
            "pairs": [{"a": 1, "b": 2}],
            "selector": {"app": "x", "tier": "y"},
            "byName": {"k": ["1"]}
        }});
        let patch = json!({"spec": {
            "ports": [{"port": 80, "protocol": "TCP"}],
            "members": [{"name": "a", "tags": ["y"]}],
            "pairs": [{"a": 3, "b": 4}],
            "selector": {"app": "z"},
            "byName": {"k": ["2"]}
        }});
        let out = apply(&original, &patch, &widget_schema()).unwrap();
        assert_eq!(
            out,
            json!({"spec": {
                "ports": [{"port": 80, "name": "http", "protocol": "TCP"}],
                "members": [{"name": "a", "tags": ["y", "x"]}],
                "pairs": [{"a": 3, "b": 4}],
                "selector": {"app": "z"},
                "byName": {"k": ["2", "1"]}
            }})
        );
    }

    #[test]
    fn unknown_fields_have_no_metadata() {
        let schema = widget_schema();
        let spec = schema.field("spec").unwrap().schema;
        assert!(spec.field("nope").is_none());
        assert_eq!(spec.field("pairs").unwrap().meta, PatchMeta::default());
        assert!(
            OpenApiSchema::from_json_schema(&json!("not a schema"))
                .field("x")
                .is_none()
        );
    }
}
