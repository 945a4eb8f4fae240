//! Unknown-key detection for `fleet.yaml`, driven by the JSON schema that schemars derives from [`FleetYaml`]
//! (so the list of known keys cannot drift from the types). Free-form objects (Helm values, patches) accept
//! any key; typed objects accept only their properties.

use std::fmt;
use std::sync::LazyLock;

use fleet_yaml::Location;
use fleet_yaml::parse::Located;
use serde_json::{Map, Value};

use super::FleetYaml;

/// Bundle spec fields that Fleet fills in itself and that its fleet.yaml schema does not allow.
const INTERNAL_TOP_LEVEL: &[&str] = &[
    "resources",
    "targetRestrictions",
    "contentsId",
    "helmOpOptions",
    "valuesHash",
    "overwrites",
    "allowedTargetNamespaceSelector",
];

static SCHEMA: LazyLock<Value> =
    LazyLock::new(|| serde_json::to_value(schemars::schema_for!(FleetYaml)).unwrap_or(Value::Null));

/// One unknown key: where, its dotted path, and the closest known key if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKey {
    pub file: String,
    pub location: Option<Location>,
    pub path: String,
    pub suggestion: Option<String>,
}

impl fmt::Display for UnknownKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(location) = self.location {
            write!(f, ":{location}")?;
        }
        write!(f, ": unknown key `{}`", self.path)?;
        if let Some(suggestion) = &self.suggestion {
            write!(f, ": did you mean `{suggestion}`?")?;
        }
        Ok(())
    }
}

/// All unknown keys in a parsed options file, in document order.
pub fn unknown_keys(located: &Located, file: &str) -> Vec<UnknownKey> {
    let mut walker = Walker {
        root: &SCHEMA,
        located,
        file,
        found: Vec::new(),
    };
    walker.check(&SCHEMA, located.value(), "", "", true);
    walker.found
}

struct Walker<'a> {
    root: &'a Value,
    located: &'a Located,
    file: &'a str,
    found: Vec<UnknownKey>,
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

impl<'a> Walker<'a> {
    /// Follows `$ref`s and gathers the alternatives of `anyOf`/`oneOf`/`allOf` into plain schemas.
    fn alternatives(&self, schema: &'a Value, out: &mut Vec<&'a Value>) {
        let schema = self.deref(schema);
        let mut composite = false;
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(items)) = schema.get(key) {
                composite = true;
                for item in items {
                    self.alternatives(item, out);
                }
            }
        }
        if !composite || schema.get("properties").is_some() {
            out.push(schema);
        }
    }

    fn deref(&self, schema: &'a Value) -> &'a Value {
        let mut current = schema;
        for _ in 0..32 {
            let Some(Value::String(reference)) = current.get("$ref") else {
                break;
            };
            let Some(pointer) = reference.strip_prefix('#') else {
                break;
            };
            match self.root.pointer(pointer) {
                Some(target) => current = target,
                None => break,
            }
        }
        current
    }

    fn check(&mut self, schema: &'a Value, value: &Value, pointer: &str, path: &str, top: bool) {
        let mut alternatives = Vec::new();
        self.alternatives(schema, &mut alternatives);
        match value {
            Value::Object(map) => self.check_object(&alternatives, map, pointer, path, top),
            Value::Array(items) => {
                let item_schema = alternatives.iter().find_map(|s| s.get("items"));
                if let Some(item_schema) = item_schema {
                    for (index, item) in items.iter().enumerate() {
                        self.check(
                            item_schema,
                            item,
                            &format!("{pointer}/{index}"),
                            &format!("{path}[{index}]"),
                            false,
                        );
                    }
                }
            }
            _ => {}
        }
    }

    fn check_object(
        &mut self,
        alternatives: &[&'a Value],
        map: &Map<String, Value>,
        pointer: &str,
        path: &str,
        top: bool,
    ) {
        let mut properties: Vec<(&'a String, &'a Value)> = Vec::new();
        let mut additional: Option<&'a Value> = None;
        let mut typed = false;
        for schema in alternatives {
            if let Some(Value::Object(props)) = schema.get("properties") {
                typed = true;
                properties.extend(props.iter());
            }
            if let Some(extra @ Value::Object(_)) = schema.get("additionalProperties") {
                additional = Some(extra);
            }
        }
        if top {
            properties.retain(|(key, _)| !INTERNAL_TOP_LEVEL.contains(&key.as_str()));
        }
        for (key, child) in map {
            let child_pointer = format!("{pointer}/{}", escape_pointer(key));
            let child_path = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            if let Some((_, schema)) = properties.iter().find(|(name, _)| *name == key) {
                self.check(schema, child, &child_pointer, &child_path, false);
            } else if let Some(schema) = additional {
                self.check(schema, child, &child_pointer, &child_path, false);
            } else if typed {
                let suggestion = closest(key, properties.iter().map(|(name, _)| name.as_str()));
                self.found.push(UnknownKey {
                    file: self.file.to_string(),
                    location: self.located.location(&child_pointer),
                    path: child_path,
                    suggestion,
                });
            }
        }
    }
}

/// The known key most similar to `key`, if it is similar enough to be a likely typo.
fn closest<'k>(key: &str, known: impl Iterator<Item = &'k str>) -> Option<String> {
    let lowered = key.to_lowercase();
    known
        .map(|candidate| {
            (
                strsim::levenshtein(&lowered, &candidate.to_lowercase()),
                candidate,
            )
        })
        .filter(|(distance, candidate)| {
            *distance <= 3.max(candidate.len() / 4) && *distance * 2 <= key.len().max(2)
        })
        .min_by_key(|(distance, candidate)| (*distance, *candidate))
        .map(|(_, candidate)| candidate.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_prefers_small_edits() {
        let known = ["defaultNamespace", "namespace", "name"];
        assert_eq!(
            closest("defaultNamspace", known.into_iter()),
            Some("defaultNamespace".into())
        );
        assert_eq!(closest("nmae", known.into_iter()), Some("name".into()));
        assert_eq!(closest("qqqqqqqq", known.into_iter()), None);
    }

    #[test]
    fn schema_lists_fleet_yaml_keys() {
        let located = fleet_yaml::parse::located("name: x\n", "f").unwrap();
        assert!(unknown_keys(&located, "f").is_empty());
        assert!(SCHEMA.is_object());
    }
}
