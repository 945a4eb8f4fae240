//! The strategic-merge directives a patch may carry, and the handling that does not need list merging:
//! `$patch` in maps, `$retainKeys`, and the clean-up of values inserted without merging.

use crate::patch::error::MergeProblem;
use serde_json::{Map, Value};

/// `$patch: replace | delete | merge`, in a map or as a list item.
pub const PATCH: &str = "$patch";
/// `$retainKeys: [..]`: members of the original map not listed are cleared.
pub const RETAIN_KEYS: &str = "$retainKeys";
/// `$setElementOrder/<list>: [..]`: the order of the named list after patching.
pub const SET_ELEMENT_ORDER: &str = "$setElementOrder";
/// `$deleteFromPrimitiveList/<list>: [..]`: values to remove from a merged primitive list.
pub const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";

/// The list field a prefixed directive key (`$setElementOrder/containers`) refers to, if `key` has that prefix.
pub fn directive_target<'k>(key: &'k str, prefix: &str) -> Option<&'k str> {
    key.strip_prefix(prefix)?.strip_prefix('/')
}

/// What a `$patch` directive found in a map asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapDirective {
    /// `$patch: replace`: the patch map (without the directive) replaces the original map.
    Replace,
    /// `$patch: delete`: the result is an empty map.
    Delete,
}

/// Removes and interprets `$patch` in a patch map: `None` when absent, an error for anything but `replace` or
/// `delete`.
pub fn take_map_directive(
    patch: &mut Map<String, Value>,
) -> Result<Option<MapDirective>, MergeProblem> {
    let Some(directive) = patch.shift_remove(PATCH) else {
        return Ok(None);
    };
    match directive.as_str() {
        Some("replace") => Ok(Some(MapDirective::Replace)),
        Some("delete") => Ok(Some(MapDirective::Delete)),
        Some(other) => Err(MergeProblem::UnknownMapDirective {
            directive: other.to_string(),
        }),
        None => Err(MergeProblem::DirectiveNotString),
    }
}

/// Applies `$retainKeys` (removing it from `patch`): members of `original` that are not listed are removed. Every
/// non-null member the patch sets must be listed.
pub fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<(), MergeProblem> {
    let Some(retained) = patch.shift_remove(RETAIN_KEYS) else {
        return Ok(());
    };
    let Value::Array(retained) = retained else {
        return Err(MergeProblem::RetainKeysNotList);
    };
    let is_retained = |key: &str| retained.iter().any(|name| name.as_str() == Some(key));
    for (key, value) in patch.iter() {
        let exempt = value.is_null()
            || directive_target(key, DELETE_FROM_PRIMITIVE_LIST).is_some()
            || directive_target(key, SET_ELEMENT_ORDER).is_some();
        if !exempt && !is_retained(key) {
            return Err(MergeProblem::NotRetained { key: key.clone() });
        }
    }
    original.retain(|key, _| is_retained(key));
    Ok(())
}

/// Prepares a patch value that is stored without merging (its key is new, or its type differs from the
/// original's): null members are dropped and every map carrying `$patch` is removed, recursively. `None` when the
/// value itself carries `$patch`, in which case the field is left out.
pub fn without_directives(value: Value) -> Option<Value> {
    match value {
        Value::Object(map) => {
            if map.get(PATCH).is_some_and(|d| !d.is_null()) {
                return None;
            }
            let cleaned = map
                .into_iter()
                .filter(|(_, v)| !v.is_null())
                .filter_map(|(k, v)| without_directives(v).map(|v| (k, v)))
                .collect();
            Some(Value::Object(cleaned))
        }
        Value::Array(items) => Some(Value::Array(
            items
                .into_iter()
                .filter_map(without_directives_keeping_nulls)
                .collect(),
        )),
        other => Some(other),
    }
}

/// As [`without_directives`], for list items: a `null` item stays (only map members that are null are dropped).
fn without_directives_keeping_nulls(value: Value) -> Option<Value> {
    if value.is_null() {
        return Some(value);
    }
    without_directives(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn directive_targets_need_the_slash() {
        assert_eq!(
            directive_target("$setElementOrder/containers", SET_ELEMENT_ORDER),
            Some("containers")
        );
        assert_eq!(
            directive_target("$setElementOrder/a/b", SET_ELEMENT_ORDER),
            Some("a/b")
        );
        assert_eq!(
            directive_target("$setElementOrdercontainers", SET_ELEMENT_ORDER),
            None
        );
        assert_eq!(directive_target("containers", SET_ELEMENT_ORDER), None);
    }

    #[test]
    fn retain_keys_clears_unlisted_members() {
        let mut original = map(json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}));
        let mut patch = map(json!({"$retainKeys": ["type"], "type": "Recreate"}));
        apply_retain_keys(&mut original, &mut patch).unwrap();
        assert_eq!(Value::Object(original), json!({"type": "RollingUpdate"}));
        assert_eq!(Value::Object(patch), json!({"type": "Recreate"}));
    }

    #[test]
    fn retain_keys_must_list_what_the_patch_sets() {
        let mut original = Map::new();
        let mut patch = map(json!({"$retainKeys": ["a"], "b": 1, "c": null}));
        let err = apply_retain_keys(&mut original, &mut patch).unwrap_err();
        assert_eq!(err, MergeProblem::NotRetained { key: "b".into() });
        assert_eq!(
            err.to_string(),
            "the patch sets \"b\", which $retainKeys does not list"
        );
        let mut patch = map(json!({"$retainKeys": "a"}));
        assert!(apply_retain_keys(&mut original, &mut patch).is_err());
    }

    #[test]
    fn unknown_map_directive_is_an_error() {
        let err = take_map_directive(&mut map(json!({"$patch": "merge", "a": 1}))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown patch type \"merge\" in a map (expected replace or delete)"
        );
        let mut patch = map(json!({"$patch": "replace", "a": 1}));
        assert_eq!(
            take_map_directive(&mut patch),
            Ok(Some(MapDirective::Replace))
        );
        assert_eq!(Value::Object(patch), json!({"a": 1}));
    }

    #[test]
    fn inserted_values_lose_nulls_and_directive_maps() {
        let value = json!({"a": null, "b": {"c": null, "d": 1}, "l": [{"$patch": "delete", "name": "x"}, {"name": "y", "z": null}, null]});
        assert_eq!(
            without_directives(value),
            Some(json!({"b": {"d": 1}, "l": [{"name": "y"}, null]}))
        );
        assert_eq!(
            without_directives(json!({"$patch": "replace", "a": 1})),
            None
        );
    }
}
