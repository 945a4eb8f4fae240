//! Typed reading of a located document: like sigs.k8s.io/yaml, the document goes through JSON into `T`, so a
//! value behaves as Go's `encoding/json` sees it; a failure is placed at the key or item it concerns.

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
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
        let mut pointer = String::new();
        let mut dotted = Vec::new();
        for segment in e.path().iter() {
            match segment {
                Segment::Seq { index } => {
                    pointer.push('/');
                    pointer.push_str(&index.to_string());
                    dotted.push(format!("[{index}]"));
                }
                Segment::Map { key } | Segment::Enum { variant: key } => {
                    pointer.push('/');
                    push_escaped(&mut pointer, key);
                    dotted.push(format!(".{key}"));
                }
                Segment::Unknown => {}
            }
        }
        let message = e.inner().to_string();
        // Point an unknown field at its own key (when the path stops at its parent).
        if let Some(field) = quoted_field(&message, "unknown field `") {
            let mut own = String::from("/");
            push_escaped(&mut own, field);
            if !pointer.ends_with(&own) {
                pointer.push_str(&own);
            }
        }
        let location = nearest_location(positions, &pointer);
        let path: String = dotted.concat();
        let message = match path.strip_prefix('.') {
            Some(p) => format!("{p}: {message}"),
            None if !path.is_empty() => format!("{path}: {message}"),
            None => message,
        };
        Error::new(origin, location, message)
    })
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
