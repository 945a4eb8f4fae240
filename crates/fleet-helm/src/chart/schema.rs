//! `values.schema.json` validation: the JSON Schema keywords charts use (`type`, `required`, `properties`,
//! `additionalProperties: false`, `items`, `enum`, `minimum`/`maximum`, `pattern`), with Helm's error wording.
//!
//! Values are checked where they are, as the JSON `crate::value::to_json` would make of them (keys sorted,
//! `[]byte` as base64), without building that JSON; the schema is read into only the keywords used
//! ([`model`]), by a reader that steps over indentation quickly ([`quick`]).

mod model;
mod quick;

use std::borrow::Cow;
use std::sync::Arc;

use minijinja::value::ValueKind;

use self::model::{Additional, Keywords, Node, Schema};
use super::ChartError;
use crate::value::{
    GoMap, JsonNode, MAX_JSON_NODES, Value, as_map, json_float, json_node, json_visit,
};

/// A value as JSON sees it: `crate::value::json_node`, the reading `to_json` writes out, with numbers as the
/// float64 validation compares.
enum Json<'v> {
    Null,
    Bool,
    Number(f64),
    String(Cow<'v, str>),
    Array,
    Object(Arc<GoMap>),
}

fn json(v: &Value) -> Json<'_> {
    match json_node(v) {
        JsonNode::Null => Json::Null,
        JsonNode::Bool(_) => Json::Bool,
        JsonNode::Integer(n) => Json::Number(n.as_f64().unwrap_or(0.0)),
        JsonNode::Float(f) => Json::Number(f),
        JsonNode::String(s) => Json::String(s),
        JsonNode::Array => Json::Array,
        JsonNode::Object(m) => Json::Object(m),
    }
}

fn type_matches(t: &str, v: &Json) -> bool {
    match t {
        "object" => matches!(v, Json::Object(_)),
        "array" => matches!(v, Json::Array),
        "string" => matches!(v, Json::String(_)),
        "boolean" => matches!(v, Json::Bool),
        "null" => matches!(v, Json::Null),
        "number" => matches!(v, Json::Number(_)),
        "integer" => matches!(v, Json::Number(f) if f.fract() == 0.0),
        _ => true,
    }
}

fn kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool => "boolean",
        Json::Number(f) if f.fract() == 0.0 => "integer",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array => "array",
        Json::Object(_) => "object",
    }
}

/// Whether `to_json` would certainly succeed on `v`: it fails on what `json_visit` and `json_float` refuse, and a
/// map inside itself is a cycle it reports when too deep. `false` means "not certain" (the caller asks `to_json`
/// itself, for its exact error).
fn plainly_json(v: &Value, depth: usize, budget: &mut usize, open: &mut Vec<*const GoMap>) -> bool {
    if json_visit(depth, budget).is_err() {
        return false;
    }
    // By kind, as `json_node` reads them: only numbers (a float that is not finite), lists and maps can fail.
    match v.kind() {
        ValueKind::Number => match json_node(v) {
            JsonNode::Float(f) => json_float(f).is_ok(),
            _ => true,
        },
        ValueKind::Seq => match v.downcast_object_ref::<Vec<Value>>() {
            Some(items) => items
                .iter()
                .all(|item| plainly_json(item, depth + 1, budget, open)),
            None => match v.try_iter() {
                Ok(mut items) => items.all(|item| plainly_json(&item, depth + 1, budget, open)),
                Err(_) => false,
            },
        },
        ValueKind::Map => {
            let Some(m) = as_map(v) else {
                return true;
            };
            let ptr = Arc::as_ptr(&m);
            if open.contains(&ptr) {
                return false;
            }
            open.push(ptr);
            let ok = m
                .lock()
                .values()
                .all(|x| plainly_json(x, depth + 1, budget, open));
            open.pop();
            ok
        }
        _ => true,
    }
}

/// How deep into the values validation follows the schema (nesting of `properties`, `additionalProperties` and
/// `items`); deeper values are not checked. It bounds the walk of a values tree that holds itself, and no real
/// schema nests this deep.
const MAX_SCHEMA_DEPTH: usize = 64;

/// Where a value is, as a JSON pointer (`/a/0/b`), and the errors found so far.
struct Check<'s, 'a> {
    schema: &'s Schema<'a>,
    at: String,
    errors: Vec<String>,
    /// Maps being walked (a map inside itself is not walked again).
    open: Vec<*const GoMap>,
}

impl Check<'_, '_> {
    /// The current pointer as Helm prints it in errors about the node itself (the root is `/`).
    fn here(&self) -> &str {
        if self.at.is_empty() { "/" } else { &self.at }
    }

    fn node(&mut self, schema: Node, v: &Value, depth: usize) {
        if depth > MAX_SCHEMA_DEPTH {
            return;
        }
        let Some(s) = self.schema.keywords(schema) else {
            return;
        };
        self.keywords(s, v, depth);
    }

    fn keywords(&mut self, s: &Keywords, v: &Value, depth: usize) {
        let j = json(v);
        let types = self.schema.types(s);
        if !types.is_empty() && !types.iter().any(|t| type_matches(t, &j)) {
            let types: Vec<&str> = types.iter().map(|t| t.as_ref()).collect();
            let message = format!(
                "at '{}': got {}, want {}",
                self.here(),
                kind(&j),
                types.join(" or ")
            );
            self.errors.push(message);
            return;
        }
        if let Some(options) = self.schema.enumeration(s)
            && !crate::value::to_json(v).is_ok_and(|x| options.contains(&x))
        {
            let message = format!(
                "at '{}': value must be one of the enumerated values",
                self.here()
            );
            self.errors.push(message);
        }
        if let (Some(min), Json::Number(x)) = (s.minimum, &j)
            && *x < min
        {
            let message = format!("at '{}': minimum: got {x}, want {min}", self.at);
            self.errors.push(message);
        }
        if let (Some(max), Json::Number(x)) = (s.maximum, &j)
            && *x > max
        {
            let message = format!("at '{}': maximum: got {x}, want {max}", self.at);
            self.errors.push(message);
        }
        if let (Some(p), Json::String(x)) = (self.schema.pattern(s), &j)
            && regex::Regex::new(p).is_ok_and(|re| !re.is_match(x))
        {
            let message = format!("at '{}': '{x}' does not match pattern '{p}'", self.at);
            self.errors.push(message);
        }
        match j {
            Json::Object(obj) => self.object(s, &obj, depth),
            Json::Array => {
                if let Some(item_schema) = s.items
                    && let Ok(items) = v.try_iter()
                {
                    for (i, x) in items.enumerate() {
                        let len = self.at.len();
                        self.at.push('/');
                        self.at.push_str(&i.to_string());
                        self.node(item_schema, &x, depth + 1);
                        self.at.truncate(len);
                    }
                }
            }
            _ => {}
        }
    }

    fn object(&mut self, s: &Keywords, obj: &Arc<GoMap>, depth: usize) {
        let ptr = Arc::as_ptr(obj);
        if self.open.contains(&ptr) {
            return;
        }
        self.open.push(ptr);
        let entries = obj.lock();
        if let Some(required) = self.schema.required(s) {
            let missing: Vec<String> = required
                .iter()
                .filter(|r| !entries.contains_key(r.as_ref()))
                .map(|m| format!("'{m}'"))
                .collect();
            if !missing.is_empty() {
                let message = format!(
                    "at '{}': missing property {}",
                    self.here(),
                    missing.join(", ")
                );
                self.errors.push(message);
            }
        }
        for (k, x) in entries.iter() {
            let len = self.at.len();
            match self.schema.property(s, k) {
                Some(ps) => {
                    self.at.push('/');
                    self.at.push_str(k);
                    self.node(ps, x, depth + 1);
                }
                None => match s.additional {
                    Additional::Forbidden => {
                        let message = format!(
                            "at '{}': additional properties '{k}' not allowed",
                            self.here()
                        );
                        self.errors.push(message);
                    }
                    Additional::Schema(ap) => {
                        self.at.push('/');
                        self.at.push_str(k);
                        self.node(ap, x, depth + 1);
                    }
                    Additional::Allowed => {}
                },
            }
            self.at.truncate(len);
        }
        drop(entries);
        self.open.pop();
    }
}

/// Validates a chart's values against its schema.
pub fn validate(chart: &str, schema: &str, values: &Value) -> Result<(), ChartError> {
    let schema = model::parse(schema).map_err(|e| {
        ChartError::Schema(format!(
            "{chart}: values.schema.json is not valid JSON: {e}"
        ))
    })?;
    let mut budget = MAX_JSON_NODES;
    if !plainly_json(values, 0, &mut budget, &mut Vec::new()) {
        // Values JSON cannot carry fail as encoding them fails.
        crate::value::to_json(values).map_err(|e| ChartError::Schema(e.to_string()))?;
    }
    let mut check = Check {
        schema: &schema,
        at: String::new(),
        errors: Vec::new(),
        open: Vec::new(),
    };
    check.node(schema.root, values, 0);
    if check.errors.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = check.errors.iter().map(|e| format!("- {e}")).collect();
    Err(ChartError::Schema(format!(
        "values don't meet the specifications of the schema(s) in the following chart(s):\n{chart}:\n{}",
        lines.join("\n")
    )))
}

#[cfg(test)]
mod tests;
