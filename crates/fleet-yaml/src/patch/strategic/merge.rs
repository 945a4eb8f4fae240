//! Applying a strategic merge patch: maps merge member by member, lists follow their field's strategy (merged by
//! key, merged as sets, or replaced), and the directives are honoured. Follows k8s.io/apimachinery `strategicpatch`
//! as kube-apiserver and `kubectl patch` run it (parallel deletion lists merged, unmatched nulls ignored).

use crate::patch::error::MergeProblem;
use serde_json::{Map, Value};

use super::directives::{
    DELETE_FROM_PRIMITIVE_LIST, MapDirective, PATCH, SET_ELEMENT_ORDER, apply_retain_keys,
    directive_target, take_map_directive, without_directives,
};
use super::order::{Identity, normalize, partition};
use super::path::Path;
use super::schema::{Field, MergeSchema, Strategy, field_of};
use crate::patch::error::PatchError;
use crate::patch::json_patch::json_equal;

/// Merges the patch map into the original map.
pub fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    schema: &dyn MergeSchema,
    path: &Path<'_>,
) -> Result<Map<String, Value>, PatchError> {
    path.check_depth()?;
    match take_map_directive(&mut patch).map_err(|reason| path.error(reason))? {
        Some(MapDirective::Replace) => return Ok(patch),
        Some(MapDirective::Delete) => return Ok(Map::new()),
        None => {}
    }
    apply_retain_keys(&mut original, &mut patch).map_err(|reason| path.error(reason))?;
    apply_element_orders(&mut original, &mut patch, schema, path)?;
    for (key, patch_value) in patch {
        let (key, is_deletion_list) = match directive_target(&key, DELETE_FROM_PRIMITIVE_LIST) {
            Some(target) => (target.to_owned(), true),
            None if key.starts_with(DELETE_FROM_PRIMITIVE_LIST) => {
                return Err(path.error(MergeProblem::BadDirectiveKey {
                    key,
                    directive: DELETE_FROM_PRIMITIVE_LIST,
                }));
            }
            None => (key, false),
        };
        merge_member(
            &mut original,
            key,
            patch_value,
            is_deletion_list,
            schema,
            path,
        )?;
    }
    Ok(original)
}

/// Merges one member of a patch map into the original map.
fn merge_member(
    original: &mut Map<String, Value>,
    key: String,
    patch_value: Value,
    is_deletion_list: bool,
    schema: &dyn MergeSchema,
    path: &Path<'_>,
) -> Result<(), PatchError> {
    if patch_value.is_null() {
        original.shift_remove(&key);
        return Ok(());
    }
    let field_path = path.field(&key);
    let merged = match (original.get_mut(&key), patch_value) {
        (Some(Value::Object(current)), Value::Object(patch_map)) => {
            let field = field_of(schema, &key);
            if field.meta.strategy == Strategy::Replace {
                Some(Value::Object(patch_map))
            } else {
                let current = std::mem::take(current);
                Some(Value::Object(merge_map(
                    current,
                    patch_map,
                    field.schema,
                    &field_path,
                )?))
            }
        }
        (Some(Value::Array(current)), Value::Array(patch_items)) => {
            let field = field_of(schema, &key);
            // A deletion list applies whatever the field's strategy, as in Kubernetes.
            if field.meta.strategy == Strategy::Merge || is_deletion_list {
                let current = std::mem::take(current);
                Some(Value::Array(merge_list(
                    current,
                    patch_items,
                    field,
                    is_deletion_list,
                    &field_path,
                )?))
            } else {
                Some(Value::Array(patch_items))
            }
        }
        (Some(current), patch_value) if same_type(current, &patch_value) => {
            without_directives(patch_value)
        }
        // A deletion list for a field the original lacks (or holds as another type) changes nothing.
        (_, _) if is_deletion_list => return Ok(()),
        (_, patch_value) => without_directives(patch_value),
    };
    match merged {
        Some(value) => {
            original.insert(key, value);
        }
        None => {
            original.shift_remove(&key);
        }
    }
    Ok(())
}

/// Merges a list whose field has `patchStrategy: merge`.
pub fn merge_list(
    original: Vec<Value>,
    patch: Vec<Value>,
    field: Field<'_>,
    is_deletion_list: bool,
    path: &Path<'_>,
) -> Result<Vec<Value>, PatchError> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let items_are_objects =
        items_are_objects(&original, &patch).map_err(|reason| path.error(reason))?;
    if !items_are_objects {
        if is_deletion_list {
            return Ok(original
                .into_iter()
                .filter(|item| !patch.iter().any(|deleted| json_equal(deleted, item)))
                .collect());
        }
        let mut merged: Vec<Value> = Vec::with_capacity(original.len() + patch.len());
        for item in original.iter().chain(&patch) {
            if !merged.iter().any(|seen| json_equal(seen, item)) {
                merged.push(item.clone());
            }
        }
        return order_merged(merged, &patch, &original, Identity::Value)
            .map_err(|reason| path.error(reason));
    }
    let key = field
        .meta
        .merge_key
        .ok_or_else(|| path.error(MergeProblem::NoMergeKey))?;
    let identity = Identity::Key(key);
    let (original, patch) =
        apply_item_directives(original, patch, key).map_err(|reason| path.error(reason))?;
    let patch_ids = identity.ids(&patch).map_err(|reason| path.error(reason))?;
    let original_ids = identity
        .ids(&original)
        .map_err(|reason| path.error(reason))?;
    let mut merged = original;
    for (item, id) in patch.into_iter().zip(&patch_ids) {
        let Value::Object(item) = item else {
            return Err(path.error(MergeProblem::ItemNotObject));
        };
        let found = merged.iter().position(|candidate| {
            candidate
                .get(key)
                .is_some_and(|candidate_id| json_equal(candidate_id, id))
        });
        match found {
            Some(index) => {
                let current = match std::mem::take(&mut merged[index]) {
                    Value::Object(current) => current,
                    _ => Map::new(),
                };
                let item_path = path.item(key, id);
                merged[index] = Value::Object(merge_map(current, item, field.schema, &item_path)?);
            }
            None => merged.push(Value::Object(item)),
        }
    }
    order_merged(merged, &patch_ids, &original_ids, identity).map_err(|reason| path.error(reason))
}

/// Orders a merged list: the items whose identity is in `order_ids` (from the patch list, or a `$setElementOrder`
/// list) in that order, interleaved with the other items, which keep their order in `original_ids`.
fn order_merged(
    merged: Vec<Value>,
    order_ids: &[Value],
    original_ids: &[Value],
    identity: Identity<'_>,
) -> Result<Vec<Value>, MergeProblem> {
    let (ordered_items, server_only) = partition(merged, order_ids, identity)?;
    normalize(
        ordered_items,
        server_only,
        order_ids,
        original_ids,
        identity,
    )
}

/// Handles `$patch` items of a patch list of objects: `delete` removes the original items with that key, `replace`
/// makes the other patch items the whole list. Returns the original and patch lists left to merge.
fn apply_item_directives(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    key: &str,
) -> Result<(Vec<Value>, Vec<Value>), MergeProblem> {
    let mut plain = Vec::with_capacity(patch.len());
    let mut replace = false;
    for item in patch {
        let Some(directive) = item.get(PATCH) else {
            plain.push(item);
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let id = item
                    .get(key)
                    .ok_or_else(|| MergeProblem::DeleteWithoutKey {
                        key: key.to_string(),
                    })?;
                original.retain(|candidate| {
                    !candidate
                        .get(key)
                        .is_some_and(|candidate_id| json_equal(candidate_id, id))
                });
            }
            Some("replace") => replace = true,
            Some("merge") => return Err(MergeProblem::MergeInList),
            _ => return Err(MergeProblem::UnknownListDirective),
        }
    }
    if replace {
        Ok((plain, Vec::new()))
    } else {
        Ok((original, plain))
    }
}

/// Applies every `$setElementOrder/<list>` directive of `patch` (removing it and the list it orders from `patch`).
fn apply_element_orders(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    schema: &dyn MergeSchema,
    path: &Path<'_>,
) -> Result<(), PatchError> {
    let directive_keys: Vec<String> = patch
        .keys()
        .filter(|key| key.starts_with(SET_ELEMENT_ORDER))
        .cloned()
        .collect();
    for directive_key in directive_keys {
        let Some(name) = directive_target(&directive_key, SET_ELEMENT_ORDER) else {
            return Err(path.error(MergeProblem::BadDirectiveKey {
                key: directive_key,
                directive: SET_ELEMENT_ORDER,
            }));
        };
        let field_path = path.field(name);
        let Some(Value::Array(order)) = patch.shift_remove(&directive_key) else {
            return Err(field_path.error(MergeProblem::OrderNotList {
                key: directive_key.clone(),
            }));
        };
        let original_list = take_list(original.get_mut(name), &field_path, "the original")?;
        let patch_list = take_list(patch.get_mut(name), &field_path, "the patch")?;
        patch.shift_remove(name);
        let field = field_of(schema, name);
        let identity = field.meta.merge_key.map_or(Identity::Value, Identity::Key);
        let to_error = |reason: MergeProblem| field_path.error(reason);
        check_patch_follows_order(patch_list.as_deref().unwrap_or_default(), &order, identity)
            .map_err(to_error)?;
        let order_ids = identity.ids(&order).map_err(to_error)?;
        let original_ids = identity
            .ids(original_list.as_deref().unwrap_or_default())
            .map_err(to_error)?;
        let merged = match (original_list, patch_list) {
            (Some(current), None) => current,
            (None, Some(added)) => added,
            (Some(current), Some(added)) if field.meta.strategy == Strategy::Merge => {
                merge_list(current, added, field, false, &field_path)?
            }
            (Some(_), Some(added)) => added,
            (None, None) => continue,
        };
        let ordered =
            order_merged(merged, &order_ids, &original_ids, identity).map_err(to_error)?;
        original.insert(name.to_owned(), Value::Array(ordered));
    }
    Ok(())
}

/// The patch list's items (deletions and directives aside) must appear in `$setElementOrder` in the same order.
fn check_patch_follows_order(
    patch: &[Value],
    order: &[Value],
    identity: Identity<'_>,
) -> Result<(), MergeProblem> {
    if patch.is_empty() || order.is_empty() {
        return Ok(());
    }
    let mut order_ids = order.iter();
    for item in patch.iter().filter(|item| item.get(PATCH).is_none()) {
        let id = identity.id(item)?;
        let mut found = false;
        for ordered in order_ids.by_ref() {
            if json_equal(identity.id(ordered)?, id) {
                found = true;
                break;
            }
        }
        if !found {
            return Err(MergeProblem::OrderMismatch);
        }
    }
    Ok(())
}

/// Moves the list out of `value` (leaving an empty list in its place); `None` when absent, an error for a non-list.
fn take_list(
    value: Option<&mut Value>,
    path: &Path<'_>,
    side: &'static str,
) -> Result<Option<Vec<Value>>, PatchError> {
    match value {
        None => Ok(None),
        Some(Value::Array(items)) => Ok(Some(std::mem::take(items))),
        Some(_) => Err(path.error(MergeProblem::OrderedNotList { side })),
    }
}

/// Whether the items of two lists are objects (`true`) or primitives (`false`); lists of lists and lists mixing
/// types cannot be merged.
pub(super) fn items_are_objects(original: &[Value], patch: &[Value]) -> Result<bool, MergeProblem> {
    let mut items = original.iter().chain(patch);
    let Some(first) = items.next() else {
        return Ok(false);
    };
    if first.is_array() {
        return Err(MergeProblem::ListsOfLists);
    }
    if items.any(|item| !same_type(first, item)) {
        return Err(MergeProblem::MixedItems);
    }
    Ok(first.is_object())
}

pub(super) fn same_type(a: &Value, b: &Value) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}
