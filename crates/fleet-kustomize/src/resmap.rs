//! The ordered set of resources a kustomization accumulates: adding with id-conflict checks, absorbing generated
//! resources by behavior (create, merge, replace), and merging a sub-kustomization's set.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::resource::{Behavior, ResId, Resource};

/// Resources in the order they were added.
#[derive(Debug, Clone, Default)]
pub struct ResMap {
    /// The resources.
    pub items: Vec<Resource>,
}

impl ResMap {
    /// Adds a resource; an existing resource with the same id is an error naming both origins.
    pub fn append(&mut self, r: Resource) -> Result<()> {
        let id = r.id();
        if let Some(existing) = self.items.iter().find(|x| x.id().equals(&id)) {
            return Err(Error::invalid(
                &r.origin,
                format!(
                    "resource {} is already defined (in {}); a kustomization may not contain the same resource twice — \
                     remove one, or change it with a patch",
                    id.describe(),
                    existing.origin
                ),
            ));
        }
        self.items.push(r);
        Ok(())
    }

    /// Indices of the resources whose current or any earlier id equals `id` (kustomize's
    /// `GetMatchingResourcesByAnyId`).
    pub fn find_by_any_id(&self, id: &ResId) -> Vec<usize> {
        self.items
            .iter()
            .enumerate()
            .filter(|(_, x)| x.id().equals(id) || x.history().any(|h| h.equals(id)))
            .map(|(i, _)| i)
            .collect()
    }

    /// Adds every resource of `other`.
    pub fn append_all(&mut self, other: ResMap) -> Result<()> {
        other.items.into_iter().try_for_each(|r| self.append(r))
    }

    /// Adds a generated resource according to its behavior.
    pub fn absorb(&mut self, mut r: Resource, kfile: &str) -> Result<()> {
        let id = r.id();
        let matches = self.find_by_any_id(&id);
        let behavior = r.behavior.unwrap_or(Behavior::Create);
        match (matches.as_slice(), behavior) {
            ([], Behavior::Create) => self.append(r),
            ([], _) => Err(Error::invalid(
                kfile,
                format!(
                    "generator for {} has behavior merge/replace but no such resource exists in the bases; \
                     use behavior: create, or add the base that defines it",
                    id.describe()
                ),
            )),
            ([i], Behavior::Merge | Behavior::Replace) => {
                let old = &self.items[*i];
                if behavior == Behavior::Merge {
                    for field in ["data", "binaryData"] {
                        merge_map_field(&mut r.obj, &old.obj, field);
                    }
                }
                let mut meta_labels = old.labels();
                meta_labels.extend(r.labels());
                let mut meta_ann = old.annotations();
                meta_ann.extend(r.annotations());
                let md = crate::resource::metadata_mut(&mut r.obj);
                set_or_remove(md, "labels", meta_labels);
                set_or_remove(md, "annotations", meta_ann);
                md.insert("name".into(), Value::String(old.name().to_string()));
                if old.namespace().is_empty() {
                    md.shift_remove("namespace");
                } else {
                    md.insert(
                        "namespace".into(),
                        Value::String(old.namespace().to_string()),
                    );
                }
                r.original = old.original.clone();
                r.previous = old.previous.clone();
                r.needs_hash = old.needs_hash;
                r.origin = old.origin.clone();
                self.items[*i] = r;
                Ok(())
            }
            ([_], Behavior::Create) => Err(Error::invalid(
                kfile,
                format!(
                    "generator for {} creates a resource that already exists; set behavior: merge or replace",
                    id.describe()
                ),
            )),
            (_, _) => Err(Error::invalid(
                kfile,
                format!(
                    "generator for {} matches several resources; give it a namespace",
                    id.describe()
                ),
            )),
        }
    }
}

fn set_or_remove(
    md: &mut serde_json::Map<String, Value>,
    key: &str,
    value: serde_json::Map<String, Value>,
) {
    if value.is_empty() {
        md.shift_remove(key);
    } else {
        md.insert(key.into(), Value::Object(value));
    }
}

/// `new.field = old.field` overlaid with `new.field`.
fn merge_map_field(new: &mut Value, old: &Value, field: &str) {
    let Some(Value::Object(old_map)) = old.get(field) else {
        return;
    };
    let mut merged = old_map.clone();
    if let Some(Value::Object(new_map)) = new.get(field) {
        merged.extend(new_map.clone());
    }
    if let Value::Object(obj) = new {
        obj.insert(field.into(), Value::Object(merged));
    }
}
