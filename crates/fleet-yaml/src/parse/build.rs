//! Building a document straight into the caller's own tree (a template engine's values, say) instead of a
//! `serde_json::Value` that the caller then converts: [`Build`] says how each node is made, [`JsonTree`] makes the
//! `serde_json::Value` that [`super::first_value`] returns.

use serde_json::{Map, Value};

/// How the nodes of a document are made. Scalars come as JSON scalars with Go's JSON numbers (integral floats as
/// integers, exactly as [`super::first_value`] gives them); a mapping's entries come in document order.
pub trait Build {
    /// A node of the tree.
    type Node;
    /// A mapping being filled.
    type Map;
    /// A scalar: `Null`, `Bool`, `Number` or `String`.
    fn scalar(&mut self, value: Value) -> Self::Node;
    /// A string scalar (the same as `scalar` with `Value::String`, which is what it does unless a builder can take
    /// the text without an owned copy).
    fn string(&mut self, text: &str) -> Self::Node {
        self.scalar(Value::String(text.to_owned()))
    }
    /// A sequence of finished nodes.
    fn sequence(&mut self, items: Vec<Self::Node>) -> Self::Node;
    /// An empty mapping.
    fn new_map(&mut self) -> Self::Map;
    /// Adds an entry and says whether the key was new (a repeated key makes the reader hand the text to the full
    /// parser, so what the map holds then does not matter: a builder may keep either value, e.g. by answering
    /// whether its map's `insert` replaced one).
    fn insert(&mut self, map: &mut Self::Map, key: String, value: Self::Node) -> bool;
    /// A finished mapping.
    fn mapping(&mut self, map: Self::Map) -> Self::Node;

    /// A whole JSON tree whose numbers are already Go's, node by node.
    fn json(&mut self, value: Value) -> Self::Node {
        match value {
            Value::Array(items) => {
                let items = items.into_iter().map(|item| self.json(item)).collect();
                self.sequence(items)
            }
            Value::Object(entries) => {
                let mut map = self.new_map();
                for (key, item) in entries {
                    let item = self.json(item);
                    self.insert(&mut map, key, item);
                }
                self.mapping(map)
            }
            scalar => self.scalar(scalar),
        }
    }
}

/// Builds `serde_json::Value` (mappings keep document order).
pub struct JsonTree;

impl Build for JsonTree {
    type Node = Value;
    type Map = Map<String, Value>;

    fn scalar(&mut self, value: Value) -> Value {
        value
    }

    fn sequence(&mut self, items: Vec<Value>) -> Value {
        Value::Array(items)
    }

    fn new_map(&mut self) -> Map<String, Value> {
        Map::new()
    }

    fn insert(&mut self, map: &mut Map<String, Value>, key: String, value: Value) -> bool {
        map.insert(key, value).is_none()
    }

    fn mapping(&mut self, map: Map<String, Value>) -> Value {
        Value::Object(map)
    }

    fn json(&mut self, value: Value) -> Value {
        value
    }
}
