//! Creating a two-way strategic merge patch (what `kubectl apply` and `kubectl edit` send): the patch that turns
//! `original` into `modified`, using the field strategies of the schema. Follows k8s.io/apimachinery
//! `CreateTwoWayMergePatch`: merged lists get changed and added items, `$patch: delete` items for removed ones,
//! `$deleteFromPrimitiveList/<list>` for removed primitives and `$setElementOrder/<list>` whenever their content or
//! order changed; unions (`retainKeys`) get `$retainKeys`; removed members become `null`.

use crate::patch::error::MergeProblem;
use serde_json::{Map, Value, json};

use super::directives::{DELETE_FROM_PRIMITIVE_LIST, PATCH, RETAIN_KEYS, SET_ELEMENT_ORDER};
use super::merge::{items_are_objects, same_type};
use super::path::Path;
use super::schema::{Field, MergeSchema, Strategy, field_of};
use crate::patch::error::PatchError;
use crate::patch::json_patch::json_equal;

/// The strategic merge patch that turns `original` into `modified` for a type described by `schema`; `{}` when
/// they are equal. Both must be JSON objects. Applying the result to `original` with [`super::apply`] gives
/// `modified` (members whose value is `null` aside: a patch cannot set a `null`).
pub fn diff(
    original: &Value,
    modified: &Value,
    schema: &dyn MergeSchema,
) -> Result<Value, PatchError> {
    let root = Path::root();
    let (Value::Object(original), Value::Object(modified)) = (original, modified) else {
        return Err(root.error(MergeProblem::DiffNotObjects));
    };
    diff_maps(original, modified, schema, false, &root).map(Value::Object)
}

fn diff_maps(
    original: &Map<String, Value>,
    modified: &Map<String, Value>,
    schema: &dyn MergeSchema,
    build_retain_keys: bool,
    path: &Path<'_>,
) -> Result<Map<String, Value>, PatchError> {
    path.check_depth()?;
    let mut patch = Map::new();
    for (key, new_value) in modified {
        let Some(old_value) = original.get(key) else {
            patch.insert(key.clone(), new_value.clone());
            continue;
        };
        if key == PATCH || !same_type(old_value, new_value) {
            if !json_equal(old_value, new_value) {
                patch.insert(key.clone(), new_value.clone());
            }
            continue;
        }
        let field_path = path.field(key);
        match (old_value, new_value) {
            (Value::Object(old_map), Value::Object(new_map)) => {
                let field = field_of(schema, key);
                if field.meta.strategy == Strategy::Replace {
                    if !json_equal(old_value, new_value) {
                        patch.insert(key.clone(), new_value.clone());
                    }
                } else {
                    let nested = diff_maps(
                        old_map,
                        new_map,
                        field.schema,
                        field.meta.retain_keys,
                        &field_path,
                    )?;
                    if !nested.is_empty() {
                        patch.insert(key.clone(), Value::Object(nested));
                    }
                }
            }
            (Value::Array(old_items), Value::Array(new_items)) => {
                let field = field_of(schema, key);
                if field.meta.strategy == Strategy::Merge {
                    let lists = diff_lists(old_items, new_items, field, &field_path)?;
                    lists.insert_into(&mut patch, key);
                } else if !json_equal(old_value, new_value) {
                    patch.insert(key.clone(), new_value.clone());
                }
            }
            _ => {
                if !json_equal(old_value, new_value) {
                    patch.insert(key.clone(), new_value.clone());
                }
            }
        }
    }
    for key in original.keys() {
        if !modified.contains_key(key) {
            patch.insert(key.clone(), Value::Null);
        }
    }
    if build_retain_keys {
        let mut retained: Vec<&String> = modified
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, _)| k)
            .collect();
        let clears_members = original
            .iter()
            .any(|(k, v)| !v.is_null() && !modified.contains_key(k));
        if !retained.is_empty() && (!patch.is_empty() || clears_members) {
            retained.sort();
            patch.insert(RETAIN_KEYS.to_owned(), json!(retained));
        }
    }
    Ok(patch)
}

/// The three parts of a merged list's patch.
#[derive(Default)]
struct ListDiff {
    /// Changed and added items (for objects, followed by `$patch: delete` items).
    items: Vec<Value>,
    /// Removed primitives, for `$deleteFromPrimitiveList/<list>`.
    deleted_primitives: Vec<Value>,
    /// The modified list's order, for `$setElementOrder/<list>`.
    order: Vec<Value>,
}

impl ListDiff {
    fn insert_into(self, patch: &mut Map<String, Value>, key: &str) {
        if !self.items.is_empty() {
            patch.insert(key.to_owned(), Value::Array(self.items));
        }
        if !self.deleted_primitives.is_empty() {
            patch.insert(
                format!("{DELETE_FROM_PRIMITIVE_LIST}/{key}"),
                Value::Array(self.deleted_primitives),
            );
        }
        if !self.order.is_empty() {
            patch.insert(
                format!("{SET_ELEMENT_ORDER}/{key}"),
                Value::Array(self.order),
            );
        }
    }
}

fn diff_lists(
    original: &[Value],
    modified: &[Value],
    field: Field<'_>,
    path: &Path<'_>,
) -> Result<ListDiff, PatchError> {
    if original.is_empty() {
        return Ok(ListDiff {
            items: modified.to_vec(),
            ..ListDiff::default()
        });
    }
    if items_are_objects(original, modified).map_err(|reason| path.error(reason))? {
        let key = field
            .meta
            .merge_key
            .ok_or_else(|| path.error(MergeProblem::NoMergeKeyToDiff))?;
        diff_lists_of_objects(original, modified, key, field, path)
    } else {
        Ok(diff_lists_of_primitives(original, modified))
    }
}

fn diff_lists_of_objects(
    original: &[Value],
    modified: &[Value],
    key: &str,
    field: Field<'_>,
    path: &Path<'_>,
) -> Result<ListDiff, PatchError> {
    let id_of = |item: &Value| -> Result<Value, PatchError> {
        item.get(key).cloned().ok_or_else(|| {
            path.error(MergeProblem::ItemWithoutKey {
                key: key.to_string(),
            })
        })
    };
    let original_ids = original.iter().map(id_of).collect::<Result<Vec<_>, _>>()?;
    let modified_ids = modified.iter().map(id_of).collect::<Result<Vec<_>, _>>()?;
    let mut items = Vec::new();
    for (new_item, id) in modified.iter().zip(&modified_ids) {
        let matching = original_ids
            .iter()
            .position(|old_id| json_equal(old_id, id));
        match (matching.map(|i| &original[i]), new_item) {
            (Some(Value::Object(old_map)), Value::Object(new_map)) => {
                let item_path = path.item(key, id);
                let mut nested = diff_maps(
                    old_map,
                    new_map,
                    field.schema,
                    field.meta.retain_keys,
                    &item_path,
                )?;
                if !nested.is_empty() {
                    nested.insert(key.to_owned(), id.clone());
                    items.push(Value::Object(nested));
                }
            }
            _ => items.push(new_item.clone()),
        }
    }
    let mut removed: Vec<&Value> = original_ids
        .iter()
        .filter(|id| !modified_ids.iter().any(|new_id| json_equal(new_id, id)))
        .collect();
    removed.sort_by_key(|id| sort_text(id));
    items.extend(
        removed
            .into_iter()
            .map(|id| json!({PATCH: "delete", key: id})),
    );
    let order_same = original_ids.len() == modified_ids.len()
        && original_ids
            .iter()
            .zip(&modified_ids)
            .all(|(a, b)| json_equal(a, b));
    let order = if !items.is_empty() || !order_same {
        modified_ids
            .into_iter()
            .map(|id| json!({key: id}))
            .collect()
    } else {
        Vec::new()
    };
    Ok(ListDiff {
        items,
        deleted_primitives: Vec::new(),
        order,
    })
}

fn diff_lists_of_primitives(original: &[Value], modified: &[Value]) -> ListDiff {
    let contains =
        |list: &[Value], item: &Value| list.iter().any(|candidate| json_equal(candidate, item));
    let mut added: Vec<Value> = Vec::new();
    for item in modified {
        if !contains(original, item) && !contains(&added, item) {
            added.push(item.clone());
        }
    }
    let mut deleted: Vec<Value> = Vec::new();
    for item in original {
        if !contains(modified, item) && !contains(&deleted, item) {
            deleted.push(item.clone());
        }
    }
    deleted.sort_by_key(sort_text);
    let changed = original.len() != modified.len()
        || original
            .iter()
            .zip(modified)
            .any(|(a, b)| !json_equal(a, b));
    let order = if !deleted.is_empty() || changed {
        modified.to_vec()
    } else {
        Vec::new()
    };
    ListDiff {
        items: added,
        deleted_primitives: deleted,
        order,
    }
}

/// The text Kubernetes sorts list values by (Go's `%v`): strings as they are, other values as JSON.
fn sort_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
