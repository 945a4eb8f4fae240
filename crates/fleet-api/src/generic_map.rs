//! `GenericMap`: Fleet's free-form object (Helm values, cluster template values, patches).
//!
//! Fleet's Go type is `map[string]interface{}` marshalled with `encoding/json`, which sorts
//! object keys at every nesting level and prints whole floating-point numbers without a
//! fraction (`1.0` becomes `1`). Both matter because Fleet hashes the JSON of deployment
//! options into the deploymentID. Our workspace builds `serde_json` with `preserve_order`, so
//! the map keeps insertion order in memory and this type sorts when it serializes.

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Number, Value};

/// A free-form JSON object, serialized the way Go's `json.Marshal` prints a
/// `map[string]interface{}`: keys sorted recursively, whole floats printed as integers.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(transparent)]
pub struct GenericMap(pub Map<String, Value>);

impl GenericMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The map as a `serde_json::Value::Object` (insertion order kept).
    pub fn to_value(&self) -> Value {
        Value::Object(self.0.clone())
    }
}

impl std::ops::Deref for GenericMap {
    type Target = Map<String, Value>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for GenericMap {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl From<Map<String, Value>> for GenericMap {
    fn from(map: Map<String, Value>) -> Self {
        Self(map)
    }
}

impl FromIterator<(String, Value)> for GenericMap {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl Serialize for GenericMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        GoObject(&self.0).serialize(serializer)
    }
}

impl JsonSchema for GenericMap {
    fn schema_name() -> Cow<'static, str> {
        "GenericMap".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true,
        })
    }
}

/// Serializes a JSON object with sorted keys, recursively.
struct GoObject<'a>(&'a Map<String, Value>);

/// Serializes any JSON value with Go's key order and number printing, recursively.
struct GoValue<'a>(&'a Value);

impl Serialize for GoObject<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let sorted: BTreeMap<&str, GoValue<'_>> = self
            .0
            .iter()
            .map(|(key, value)| (key.as_str(), GoValue(value)))
            .collect();
        serializer.collect_map(sorted)
    }
}

impl Serialize for GoValue<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(map) => GoObject(map).serialize(serializer),
            Value::Array(items) => serializer.collect_seq(items.iter().map(GoValue)),
            Value::Number(number) => go_number(number).serialize(serializer),
            other => other.serialize(serializer),
        }
    }
}

/// Go decodes every JSON number of a free-form map into a `float64` and prints whole values
/// below 1e21 as plain integers (`1.0` as `1`). Whole floats that fit an `i64` or `u64` are
/// turned into integers here; every other number keeps serde_json's shortest representation,
/// which equals Go's except for fractions between 1e-6 and 1e-5 (Go `0.0000015`, serde_json
/// `1.5e-6`) and whole numbers from 2^64 up to 1e21 (Go prints their digits).
fn go_number(number: &Number) -> Number {
    match number.as_f64() {
        Some(float) if number.is_f64() && float.fract() == 0.0 => {
            // In range, the casts are exact: the value is whole.
            if float >= i64::MIN as f64 && float < i64::MAX as f64 {
                Number::from(float as i64)
            } else if float >= 0.0 && float < u64::MAX as f64 {
                Number::from(float as u64)
            } else {
                number.clone()
            }
        }
        _ => number.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn generic(value: Value) -> GenericMap {
        match value {
            Value::Object(map) => GenericMap(map),
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn keys_are_sorted_at_every_level() {
        let map = generic(json!({"b": 1, "a": {"z": [{"y": 1, "x": 2}], "c": true}}));
        assert_eq!(
            serde_json::to_string(&map).unwrap(),
            r#"{"a":{"c":true,"z":[{"x":2,"y":1}]},"b":1}"#
        );
    }

    #[test]
    fn whole_floats_print_like_go() {
        let map = generic(
            json!({"a": 1.0, "b": 2.5, "c": -3.0, "d": 1e300, "f": 1e21, "g": 1e-7, "h": 1e17}),
        );
        assert_eq!(
            serde_json::to_string(&map).unwrap(),
            r#"{"a":1,"b":2.5,"c":-3,"d":1e+300,"f":1e+21,"g":1e-7,"h":100000000000000000}"#
        );
    }

    #[test]
    fn deserialization_keeps_insertion_order() {
        let map: GenericMap = serde_json::from_str(r#"{"b":1,"a":2}"#).unwrap();
        let keys: Vec<&String> = map.keys().collect();
        assert_eq!(keys, ["b", "a"]);
    }
}
