//! JSON merge patch (RFC 7386): applying a patch, and creating the patch that turns one document into another.

use serde_json::{Map, Value};

/// Applies the RFC 7386 merge patch `patch` to `doc`: objects merge member by member, `null` deletes a member,
/// anything else (arrays included) replaces the target. Every JSON value is a valid merge patch, so this cannot fail.
pub fn apply(doc: &mut Value, patch: &Value) {
    let Value::Object(patch_members) = patch else {
        *doc = patch.clone();
        return;
    };
    if !doc.is_object() {
        *doc = Value::Object(Map::new());
    }
    let Value::Object(target) = doc else {
        return;
    };
    for (key, patch_value) in patch_members {
        if patch_value.is_null() {
            target.shift_remove(key);
        } else {
            let slot = target.entry(key.clone()).or_insert(Value::Null);
            apply(slot, patch_value);
        }
    }
}

/// Creates the merge patch that turns `original` into `modified`: `apply(original, diff(original, modified))` equals
/// `modified`, except that merge patches cannot express a `null` member value (it means "delete"). Unchanged members
/// are left out, removed members become `null`; two equal objects give `{}`.
pub fn diff(original: &Value, modified: &Value) -> Value {
    match (original, modified) {
        (Value::Object(original), Value::Object(modified)) => {
            let mut patch = Map::new();
            for key in original.keys() {
                if !modified.contains_key(key) {
                    patch.insert(key.clone(), Value::Null);
                }
            }
            for (key, new_value) in modified {
                match original.get(key) {
                    Some(old_value) if old_value == new_value => {}
                    Some(old_value) if old_value.is_object() && new_value.is_object() => {
                        patch.insert(key.clone(), diff(old_value, new_value));
                    }
                    _ => {
                        patch.insert(key.clone(), new_value.clone());
                    }
                }
            }
            Value::Object(patch)
        }
        _ => modified.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn diff_round_trips() {
        let cases = [
            (
                json!({"a": 1, "b": {"c": 2, "d": [1]}}),
                json!({"b": {"c": 3, "d": [1]}, "e": "x"}),
            ),
            (json!({"a": {"b": {"c": 1}}}), json!({"a": {"b": {}}})),
            (json!([1, 2]), json!({"a": 1})),
            (json!({"a": 1}), json!("scalar")),
            (json!({"a": {"x": 1}}), json!({"a": [1]})),
        ];
        for (original, modified) in cases {
            let patch = diff(&original, &modified);
            let mut doc = original.clone();
            apply(&mut doc, &patch);
            assert_eq!(doc, modified, "patch {patch}");
        }
    }

    #[test]
    fn diff_of_equal_objects_is_empty() {
        let doc = json!({"a": {"b": [1, {"c": null}]}});
        assert_eq!(diff(&doc, &doc), json!({}));
    }

    #[test]
    fn diff_lists_only_changes() {
        let patch = diff(
            &json!({"keep": 1, "gone": 2, "nested": {"keep": 1, "change": 1}}),
            &json!({"keep": 1, "nested": {"keep": 1, "change": 2}, "new": [3]}),
        );
        assert_eq!(
            patch,
            json!({"gone": null, "nested": {"change": 2}, "new": [3]})
        );
    }

    #[test]
    fn apply_keeps_member_order_and_appends_new_members() {
        let mut doc = json!({"z": 1, "a": 2, "m": 3});
        apply(&mut doc, &json!({"a": null, "b": 4, "z": 5}));
        let keys: Vec<_> = doc.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["z", "m", "b"]);
    }
}
