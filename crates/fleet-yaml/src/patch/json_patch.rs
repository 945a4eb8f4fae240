//! JSON patch (RFC 6902): `add`, `remove`, `replace`, `move`, `copy` and `test`, applied atomically.

use serde_json::Value;

pub use super::error::OperationError;
use super::error::PatchError;
use super::pointer::{ArrayIndex, Pointer, parse_array_index};

/// Applies the RFC 6902 patch `patch` (a JSON array of operations) to `doc`. Atomic: when any operation fails, `doc`
/// is left exactly as it was and the error names the failing operation's index, name and path.
///
/// Two deliberate differences from the RFC, for compatibility with kube-apiserver, kubectl and Fleet (all built on
/// evanphx/json-patch v4): `replace` of a missing member of an existing object adds the member, and `test` for
/// `null` (or without `value`) passes when that member is missing.
pub fn apply(doc: &mut Value, patch: &Value) -> Result<(), PatchError> {
    let Value::Array(operations) = patch else {
        return Err(PatchError::InvalidJsonPatch {
            reason: format!(
                "expected an array of operations, found {}",
                type_name(patch)
            ),
        });
    };
    let mut working = doc.clone();
    for (index, operation) in operations.iter().enumerate() {
        apply_operation(&mut working, operation).map_err(|failure| {
            PatchError::JsonPatchOperation {
                index,
                op: member_str(operation, "op").unwrap_or("?").to_owned(),
                path: member_str(operation, "path").unwrap_or_default().to_owned(),
                reason: failure,
            }
        })?;
    }
    *doc = working;
    Ok(())
}

fn apply_operation(doc: &mut Value, operation: &Value) -> Result<(), OperationError> {
    if !operation.is_object() {
        return Err(OperationError::NotAnObject {
            found: type_name(operation),
        });
    }
    let op = member_str(operation, "op").ok_or(OperationError::MissingString { member: "op" })?;
    let path = pointer_member(operation, "path")?;
    match op {
        "add" => add(doc, &path, required_value(operation)?.clone()),
        "remove" => remove(doc, &path).map(drop),
        "replace" => replace(doc, &path, required_value(operation)?.clone()),
        "move" => {
            let from = pointer_member(operation, "from")?;
            if from.is_proper_prefix_of(&path) {
                return Err(OperationError::MoveIntoChild);
            }
            let value = remove(doc, &from).map_err(|e| OperationError::From(Box::new(e)))?;
            add(doc, &path, value)
        }
        "copy" => {
            let from = pointer_member(operation, "from")?;
            let value = from
                .get(doc)
                .ok_or(OperationError::From(Box::new(OperationError::NoValue)))?
                .clone();
            add(doc, &path, value)
        }
        "test" => test(doc, &path, operation.get("value").unwrap_or(&Value::Null)),
        other => Err(OperationError::UnknownOp {
            op: other.to_owned(),
        }),
    }
}

/// `test` as Kubernetes runs it: besides RFC 6902 equality, testing for `null` (or with no `value`) passes when
/// the member is missing from an existing object, which kube-runtime's finalizer helper relies on.
fn test(doc: &Value, path: &Pointer, expected: &Value) -> Result<(), OperationError> {
    match path.get(doc) {
        Some(actual) if json_equal(actual, expected) => Ok(()),
        Some(_) => Err(OperationError::TestDiffers),
        None if expected.is_null() && parent_is_object(doc, path) => Ok(()),
        None => Err(OperationError::TestNoValue),
    }
}

fn parent_is_object(doc: &Value, path: &Pointer) -> bool {
    path.split_last()
        .and_then(|(parent, _)| parent.get(doc))
        .is_some_and(Value::is_object)
}

fn add(doc: &mut Value, path: &Pointer, value: Value) -> Result<(), OperationError> {
    let Some((parent, last)) = path.split_last() else {
        *doc = value;
        return Ok(());
    };
    match parent.get_mut(doc) {
        Some(Value::Object(map)) => {
            map.insert(last.to_owned(), value);
            Ok(())
        }
        Some(Value::Array(items)) => {
            match parse_array_index(last)? {
                ArrayIndex::End => items.push(value),
                ArrayIndex::At(i) if i <= items.len() => items.insert(i, value),
                ArrayIndex::At(i) => {
                    return Err(OperationError::OutOfBounds {
                        index: i.to_string(),
                        len: items.len(),
                    });
                }
            }
            Ok(())
        }
        Some(other) => Err(OperationError::NotAContainer {
            found: type_name(other),
        }),
        None => Err(OperationError::NoParent),
    }
}

fn remove(doc: &mut Value, path: &Pointer) -> Result<Value, OperationError> {
    let (parent, last) = path.split_last().ok_or(OperationError::RemoveRoot)?;
    match parent.get_mut(doc) {
        Some(Value::Object(map)) => map.shift_remove(last).ok_or(OperationError::NoValue),
        Some(Value::Array(items)) => match parse_array_index(last)? {
            ArrayIndex::At(i) if i < items.len() => Ok(items.remove(i)),
            _ => Err(OperationError::OutOfBounds {
                index: last.to_owned(),
                len: items.len(),
            }),
        },
        _ => Err(OperationError::NoValue),
    }
}

/// `replace` as Kubernetes applies it (evanphx/json-patch v4, used by kube-apiserver and kubectl): the target must
/// exist, except that a missing member of an existing object is added, where RFC 6902 would fail.
fn replace(doc: &mut Value, path: &Pointer, value: Value) -> Result<(), OperationError> {
    if let Some(target) = path.get_mut(doc) {
        *target = value;
        return Ok(());
    }
    match path.split_last() {
        Some((parent, last)) => match parent.get_mut(doc) {
            Some(Value::Object(map)) => {
                map.insert(last.to_owned(), value);
                Ok(())
            }
            _ => Err(OperationError::NoValue),
        },
        None => Err(OperationError::NoValue),
    }
}

/// JSON equality as RFC 6902 `test` defines it: numbers compare by numeric value (`1` equals `1.0`), objects
/// ignore member order, arrays compare element by element.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                x == y
            } else if let (Some(x), Some(y)) = (x.as_u64(), y.as_u64()) {
                x == y
            } else {
                x.as_f64() == y.as_f64()
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

fn member_str<'v>(operation: &'v Value, name: &str) -> Option<&'v str> {
    operation.get(name).and_then(Value::as_str)
}

fn pointer_member(operation: &Value, name: &'static str) -> Result<Pointer, OperationError> {
    let text = member_str(operation, name).ok_or(OperationError::MissingString { member: name })?;
    Pointer::parse(text).map_err(|error| OperationError::BadPointer {
        member: name,
        error,
    })
}

fn required_value(operation: &Value) -> Result<&Value, OperationError> {
    operation.get("value").ok_or(OperationError::MissingValue)
}

/// The JSON type name of a value, for error messages.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn patched(doc: Value, patch: Value) -> Result<Value, PatchError> {
        let mut doc = doc;
        apply(&mut doc, &patch).map(|()| doc)
    }

    #[test]
    fn add_to_root_replaces_document() {
        let out = patched(
            json!({"a": 1}),
            json!([{"op": "add", "path": "", "value": [1]}]),
        );
        assert_eq!(out.unwrap(), json!([1]));
    }

    #[test]
    fn add_out_of_bounds_fails() {
        let err = patched(
            json!({"a": [1]}),
            json!([{"op": "add", "path": "/a/2", "value": 0}]),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "JSON patch operation 0 (add \"/a/2\"): index 2 is out of bounds (array length 1)"
        );
    }

    #[test]
    fn failure_leaves_document_unchanged() {
        let original = json!({"a": 1, "b": [1, 2]});
        let mut doc = original.clone();
        let patch = json!([
            {"op": "remove", "path": "/a"},
            {"op": "add", "path": "/b/-", "value": 3},
            {"op": "test", "path": "/b/0", "value": 9}
        ]);
        let err = apply(&mut doc, &patch).unwrap_err();
        assert_eq!(doc, original);
        assert!(matches!(
            err,
            PatchError::JsonPatchOperation { index: 2, .. }
        ));
    }

    #[test]
    fn test_failure_does_not_reveal_values() {
        let err = patched(
            json!({"password": "hunter2"}),
            json!([{"op": "test", "path": "/password", "value": "guess"}]),
        )
        .unwrap_err()
        .to_string();
        assert!(!err.contains("hunter2") && !err.contains("guess"), "{err}");
    }

    #[test]
    fn test_compares_numbers_numerically_and_objects_unordered() {
        let doc = json!({"n": 1, "o": {"a": 1, "b": 2}});
        let patch = json!([
            {"op": "test", "path": "/n", "value": 1.0},
            {"op": "test", "path": "/o", "value": {"b": 2, "a": 1}}
        ]);
        assert_eq!(patched(doc.clone(), patch).unwrap(), doc);
    }

    #[test]
    fn replace_of_missing_member_adds_it_as_kubernetes_does() {
        let out = patched(
            json!({"spec": {}}),
            json!([{"op": "replace", "path": "/spec/paused", "value": true}]),
        );
        assert_eq!(out.unwrap(), json!({"spec": {"paused": true}}));
    }

    #[test]
    fn test_for_null_passes_on_a_missing_member_of_an_object() {
        let doc = json!({"metadata": {"name": "x"}, "list": []});
        let passes = [
            json!([{"op": "test", "path": "/metadata/finalizers", "value": null}]),
            json!([{"op": "test", "path": "/metadata/finalizers"}]),
            json!([{"op": "test", "path": "/metadata/name", "value": "x"}]),
        ];
        for patch in passes {
            assert_eq!(patched(doc.clone(), patch.clone()).unwrap(), doc, "{patch}");
        }
        let fails = [
            json!([{"op": "test", "path": "/status/conditions", "value": null}]),
            json!([{"op": "test", "path": "/list/0", "value": null}]),
            json!([{"op": "test", "path": "/metadata/name", "value": null}]),
            json!([{"op": "test", "path": "/metadata/name"}]),
        ];
        for patch in fails {
            assert!(patched(doc.clone(), patch.clone()).is_err(), "{patch}");
        }
    }

    #[test]
    fn remove_root_fails() {
        let err = patched(json!({}), json!([{"op": "remove", "path": ""}])).unwrap_err();
        assert!(err.to_string().contains("cannot remove the whole document"));
    }

    #[test]
    fn move_into_own_child_fails() {
        let err = patched(
            json!({"a": {"b": 1}}),
            json!([{"op": "move", "from": "/a", "path": "/a/b/c"}]),
        )
        .unwrap_err();
        assert!(err.to_string().contains("into one of its own children"));
    }

    #[test]
    fn move_to_same_place_is_identity() {
        let doc = json!({"a": {"b": 1}});
        let out = patched(
            doc.clone(),
            json!([{"op": "move", "from": "/a", "path": "/a"}]),
        );
        assert_eq!(out.unwrap(), doc);
    }

    #[test]
    fn copy_duplicates_value() {
        let out = patched(
            json!({"a": {"b": 1}, "l": [0]}),
            json!([{"op": "copy", "from": "/a", "path": "/l/0"}]),
        );
        assert_eq!(out.unwrap(), json!({"a": {"b": 1}, "l": [{"b": 1}, 0]}));
    }

    #[test]
    fn malformed_operations_are_errors() {
        let cases = [
            (
                json!({"op": "add"}),
                "invalid JSON patch: expected an array of operations, found an object",
            ),
            (
                json!([1]),
                "JSON patch operation 0 (? \"\"): an operation must be an object, found a number",
            ),
            (
                json!([{"path": "/a"}]),
                "JSON patch operation 0 (? \"/a\"): missing string member \"op\"",
            ),
            (
                json!([{"op": "add", "path": "/a"}]),
                "JSON patch operation 0 (add \"/a\"): missing member \"value\"",
            ),
            (
                json!([{"op": "frob", "path": "/a"}]),
                "JSON patch operation 0 (frob \"/a\"): unknown operation \"frob\"",
            ),
            (
                json!([{"op": "move", "path": "/a"}]),
                "JSON patch operation 0 (move \"/a\"): missing string member \"from\"",
            ),
            (
                json!([{"op": "add", "path": "a", "value": 1}]),
                "JSON patch operation 0 (add \"a\"): path: a JSON pointer must be empty or start with '/'",
            ),
            (
                json!([{"op": "add", "path": "/s/x", "value": 1}]),
                "JSON patch operation 0 (add \"/s/x\"): cannot add a member to a string",
            ),
            (
                json!([{"op": "replace", "path": "/nope/x", "value": 1}]),
                "JSON patch operation 0 (replace \"/nope/x\"): no value at this location",
            ),
            (
                json!([{"op": "replace", "path": "/l/0", "value": 1}]),
                "JSON patch operation 0 (replace \"/l/0\"): no value at this location",
            ),
            (
                json!([{"op": "add", "path": "/l/01", "value": 1}]),
                "JSON patch operation 0 (add \"/l/01\"): \"01\" is not an array index",
            ),
        ];
        for (patch, message) in cases {
            let err = patched(json!({"s": "x", "l": []}), patch.clone()).unwrap_err();
            assert_eq!(err.to_string(), message, "patch {patch}");
        }
    }
}
