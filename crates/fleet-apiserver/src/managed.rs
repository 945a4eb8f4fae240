//! `metadata.managedFields`: reading and writing the per-manager entries, and recording which fields a
//! non-apply write (create, update, patch) changed, so that server-side apply can detect conflicts with it.

use serde_json::{Value, json};

use crate::fieldset::{FieldSet, value_at};
use crate::object;

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
        let fields = crate::fieldset::fields_v1(new, schema);
        let meta = object::metadata_mut(new);
        if fields.as_object().is_some_and(|f| f.is_empty()) {
            meta.remove("managedFields");
            return;
        }
        let mut entry = json!({
            "manager": manager,
            "operation": "Update",
            "apiVersion": api_version,
            "time": object::now_rfc3339(),
            "fieldsType": "FieldsV1",
            "fieldsV1": fields,
        });
        if let Some(sub) = subresource {
            entry["subresource"] = json!(sub);
        }
        meta.insert("managedFields".into(), Value::Array(vec![entry]));
        return;
    };
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
