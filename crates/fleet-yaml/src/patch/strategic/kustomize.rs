//! Strategic merge as kustomize applies it (kyaml `merge2`, which `kubectl kustomize` runs for `patches` and
//! `patchesStrategicMerge`), which differs from kube-apiserver's algorithm in [`super::apply`]:
//!
//! - merged lists put the patch's items first, in patch order, then the items only the original has;
//! - `$patch: delete` on a map removes the field; `$patch: merge` is accepted; a list item that is exactly
//!   `{$patch: replace | delete | merge}` is a directive for the whole list;
//! - `$retainKeys`, `$setElementOrder/…` and `$deleteFromPrimitiveList/…` are not understood: they stay in the
//!   result as ordinary fields, as kustomize leaves them;
//! - a `replace` field strategy is not honoured (maps always merge);
//! - kinds and merge-keyed fields newer than kustomize's embedded schema (Kubernetes 1.21-era: autoscaling/v2,
//!   `schedulingGates`, webhook `matchConditions`, …) are patched without merge keys;
//! - a value whose type differs from the original's is an error ("wrong node kind");
//! - members a patch adds to an existing map are appended in sorted order, new subtrees keep the patch's order
//!   (kustomize prints every map sorted in the end, so only in-process consumers see this order);
//! - a patch item lacking the merge key removes every original item that has the key (kyaml does this);
//! - nulls and directives inside lists that are replaced (not merged) are kept as written.
//!
//! Lists kustomize's schema keys by two fields (container and service `ports` by port and `protocol`,
//! `topologySpreadConstraints` by `topologyKey` and `whenUnsatisfiable`) follow what `kubectl kustomize` v5.7 was
//! observed to do (goldens `kz-ports-*`): when every item has both fields, matching items merge in place and new
//! ones go first; otherwise a patch item whose first field matches an item with a different second field is
//! dropped, and the rest merge as for one key.

use crate::patch::error::MergeProblem;
use serde_json::{Map, Value};

use super::directives::PATCH;
use super::path::Path;
use super::schema::{Field, MergeSchema, Strategy, field_of};
use crate::patch::error::PatchError;

/// Applies `patch` to `original` as kustomize does and returns the result, or `None` when the patch deletes the
/// whole object (`$patch: delete` at the top). Both must be JSON objects.
pub fn apply(
    original: &Value,
    patch: &Value,
    schema: &dyn MergeSchema,
) -> Result<Option<Value>, PatchError> {
    let root = Path::root();
    if !original.is_object() {
        return Err(root.error(MergeProblem::DocumentNotObject));
    }
    if !patch.is_object() {
        return Err(root.error(MergeProblem::PatchNotObject));
    }
    merge_value(
        Some(original.clone()),
        Some(patch.clone()),
        schema,
        Strategy::Default,
        None,
        &root,
    )
}

/// [`apply`] with the schema of the object's kind ([`super::builtin::schema_for_object`]): the built-in table for
/// built-in kinds, none for custom resources (whose lists kustomize then replaces).
pub fn apply_to_object(original: &Value, patch: &Value) -> Result<Option<Value>, PatchError> {
    let text = |name: &str| {
        original
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    if KINDS_NEWER_THAN_KUSTOMIZE_SCHEMA.contains(&(text("apiVersion"), text("kind"))) {
        return apply(original, patch, &super::schema::Schemaless);
    }
    apply(original, patch, super::builtin::schema_for_object(original))
}

/// Built-in kinds (by `apiVersion` and `kind`) that kustomize's embedded OpenAPI schema (Kubernetes 1.21-era)
/// lacks, so that kustomize patches them without merge keys.
const KINDS_NEWER_THAN_KUSTOMIZE_SCHEMA: &[(&str, &str)] = &[
    ("autoscaling/v2", "HorizontalPodAutoscaler"),
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingAdmissionPolicy",
    ),
];

/// Merge-keyed fields added to built-in kinds after kustomize's embedded schema: kustomize replaces them whole.
const FIELDS_NEWER_THAN_KUSTOMIZE_SCHEMA: &[&str] = &[
    "schedulingGates",
    "resourceClaims",
    "resourceClaimStatuses",
    "hostIPs",
    "matchConditions",
    "allocatedResourcesStatus",
];

/// The field as kustomize's schema knows it.
fn kustomize_field<'s>(schema: &'s dyn MergeSchema, name: &str) -> Field<'s> {
    if FIELDS_NEWER_THAN_KUSTOMIZE_SCHEMA.contains(&name) {
        return field_of(&super::schema::Schemaless, name);
    }
    field_of(schema, name)
}

/// Merges one node: `dest` from the original, `patch` from the patch; `None` means absent (or cleared).
fn merge_value(
    dest: Option<Value>,
    patch: Option<Value>,
    schema: &dyn MergeSchema,
    strategy: Strategy,
    merge_key: Option<&str>,
    path: &Path<'_>,
) -> Result<Option<Value>, PatchError> {
    path.check_depth()?;
    let dest = dest.filter(|value| !value.is_null());
    // Absent keeps the original, null clears it.
    let Some(patch) = patch else {
        return Ok(dest);
    };
    if patch.is_null() {
        return Ok(None);
    }
    let kind_of = |value: &Value| match value {
        Value::Object(_) => "MappingNode",
        Value::Array(_) => "SequenceNode",
        _ => "ScalarNode",
    };
    if let Some(dest_value) = &dest
        && kind_of(dest_value) != kind_of(&patch)
    {
        return Err(path.error(MergeProblem::WrongNodeKind {
            expected: kind_of(dest_value),
            got: kind_of(&patch),
        }));
    }
    match patch {
        Value::Object(patch) => {
            let dest = match dest {
                Some(Value::Object(dest)) => Some(dest),
                _ => None,
            };
            merge_map(dest, patch, schema, path)
        }
        Value::Array(patch) if strategy == Strategy::Merge => {
            let dest = match dest {
                Some(Value::Array(dest)) => Some(dest),
                _ => None,
            };
            merge_list(dest, patch, schema, merge_key, path)
        }
        // Scalars, and lists merged as a whole: the patch wins.
        other => Ok(Some(other)),
    }
}

fn merge_map(
    dest: Option<Map<String, Value>>,
    mut patch: Map<String, Value>,
    schema: &dyn MergeSchema,
    path: &Path<'_>,
) -> Result<Option<Value>, PatchError> {
    let directive = match patch.get(PATCH) {
        None => Directive::Merge,
        Some(value) => match parse_directive(value) {
            Some(directive) => directive,
            // kyaml ignores an unknown directive on a map it adds, and rejects it on a map it merges.
            None if dest.is_none() => Directive::Unknown,
            None => return Err(unknown_directive(value, path)),
        },
    };
    if directive != Directive::Unknown {
        patch.shift_remove(PATCH);
    }
    let dest = match (dest, directive) {
        (_, Directive::Delete) => return Ok(None),
        (Some(dest), Directive::Merge) => dest,
        // Added maps and `$patch: replace` take the patch, then normalize it against itself.
        _ => patch.clone(),
    };
    let mut result = dest;
    let mut names: Vec<String> = result.keys().chain(patch.keys()).cloned().collect();
    names.sort();
    names.dedup();
    for name in names {
        let Some(patch_value) = patch.remove(&name) else {
            continue;
        };
        let field = kustomize_field(schema, &name);
        let field_path = path.field(&name);
        let merged = merge_field(
            result.get_mut(&name).map(std::mem::take),
            patch_value,
            field,
            &field_path,
        )?;
        match merged {
            Some(value) if !value.is_null() => {
                result.insert(name, value);
            }
            _ => {
                result.shift_remove(&name);
            }
        }
    }
    Ok(Some(Value::Object(result)))
}

fn merge_field(
    dest: Option<Value>,
    patch: Value,
    field: Field<'_>,
    path: &Path<'_>,
) -> Result<Option<Value>, PatchError> {
    merge_value(
        dest,
        Some(patch),
        field.schema,
        field.meta.strategy,
        field.meta.merge_key,
        path,
    )
}

/// What a `$patch` directive asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Directive {
    Merge,
    Replace,
    Delete,
    /// An unrecognised directive on a map being added, which kyaml leaves in place.
    Unknown,
}

fn parse_directive(value: &Value) -> Option<Directive> {
    match value.as_str()? {
        "delete" => Some(Directive::Delete),
        "replace" => Some(Directive::Replace),
        "merge" => Some(Directive::Merge),
        _ => None,
    }
}

fn unknown_directive(value: &Value, path: &Path<'_>) -> PatchError {
    path.error(MergeProblem::UnknownStrategy {
        strategy: value.as_str().unwrap_or_default().to_string(),
    })
}

fn merge_list(
    dest: Option<Vec<Value>>,
    mut patch: Vec<Value>,
    schema: &dyn MergeSchema,
    merge_key: Option<&str>,
    path: &Path<'_>,
) -> Result<Option<Value>, PatchError> {
    let dest = match (dest, take_list_directive(&mut patch, path)?) {
        (_, Directive::Delete) => return Ok(None),
        (Some(dest), Directive::Merge) => dest,
        _ => patch.clone(),
    };
    let merged = match merge_key {
        Some(key) => merge_keyed_items(dest, &patch, key, schema, path)?,
        None => merge_primitives(dest, &patch),
    };
    Ok(Some(Value::Array(merged)))
}

/// A list item that is exactly `{$patch: …}` directs the whole list; it is removed from the patch.
fn take_list_directive(patch: &mut Vec<Value>, path: &Path<'_>) -> Result<Directive, PatchError> {
    let position = patch.iter().position(|item| {
        item.as_object()
            .is_some_and(|map| map.len() == 1 && map.contains_key(PATCH))
    });
    let Some(position) = position else {
        return Ok(Directive::Merge);
    };
    let value = &patch[position][PATCH];
    let directive = parse_directive(value).ok_or_else(|| unknown_directive(value, path))?;
    patch.remove(position);
    Ok(directive)
}

/// The text of a scalar as kyaml compares it; missing and null are empty.
fn scalar_text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

fn is_empty_item(item: &Value) -> bool {
    item.is_null() || item.as_object().is_some_and(Map::is_empty)
}

/// Whether `item` is the one a kyaml element setter for `key` = `id` matches: with an empty `id`, any item that
/// has the key at all.
fn matches(item: &Value, key: &str, id: &str) -> bool {
    match item.get(key) {
        None => false,
        Some(_) if id.is_empty() => true,
        Some(value) => scalar_text(Some(value)) == id,
    }
}

/// Replaces every item of `list` matching `key` = `id` with `element`, or appends it; drops empty items.
fn set_element(list: &mut Vec<Value>, element: Value, key: &str, id: &str) {
    list.retain(|item| !is_empty_item(item));
    let mut found = false;
    for item in list.iter_mut() {
        if item.is_object() && matches(item, key, id) {
            *item = element.clone();
            found = true;
        }
    }
    if !found {
        list.push(element);
    }
}

/// The second field kustomize's schema keys a list by, for lists keyed by two fields.
fn second_key(key: &str) -> Option<&'static str> {
    match key {
        "containerPort" | "port" => Some("protocol"),
        "topologyKey" => Some("whenUnsatisfiable"),
        _ => None,
    }
}

fn merge_keyed_items(
    dest: Vec<Value>,
    patch: &[Value],
    key: &str,
    item_schema: &dyn MergeSchema,
    path: &Path<'_>,
) -> Result<Vec<Value>, PatchError> {
    let Some(second) = second_key(key) else {
        return merge_by_one_key(dest, patch, key, item_schema, path);
    };
    let tuple = |item: &Value| (scalar_text(item.get(key)), scalar_text(item.get(second)));
    let complete = |item: &Value| {
        let (first, second) = tuple(item);
        !first.is_empty() && !second.is_empty()
    };
    if dest.iter().chain(patch).all(complete) {
        return merge_by_two_keys(dest, patch, &tuple, item_schema, key, path);
    }
    let kept: Vec<Value> = patch
        .iter()
        .filter(|item| {
            let (first, _) = tuple(item);
            let same_tuple = dest.iter().any(|d| tuple(d) == tuple(item));
            let same_first = dest.iter().any(|d| tuple(d).0 == first);
            same_tuple || !same_first
        })
        .cloned()
        .collect();
    merge_by_one_key(dest, &kept, key, item_schema, path)
}

/// Merges one list item; `None` when it is deleted or ends up empty, which removes it from the list.
fn merge_item(
    dest: Option<Value>,
    patch: Option<Value>,
    item_schema: &dyn MergeSchema,
    path: &Path<'_>,
) -> Result<Option<Value>, PatchError> {
    let merged = merge_value(dest, patch, item_schema, Strategy::Default, None, path)?;
    Ok(merged.filter(|item| !is_empty_item(item)))
}

/// Items with both key fields everywhere: matches merge where they are, new items go first in patch order.
fn merge_by_two_keys(
    mut dest: Vec<Value>,
    patch: &[Value],
    tuple: &dyn Fn(&Value) -> (String, String),
    item_schema: &dyn MergeSchema,
    key: &str,
    path: &Path<'_>,
) -> Result<Vec<Value>, PatchError> {
    let mut new_items = Vec::new();
    for item in patch {
        let id = tuple(item);
        let id_value = Value::String(format!("{}/{}", id.0, id.1));
        let item_path = path.item(key, &id_value);
        match dest.iter().position(|d| tuple(d) == id) {
            Some(index) => {
                match merge_item(
                    Some(dest[index].clone()),
                    Some(item.clone()),
                    item_schema,
                    &item_path,
                )? {
                    Some(merged) => dest[index] = merged,
                    None => {
                        dest.remove(index);
                    }
                }
            }
            None => {
                new_items.extend(merge_item(
                    None,
                    Some(item.clone()),
                    item_schema,
                    &item_path,
                )?);
            }
        }
    }
    new_items.extend(dest);
    Ok(new_items)
}

fn merge_by_one_key(
    mut dest: Vec<Value>,
    patch: &[Value],
    key: &str,
    item_schema: &dyn MergeSchema,
    path: &Path<'_>,
) -> Result<Vec<Value>, PatchError> {
    let mut ids: Vec<String> = Vec::new();
    for item in patch.iter().chain(dest.iter()) {
        let id = scalar_text(item.get(key));
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let find = |list: &[Value], id: &str| {
        list.iter().position(|item| {
            item.get(key)
                .is_some_and(|value| scalar_text(Some(value)) == id)
        })
    };
    let mut added: Vec<Value> = Vec::new();
    for id in &ids {
        let dest_index = find(&dest, id);
        let patch_item = find(patch, id).map(|i| patch[i].clone());
        let id_value = Value::String(id.clone());
        let item_path = path.item(key, &id_value);
        // Taken, not cloned: a merged item is in `added` from now on, and the empty slot left behind is skipped.
        let dest_item = dest_index.map(|i| std::mem::take(&mut dest[i]));
        match merge_item(dest_item, patch_item, item_schema, &item_path)? {
            Some(mut item) => {
                if let Value::Object(map) = &mut item
                    && !map.contains_key(key)
                {
                    map.insert(key.to_owned(), id_value.clone());
                }
                set_element(&mut added, item, key, id);
            }
            None => {
                let removed = |item: &Value| {
                    is_empty_item(item) || (item.is_object() && matches(item, key, id))
                };
                dest.retain(|item| !removed(item));
            }
        }
    }
    // kyaml then sets the original items into the result again: items without the key are appended, the others are
    // already there with their merged content.
    for item in dest {
        if is_empty_item(&item) {
            continue;
        }
        match item.get(key).map(|value| scalar_text(Some(value))) {
            None => added.push(item),
            Some(id) if !added.iter().any(|merged| matches(merged, key, &id)) => added.push(item),
            Some(_) => {}
        }
    }
    Ok(added)
}

fn merge_primitives(dest: Vec<Value>, patch: &[Value]) -> Vec<Value> {
    let mut merged: Vec<Value> = Vec::new();
    for item in patch.iter().chain(dest.iter()) {
        if item.is_null() {
            continue;
        }
        let text = scalar_text(Some(item));
        if !merged.iter().any(|seen| scalar_text(Some(seen)) == text) {
            let from_patch = patch
                .iter()
                .find(|candidate| scalar_text(Some(candidate)) == text);
            merged.push(from_patch.unwrap_or(item).clone());
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::strategic::{Schemaless, builtin_schema_for};
    use serde_json::json;

    fn deployment_schema() -> &'static dyn MergeSchema {
        builtin_schema_for("apps/v1", "Deployment").unwrap()
    }

    fn containers(list: Value) -> Value {
        json!({"spec": {"template": {"spec": {"containers": list}}}})
    }

    #[test]
    fn patch_items_come_first_then_original_only_items() {
        let original = containers(json!([{"name": "a", "image": "1"}, {"name": "b"}]));
        let patch = containers(json!([{"name": "b", "image": "2"}, {"name": "c"}]));
        let out = apply(&original, &patch, deployment_schema())
            .unwrap()
            .unwrap();
        assert_eq!(
            out,
            containers(
                json!([{"name": "b", "image": "2"}, {"name": "c"}, {"name": "a", "image": "1"}])
            )
        );
    }

    #[test]
    fn map_directives_follow_kustomize() {
        let original = json!({"spec": {"m": {"a": 1}, "n": {"b": 1}}});
        let out = apply(
            &original,
            &json!({"spec": {"m": {"$patch": "delete"}, "n": {"$patch": "merge", "c": 2}}}),
            &Schemaless,
        );
        assert_eq!(
            out.unwrap().unwrap(),
            json!({"spec": {"n": {"b": 1, "c": 2}}})
        );
        assert_eq!(
            apply(&original, &json!({"$patch": "delete"}), &Schemaless).unwrap(),
            None
        );
        let err = apply(
            &original,
            &json!({"spec": {"m": {"$patch": "frob"}}}),
            &Schemaless,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "strategic merge patch at spec.m: unknown patch strategy 'frob'"
        );
    }

    #[test]
    fn new_members_are_appended_sorted_and_type_changes_fail() {
        let out = apply(
            &json!({"z": 1, "m": {"k": 1}}),
            &json!({"m": {"y": 1, "b": 2}, "a": 0}),
            &Schemaless,
        )
        .unwrap();
        assert_eq!(
            serde_json::to_string(&out.unwrap()).unwrap(),
            r#"{"z":1,"m":{"k":1,"b":2,"y":1},"a":0}"#
        );
        let err = apply(&json!({"m": {"k": 1}}), &json!({"m": [1]}), &Schemaless).unwrap_err();
        assert_eq!(
            err.to_string(),
            "strategic merge patch at m: wrong node kind: expected MappingNode but got SequenceNode"
        );
    }

    #[test]
    fn primitive_merge_lists_put_patch_values_first() {
        let schema = builtin_schema_for("v1", "ConfigMap").unwrap();
        let out = apply(
            &json!({"metadata": {"finalizers": ["a", "b"]}}),
            &json!({"metadata": {"finalizers": ["b", "c"]}}),
            schema,
        );
        assert_eq!(
            out.unwrap().unwrap(),
            json!({"metadata": {"finalizers": ["b", "c", "a"]}})
        );
    }

    #[test]
    fn list_level_replace_directive() {
        let original = containers(json!([{"name": "a"}]));
        let patch = containers(json!([{"$patch": "replace"}, {"name": "z"}]));
        let out = apply(&original, &patch, deployment_schema())
            .unwrap()
            .unwrap();
        assert_eq!(out, containers(json!([{"name": "z"}])));
    }
}
