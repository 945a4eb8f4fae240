//! Field sets in the `FieldsV1` format of managedFields: which leaf fields of an object a manager owns
//! (`f:name` for map keys, `k:{"name":"x"}` for items of keyed lists, `.` for the item itself), computed
//! from objects, compared, and removed from objects. Lists are keyed as their schema says
//! (`x-kubernetes-list-type: map` with `x-kubernetes-list-map-keys`; other declared lists are atomic); only
//! where no schema describes a list are its keys guessed.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// A tree of owned paths; an empty child means the path is owned as a leaf.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSet {
    pub children: BTreeMap<String, FieldSet>,
}

/// Metadata fields that are never owned by a manager.
pub const UNOWNED_METADATA: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
    "generateName",
];

/// The schema of a map member (`properties` or `additionalProperties`), where the schema has one.
pub fn child_schema<'a>(schema: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    let schema = schema?;
    schema
        .get("properties")
        .and_then(|p| p.get(key))
        .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object()))
}

/// The keys identifying the items of a list: from its schema's `x-kubernetes-list-map-keys`; none for a
/// list its schema declares atomic, a set, or without a list type (kube-apiserver's default is atomic);
/// guessed from the items only where no schema describes the list.
pub fn list_keys_for<'a>(schema: Option<&'a Value>, items: &[Value]) -> Option<Vec<&'a str>> {
    let declared = schema.filter(|s| {
        s.get("x-kubernetes-preserve-unknown-fields")
            .and_then(Value::as_bool)
            != Some(true)
            && (s.get("type").is_some() || s.get("x-kubernetes-list-type").is_some())
    });
    let Some(schema) = declared else {
        return list_keys(items);
    };
    if schema.get("x-kubernetes-list-type").and_then(Value::as_str) != Some("map") {
        return None;
    }
    let keys: Vec<&str> = schema
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    (!keys.is_empty() && items.iter().all(Value::is_object)).then_some(keys)
}

/// The keys that identify items of a list of objects, when every item carries them with distinct values.
fn list_keys(items: &[Value]) -> Option<Vec<&'static str>> {
    const CANDIDATES: &[&[&str]] = &[
        &["name"],
        &["containerPort", "protocol"],
        &["port", "protocol"],
        &["mountPath"],
        &["devicePath"],
        &["type"],
        &["ip"],
        &["key"],
    ];
    if items.is_empty() || !items.iter().all(Value::is_object) {
        return None;
    }
    'candidates: for keys in CANDIDATES {
        let mut seen = Vec::new();
        for item in items {
            // The first key must be present; later keys may be defaulted (e.g. protocol).
            if item.get(keys[0]).is_none() {
                continue 'candidates;
            }
            let id = item_key(item, keys);
            if seen.contains(&id) {
                continue 'candidates;
            }
            seen.push(id);
        }
        return Some(keys.to_vec());
    }
    None
}

/// `k:{"name":"x"}` for an item of a keyed list.
pub fn item_key(item: &Value, keys: &[&str]) -> String {
    let mut map = Map::new();
    for key in keys {
        if let Some(v) = item.get(*key) {
            map.insert((*key).to_string(), v.clone());
        }
    }
    format!("k:{}", Value::Object(map))
}

/// The fields set in `obj` (apiVersion, kind and identity metadata excluded) in `FieldsV1` form, lists
/// keyed as `schema` (the kind's schema, when known) says: what a create records in managedFields.
pub fn fields_v1(obj: &Value, schema: Option<&Value>) -> Value {
    let Some(map) = obj.as_object() else {
        return Value::Object(Map::new());
    };
    let mut out = Vec::with_capacity(map.len());
    for (key, value) in map {
        match key.as_str() {
            "apiVersion" | "kind" => {}
            "metadata" => {
                let meta_schema = child_schema(schema, "metadata");
                let owned: Vec<(String, Value)> = value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter(|(k, _)| !UNOWNED_METADATA.contains(&k.as_str()))
                    .map(|(k, v)| {
                        (
                            format!("f:{k}"),
                            value_fields(v, child_schema(meta_schema, k)),
                        )
                    })
                    .collect();
                if !owned.is_empty() {
                    out.push(("f:metadata".to_string(), sorted(owned)));
                }
            }
            _ => out.push((
                format!("f:{key}"),
                value_fields(value, child_schema(schema, key)),
            )),
        }
    }
    sorted(out)
}

/// A `FieldsV1` node from its members, in the order Go's encoder writes them (sorted).
fn sorted(mut members: Vec<(String, Value)>) -> Value {
    members.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Value::Object(members.into_iter().collect())
}

fn value_fields(value: &Value, schema: Option<&Value>) -> Value {
    let mut out = Vec::new();
    match value {
        Value::Object(map) => {
            out.reserve(map.len() + 1);
            for (k, v) in map {
                out.push((format!("f:{k}"), value_fields(v, child_schema(schema, k))));
            }
            if !map.is_empty() {
                out.push((".".to_string(), Value::Object(Map::new())));
            }
        }
        Value::Array(items) => {
            let item_schema = schema.and_then(|s| s.get("items"));
            if let Some(keys) = list_keys_for(schema, items) {
                for item in items {
                    let mut child = value_fields(item, item_schema);
                    if let Some(members) = child.as_object_mut() {
                        members.insert(".".into(), Value::Object(Map::new()));
                        members.sort_keys();
                    }
                    out.push((item_key(item, &keys), child));
                }
            }
        }
        _ => {}
    }
    sorted(out)
}

impl FieldSet {
    /// The fields set in `obj` (apiVersion, kind and identity metadata excluded), lists keyed as `schema`
    /// (the kind's schema, when known) says.
    pub fn of_object(obj: &Value, schema: Option<&Value>) -> FieldSet {
        FieldSet::from_json(&fields_v1(obj, schema))
    }

    pub fn is_empty(&self) -> bool {
        self.children.is_empty()
    }

    /// Every owned path, as lists of path elements, leaves only.
    pub fn leaves(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        for (k, child) in &self.children {
            prefix.push(k.clone());
            if child.children.is_empty() {
                out.push(prefix.clone());
            } else {
                child.collect(prefix, out);
            }
            prefix.pop();
        }
    }

    pub fn contains(&self, path: &[String]) -> bool {
        let mut node = self;
        for p in path {
            match node.children.get(p) {
                Some(child) => node = child,
                None => return false,
            }
        }
        true
    }

    pub fn insert(&mut self, path: &[String]) {
        let mut node = self;
        for p in path {
            node = node.children.entry(p.clone()).or_default();
        }
    }

    /// Removes a leaf path and prunes emptied parents (parents that only held `.` go too).
    pub fn remove(&mut self, path: &[String]) {
        fn go(node: &mut FieldSet, path: &[String]) {
            let Some((first, rest)) = path.split_first() else {
                return;
            };
            if rest.is_empty() {
                node.children.remove(first);
                return;
            }
            if let Some(child) = node.children.get_mut(first) {
                go(child, rest);
                let only_marker = child.children.len() == 1 && child.children.contains_key(".");
                if child.children.is_empty() || only_marker {
                    node.children.remove(first);
                }
            }
        }
        go(self, path);
    }

    pub fn to_json(&self) -> Value {
        Value::Object(
            self.children
                .iter()
                .map(|(k, v)| (k.clone(), v.to_json()))
                .collect(),
        )
    }

    pub fn from_json(value: &Value) -> FieldSet {
        let mut set = FieldSet::default();
        if let Some(map) = value.as_object() {
            for (k, v) in map {
                set.children.insert(k.clone(), FieldSet::from_json(v));
            }
        }
        set
    }
}

/// The value at a field-set path in `obj` (`.` addresses the item itself).
pub fn value_at<'a>(obj: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut node = obj;
    for p in path {
        if p == "." {
            continue;
        }
        node = step(node, p)?;
    }
    Some(node)
}

fn step<'a>(node: &'a Value, element: &str) -> Option<&'a Value> {
    if let Some(field) = element.strip_prefix("f:") {
        return node.get(field);
    }
    let key = element.strip_prefix("k:")?;
    let wanted: Map<String, Value> = serde_json::from_str(key).ok()?;
    node.as_array()?
        .iter()
        .find(|item| wanted.iter().all(|(k, v)| item.get(k) == Some(v)))
}

/// Removes the field at `path` from `obj` (the whole item when the path ends in `.` of a list item).
pub fn remove_at(obj: &mut Value, path: &[String]) {
    let path: Vec<&String> = path.iter().collect();
    let (target, parent_path) = match path.split_last() {
        Some((last, parent)) if last.as_str() == "." => match parent.split_last() {
            Some((item, grand)) => (*item, grand.to_vec()),
            None => return,
        },
        Some((last, parent)) => (*last, parent.to_vec()),
        None => return,
    };
    let mut node = obj;
    for p in parent_path {
        if p == "." {
            continue;
        }
        let next = if let Some(field) = p.strip_prefix("f:") {
            node.get_mut(field)
        } else if let Some(key) = p.strip_prefix("k:") {
            let Ok(wanted) = serde_json::from_str::<Map<String, Value>>(key) else {
                return;
            };
            node.as_array_mut().and_then(|items| {
                items
                    .iter_mut()
                    .find(|item| wanted.iter().all(|(k, v)| item.get(k) == Some(v)))
            })
        } else {
            None
        };
        match next {
            Some(n) => node = n,
            None => return,
        }
    }
    if let Some(field) = target.strip_prefix("f:") {
        if let Some(map) = node.as_object_mut() {
            map.remove(field);
        }
    } else if let Some(key) = target.strip_prefix("k:")
        && let Ok(wanted) = serde_json::from_str::<Map<String, Value>>(key)
        && let Some(items) = node.as_array_mut()
    {
        items.retain(|item| !wanted.iter().all(|(k, v)| item.get(k) == Some(v)));
    }
}

/// Human form of a path for conflict messages: `.spec.replicas`, `.spec.containers[name="web"].image`.
pub fn display_path(path: &[String]) -> String {
    let mut out = String::new();
    for p in path {
        if let Some(field) = p.strip_prefix("f:") {
            out.push('.');
            out.push_str(field);
        } else if let Some(key) = p.strip_prefix("k:") {
            let parts: Vec<String> = serde_json::from_str::<Map<String, Value>>(key)
                .map(|m| m.iter().map(|(k, v)| format!("{k}={v}")).collect())
                .unwrap_or_default();
            out.push_str(&format!("[{}]", parts.join(",")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keyed_lists_and_leaves() {
        let obj = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "1"}},
            "spec": {"containers": [{"name": "web", "image": "nginx"}], "args": ["x"]}});
        let set = FieldSet::of_object(&obj, None);
        let leaves: Vec<String> = set.leaves().iter().map(|p| display_path(p)).collect();
        assert!(
            leaves.contains(&".metadata.labels.a".to_string()),
            "{leaves:?}"
        );
        assert!(
            leaves.contains(&".spec.containers[name=\"web\"].image".to_string()),
            "{leaves:?}"
        );
        assert!(leaves.contains(&".spec.args".to_string()), "{leaves:?}");
        assert!(!leaves.iter().any(|l| l.contains("metadata.name")));
        let round = FieldSet::from_json(&set.to_json());
        assert_eq!(round, set);
    }

    #[test]
    fn remove_item_and_field() {
        let mut obj = json!({"spec": {"containers": [{"name": "a"}, {"name": "b", "image": "x"}]}});
        remove_at(
            &mut obj,
            &[
                "f:spec".into(),
                "f:containers".into(),
                "k:{\"name\":\"b\"}".into(),
                "f:image".into(),
            ],
        );
        assert_eq!(obj["spec"]["containers"][1], json!({"name": "b"}));
        remove_at(
            &mut obj,
            &[
                "f:spec".into(),
                "f:containers".into(),
                "k:{\"name\":\"a\"}".into(),
                ".".into(),
            ],
        );
        assert_eq!(obj["spec"]["containers"], json!([{"name": "b"}]));
    }
}
