//! Typed reading of a located document: like sigs.k8s.io/yaml, the document goes through JSON into `T`, so a
//! value behaves as Go's `encoding/json` sees it; a failure is placed at the key or item it concerns. Where serde
//! loses the path (fields of a `#[serde(flatten)]` struct), the failing node is found by reading the document
//! pruned down to one branch at a time.

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_path_to_error::Segment;

use super::convert::push_escaped;
use super::node::Positions;
use crate::error::{Error, Location};
use crate::resolve;

/// `value` (read from `origin`, with `positions`) as a `T`.
pub(crate) fn deserialize<T: DeserializeOwned>(
    mut value: Value,
    positions: &Positions,
    origin: &str,
) -> Result<T, Error> {
    go_json_numbers(&mut value);
    serde_path_to_error::deserialize::<_, T>(&value).map_err(|e| {
        let message = e.inner().to_string();
        let mut steps: Vec<Step> = e
            .path()
            .iter()
            .filter_map(|segment| match segment {
                Segment::Seq { index } => Some(Step::Index(*index)),
                Segment::Map { key } | Segment::Enum { variant: key } => {
                    Some(Step::Key(key.clone()))
                }
                Segment::Unknown => None,
            })
            .collect();
        deepen_to_failing_node::<T>(&value, &mut steps);
        let mut pointer = pointer_of(&steps);
        let dotted = steps.iter().map(|step| match step {
            Step::Index(index) => format!("[{index}]"),
            Step::Key(key) => format!(".{key}"),
        });
        // Point an unknown field at its own key (when the path stops at its parent).
        if let Some(field) = quoted_field(&message, "unknown field `") {
            let mut own = String::from("/");
            push_escaped(&mut own, field);
            if !pointer.ends_with(&own) {
                pointer.push_str(&own);
            }
        }
        let location = nearest_location(positions, &pointer);
        let path: String = dotted.collect();
        let message = match path.strip_prefix('.') {
            Some(p) => format!("{p}: {message}"),
            None if !path.is_empty() => format!("{path}: {message}"),
            None => message,
        };
        Error::new(origin, location, message)
    })
}

/// One step from a document's root towards a node.
enum Step {
    Key(String),
    Index(usize),
}

/// The RFC 6901 pointer of the node `steps` lead to.
fn pointer_of(steps: &[Step]) -> String {
    let mut pointer = String::new();
    for step in steps {
        pointer.push('/');
        match step {
            Step::Key(key) => push_escaped(&mut pointer, key),
            Step::Index(index) => pointer.push_str(&index.to_string()),
        }
    }
    pointer
}

/// Extends `steps` (where serde placed the failure of `document`; it stops at a `#[serde(flatten)]` struct) down to
/// the node that makes the document fail: the child whose removal lets the document read is followed, until no
/// single child's removal does (the node itself is at fault, or more than one child is).
fn deepen_to_failing_node<T: DeserializeOwned>(document: &Value, steps: &mut Vec<Step>) {
    loop {
        let pointer = pointer_of(steps);
        let children: Vec<Step> = match document.pointer(&pointer) {
            Some(Value::Object(map)) => map.keys().cloned().map(Step::Key).collect(),
            Some(Value::Array(items)) => (0..items.len()).map(Step::Index).collect(),
            _ => return,
        };
        let reads_without = |step: &Step| {
            let mut candidate = document.clone();
            match (candidate.pointer_mut(&pointer), step) {
                (Some(Value::Object(map)), Step::Key(key)) => {
                    map.shift_remove(key);
                }
                (Some(Value::Array(items)), Step::Index(index)) => {
                    items.remove(*index);
                }
                _ => {}
            }
            serde_json::from_value::<T>(candidate).is_ok()
        };
        match children.into_iter().find(reads_without) {
            Some(step) => steps.push(step),
            None => return,
        }
    }
}

/// Numbers as Go reads its own JSON: integral floats become integers.
pub(crate) fn go_json_numbers(value: &mut Value) {
    match value {
        Value::Number(n) => *n = resolve::go_json_number(n),
        Value::Array(items) => items.iter_mut().for_each(go_json_numbers),
        Value::Object(map) => map.values_mut().for_each(go_json_numbers),
        _ => {}
    }
}

/// The text between `prefix` and the next backquote in `message`.
fn quoted_field<'a>(message: &'a str, prefix: &str) -> Option<&'a str> {
    let start = message.find(prefix)? + prefix.len();
    let end = message[start..].find('`')?;
    Some(&message[start..start + end])
}

/// The position at `pointer`, or at its closest ancestor that has one.
fn nearest_location(positions: &Positions, pointer: &str) -> Option<Location> {
    let mut p = pointer;
    loop {
        if let Some(l) = positions.get(p) {
            return Some(*l);
        }
        let cut = p.rfind('/')?;
        p = &p[..cut];
    }
}
