//! Item identity and the order of merged lists: patch items in the patch's (or `$setElementOrder`'s) order,
//! interleaved with the items only the original has, which keep their original relative order. New items come
//! before the original items they are not anchored to, as in Kubernetes.

use crate::patch::error::MergeProblem;
use serde_json::Value;

use super::directives::PATCH;
use crate::patch::json_patch::json_equal;

/// How the items of a merged list are identified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity<'k> {
    /// Primitive items: by value.
    Value,
    /// Object items: by the value of their merge key.
    Key(&'k str),
}

impl Identity<'_> {
    /// The identity of every item of `list`; each must be an object holding the merge key when there is one.
    pub fn ids(self, list: &[Value]) -> Result<Vec<Value>, MergeProblem> {
        list.iter().map(|item| self.id(item).cloned()).collect()
    }

    /// The identity of one item.
    pub fn id(self, item: &Value) -> Result<&Value, MergeProblem> {
        match self {
            Identity::Value => Ok(item),
            Identity::Key(key) => match item {
                Value::Object(map) => map.get(key).ok_or_else(|| MergeProblem::ItemWithoutKey {
                    key: key.to_string(),
                }),
                _ => Err(MergeProblem::ItemNotKeyed {
                    key: key.to_string(),
                }),
            },
        }
    }
}

/// Index of the first identity in `ids` equal to `id`.
pub fn position(ids: &[Value], id: &Value) -> Option<usize> {
    ids.iter().position(|candidate| json_equal(candidate, id))
}

/// Splits `merged` into the items whose identity is in `patch_ids` and the others, keeping their order.
pub fn partition(
    merged: Vec<Value>,
    patch_ids: &[Value],
    identity: Identity<'_>,
) -> Result<(Vec<Value>, Vec<Value>), MergeProblem> {
    let mut patch_items = Vec::new();
    let mut server_only = Vec::new();
    for item in merged {
        if position(patch_ids, identity.id(&item)?).is_some() {
            patch_items.push(item);
        } else {
            server_only.push(item);
        }
    }
    Ok((patch_items, server_only))
}

/// Orders `patch_items` by `patch_order` and `server_only` by `server_order`, then interleaves them: a server-only
/// item goes first only when both it and the next patch item occur in `server_order` and it comes earlier there.
pub fn normalize(
    patch_items: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    identity: Identity<'_>,
) -> Result<Vec<Value>, MergeProblem> {
    let patch_items = sort_by_order(patch_items, patch_order, identity)?;
    let server_only = sort_by_order(server_only, server_order, identity)?;
    let server_index = |item: &Value| {
        identity
            .id(item)
            .ok()
            .and_then(|id| position(server_order, id))
    };
    let mut result = Vec::with_capacity(patch_items.len() + server_only.len());
    let mut patch_items = patch_items.into_iter().peekable();
    let mut server_only = server_only.into_iter().peekable();
    loop {
        let take_server = match (server_only.peek(), patch_items.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(server), Some(patch)) => matches!(
                (server_index(server), server_index(patch)),
                (Some(s), Some(p)) if s < p
            ),
        };
        let next = if take_server {
            server_only.next()
        } else {
            patch_items.next()
        };
        result.extend(next);
    }
    Ok(result)
}

/// Stable sort of `items` by the position of their identity in `order` (unknown identities last); items that are
/// `$patch: delete` directives go to the very end.
fn sort_by_order(
    items: Vec<Value>,
    order: &[Value],
    identity: Identity<'_>,
) -> Result<Vec<Value>, MergeProblem> {
    let (mut kept, deletions): (Vec<Value>, Vec<Value>) = items
        .into_iter()
        .partition(|item| item.get(PATCH).and_then(Value::as_str) != Some("delete"));
    let mut keyed = Vec::with_capacity(kept.len());
    for item in kept.drain(..) {
        let rank = position(order, identity.id(&item)?).unwrap_or(usize::MAX);
        keyed.push((rank, item));
    }
    keyed.sort_by_key(|(rank, _)| *rank);
    Ok(keyed
        .into_iter()
        .map(|(_, item)| item)
        .chain(deletions)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn strings(values: &[&str]) -> Vec<Value> {
        values.iter().map(|v| json!(v)).collect()
    }

    #[test]
    fn new_items_come_before_unanchored_original_items() {
        let out = normalize(
            strings(&["d"]),
            strings(&["a", "b"]),
            &strings(&["d"]),
            &strings(&["a", "b"]),
            Identity::Value,
        );
        assert_eq!(out.unwrap(), strings(&["d", "a", "b"]));
    }

    #[test]
    fn original_items_keep_their_place_before_later_patched_items() {
        let out = normalize(
            strings(&["b", "c"]),
            strings(&["a"]),
            &strings(&["b", "c"]),
            &strings(&["a", "b"]),
            Identity::Value,
        );
        assert_eq!(out.unwrap(), strings(&["a", "b", "c"]));
    }

    #[test]
    fn keyed_items_are_ordered_by_their_key() {
        let items = vec![json!({"name": "b", "v": 1}), json!({"name": "a"})];
        let out = sort_by_order(items, &strings(&["a", "b"]), Identity::Key("name")).unwrap();
        assert_eq!(
            out,
            vec![json!({"name": "a"}), json!({"name": "b", "v": 1})]
        );
    }

    #[test]
    fn items_without_merge_key_are_errors() {
        let err = Identity::Key("name")
            .ids(&[json!({"image": "x"})])
            .unwrap_err();
        assert_eq!(err, MergeProblem::ItemWithoutKey { key: "name".into() });
        assert_eq!(err.to_string(), "a list item has no merge key \"name\"");
        assert!(Identity::Key("name").ids(&[json!("x")]).is_err());
    }

    #[test]
    fn partition_splits_by_presence() {
        let (patch, server) = partition(
            strings(&["a", "b", "c"]),
            &strings(&["c", "a"]),
            Identity::Value,
        )
        .unwrap();
        assert_eq!(patch, strings(&["a", "c"]));
        assert_eq!(server, strings(&["b"]));
    }
}
