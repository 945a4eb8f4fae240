//! `metadata.managedFields`: reading and writing the per-manager entries, and recording which fields a
//! non-apply write (create, update, patch) changed, so that server-side apply can detect conflicts with it.

use serde_json::{Value, json};

use crate::storage::fieldset::{FieldSet, value_at};
use crate::storage::object;

/// One managedFields entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub manager: String,
    pub operation: String,
    pub api_version: String,
    pub time: String,
    pub subresource: Option<String>,
    pub fields: FieldSet,
}

impl Entry {
    fn to_json(&self) -> Value {
        let mut v = json!({
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
            "time": self.time,
            "fieldsType": "FieldsV1",
            "fieldsV1": self.fields.to_json(),
        });
        if let Some(sub) = &self.subresource {
            v["subresource"] = json!(sub);
        }
        v
    }

    fn from_json(v: &Value) -> Option<Entry> {
        Some(Entry {
            manager: v.get("manager")?.as_str()?.to_string(),
            operation: v
                .get("operation")
                .and_then(Value::as_str)
                .unwrap_or("Update")
                .to_string(),
            api_version: v
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            time: v
                .get("time")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            subresource: v
                .get("subresource")
                .and_then(Value::as_str)
                .map(str::to_string),
            fields: FieldSet::from_json(v.get("fieldsV1").unwrap_or(&Value::Null)),
        })
    }
}

pub fn read(obj: &Value) -> Vec<Entry> {
    object::metadata(obj)
        .and_then(|m| m.get("managedFields"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Entry::from_json).collect())
        .unwrap_or_default()
}

pub fn write(obj: &mut Value, entries: &[Entry]) {
    let meta = object::metadata_mut(obj);
    let entries: Vec<Value> = entries
        .iter()
        .filter(|e| !e.fields.is_empty())
        .map(Entry::to_json)
        .collect();
    if entries.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert("managedFields".into(), Value::Array(entries));
    }
}

/// Records a non-apply write by `manager`: it takes ownership of every field it changed from `old`.
pub fn record_update(
    new: &mut Value,
    old: Option<&Value>,
    manager: &str,
    api_version: &str,
    subresource: Option<&str>,
    schema: Option<&Value>,
) {
    let Some(old) = old else {
        // A create: the writer owns every field it set, written without building a FieldSet.
        let fields = crate::storage::fieldset::fields_v1(new, schema);
        let entry = json!({
            "manager": manager,
            "operation": "Update",
            "apiVersion": api_version,
            "time": object::now_rfc3339(),
            "fieldsType": "FieldsV1",
            "fieldsV1": fields,
        });
        write_single(new, entry, subresource);
        return;
    };
    if let Some(entry) = sole_owner_update(new, old, manager, api_version, subresource, schema) {
        write_single(new, entry, subresource);
        return;
    }
    record_update_by_paths(new, old, manager, api_version, subresource, schema);
}

/// The general bookkeeping of a non-apply write: per changed path, across every manager's entry.
fn record_update_by_paths(
    new: &mut Value,
    old: &Value,
    manager: &str,
    api_version: &str,
    subresource: Option<&str>,
    schema: Option<&Value>,
) {
    let new_fields = FieldSet::of_object(new, schema);
    let mut entries = read(old);
    let changed: Vec<Vec<String>> = new_fields
        .leaves()
        .into_iter()
        .filter(|path| value_at(old, path) != value_at(new, path))
        .collect();
    for entry in &mut entries {
        for path in entry.fields.leaves() {
            if !new_fields.contains(&path) {
                entry.fields.remove(&path);
            }
        }
    }
    if !changed.is_empty() {
        for entry in &mut entries {
            for path in &changed {
                entry.fields.remove(path);
            }
        }
        let subresource = subresource.map(str::to_string);
        let position = entries.iter().position(|e| {
            e.manager == manager && e.operation == "Update" && e.subresource == subresource
        });
        let entry = match position {
            Some(i) => &mut entries[i],
            None => {
                entries.push(Entry {
                    manager: manager.to_string(),
                    operation: "Update".into(),
                    api_version: api_version.to_string(),
                    time: String::new(),
                    subresource,
                    fields: FieldSet::default(),
                });
                entries.last_mut().expect("just pushed")
            }
        };
        for path in &changed {
            entry.fields.insert(path);
        }
        entry.time = object::now_rfc3339();
        entry.api_version = api_version.to_string();
    }
    write(new, &entries);
}

/// The common update: the object's only entry is this manager's (an Update, same subresource) and covers
/// every field of `old`. Then the manager owns every field of `new`, and the general bookkeeping (per-path
/// comparisons) is not needed; `None` when the case does not apply.
fn sole_owner_update(
    new: &Value,
    old: &Value,
    manager: &str,
    api_version: &str,
    subresource: Option<&str>,
    schema: Option<&Value>,
) -> Option<Value> {
    let entries = object::metadata(old)?.get("managedFields")?.as_array()?;
    let [only] = entries.as_slice() else {
        return None;
    };
    let text = |field: &str| only.get(field).and_then(Value::as_str);
    let own = text("manager") == Some(manager)
        && text("operation").unwrap_or("Update") == "Update"
        && text("subresource") == subresource;
    if !own || only.get("fieldsV1") != Some(&crate::storage::fieldset::fields_v1(old, schema)) {
        return None;
    }
    let mut entry = only.clone();
    entry["fieldsV1"] = crate::storage::fieldset::fields_v1(new, schema);
    if content_changed(old, new) {
        entry["time"] = json!(object::now_rfc3339());
        entry["apiVersion"] = json!(api_version);
    }
    Some(entry)
}

/// Whether `new` sets a field to a value `old` does not have (what moves an entry's time).
fn content_changed(old: &Value, new: &Value) -> bool {
    let differs = |old: Option<&serde_json::Map<String, Value>>,
                   new: Option<&serde_json::Map<String, Value>>,
                   skip: &dyn Fn(&str) -> bool| {
        new.into_iter()
            .flatten()
            .any(|(k, v)| !skip(k) && old.and_then(|o| o.get(k)) != Some(v))
    };
    differs(old.as_object(), new.as_object(), &|k| {
        matches!(k, "metadata" | "apiVersion" | "kind")
    }) || differs(object::metadata(old), object::metadata(new), &|k| {
        crate::storage::fieldset::UNOWNED_METADATA.contains(&k)
    })
}

/// Writes `entry` as the object's only managedFields entry (none when it owns nothing).
fn write_single(obj: &mut Value, mut entry: Value, subresource: Option<&str>) {
    let owns_nothing = entry
        .get("fieldsV1")
        .and_then(Value::as_object)
        .is_none_or(|f| f.is_empty());
    let meta = object::metadata_mut(obj);
    if owns_nothing {
        meta.remove("managedFields");
        return;
    }
    if let Some(sub) = subresource {
        entry["subresource"] = json!(sub);
    }
    meta.insert("managedFields".into(), Value::Array(vec![entry]));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sole-owner shortcut records what the per-path bookkeeping records.
    #[test]
    fn sole_owner_shortcut_matches_the_general_bookkeeping() {
        let mut old = json!({"metadata": {"name": "x", "labels": {"a": "1"}},
            "data": {"k": "v", "gone": "soon"}, "list": [1, 2]});
        record_update(&mut old, None, "me", "v1", None, None);
        let edits = [
            json!({"metadata": {"name": "x", "labels": {"a": "2", "b": "3"}}, "data": {"k": "v"}, "list": [1, 2]}),
            json!({"metadata": {"name": "x"}, "data": {"k": "w", "new": {"deep": true}}}),
        ];
        for edit in edits {
            let mut edit = edit;
            edit["metadata"]["managedFields"] = old["metadata"]["managedFields"].clone();
            assert!(sole_owner_update(&edit, &old, "me", "v1", None, None).is_some());
            let (mut fast, mut general) = (edit.clone(), edit.clone());
            record_update(&mut fast, Some(&old), "me", "v1", None, None);
            record_update_by_paths(&mut general, &old, "me", "v1", None, None);
            let fields = |v: &Value| v["metadata"]["managedFields"][0]["fieldsV1"].clone();
            assert_eq!(fields(&fast), fields(&general), "{edit}");
            assert_eq!(read(&fast).len(), 1);
        }
    }
}
