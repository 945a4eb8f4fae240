//! The ordered set of resources a kustomization accumulates: adding with id-conflict checks, absorbing generated
//! resources by behavior (create, merge, replace), and merging a sub-kustomization's set.

use std::collections::HashMap;

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
    /// Adds every resource of `other`.
    pub fn append_all(&mut self, other: ResMap) -> Result<()> {
        self.extend(other.items)
    }

    /// Adds resources in order; one with the id of a resource already present is an error naming both origins.
    /// Lookups go by name, so adding many is linear.
    pub fn extend(&mut self, new: Vec<Resource>) -> Result<()> {
        let mut by_name = self.index(false);
        for r in new {
            let id = r.id();
            let existing = by_name
                .get(id.name.as_str())
                .and_then(|ix| ix.iter().find(|&&i| self.items[i].has_id(&id)));
            if let Some(&i) = existing {
                return Err(Error::invalid(
                    &r.origin,
                    format!(
                        "resource {} is already defined (in {}); a kustomization may not contain the same resource \
                         twice — remove one, or change it with a patch",
                        id.describe(),
                        self.items[i].origin
                    ),
                ));
            }
            by_name.entry(id.name).or_default().push(self.items.len());
            self.items.push(r);
        }
        Ok(())
    }

    /// Positions of the resources by current name (and, with `history`, by every earlier name too).
    fn index(&self, history: bool) -> HashMap<String, Vec<usize>> {
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::with_capacity(self.items.len());
        for (i, r) in self.items.iter().enumerate() {
            by_name.entry(r.name().to_string()).or_default().push(i);
            if history {
                for h in r.history().filter(|h| h.name != r.name()) {
                    let slot = by_name.entry(h.name.clone()).or_default();
                    if slot.last() != Some(&i) {
                        slot.push(i);
                    }
                }
            }
        }
        by_name
    }

    /// Indices of the resources whose current or any earlier id equals `id` (kustomize's
    /// `GetMatchingResourcesByAnyId`).
    pub fn find_by_any_id(&self, id: &ResId) -> Vec<usize> {
        self.items
            .iter()
            .enumerate()
            .filter(|(_, x)| x.has_id(id) || x.history().any(|h| h.equals(id)))
            .map(|(i, _)| i)
            .collect()
    }

    /// Adds generated resources in order, each according to its behavior.
    pub fn absorb_all(&mut self, generated: Vec<Resource>, kfile: &str) -> Result<()> {
        let mut by_name = self.index(true);
        for r in generated {
            let id = r.id();
            let matches: Vec<usize> = by_name
                .get(id.name.as_str())
                .map(|ix| {
                    ix.iter()
                        .copied()
                        .filter(|&i| {
                            self.items[i].has_id(&id)
                                || self.items[i].history().any(|h| h.equals(&id))
                        })
                        .collect()
                })
                .unwrap_or_default();
            let before = self.items.len();
            self.absorb(r, &matches, kfile)?;
            if self.items.len() > before {
                by_name.entry(id.name).or_default().push(before);
            }
        }
        Ok(())
    }

    /// Adds a generated resource according to its behavior; `matches` are the resources with its id.
    fn absorb(&mut self, mut r: Resource, matches: &[usize], kfile: &str) -> Result<()> {
        let id = r.id();
        let behavior = r.behavior.unwrap_or(Behavior::Create);
        match (matches, behavior) {
            ([], Behavior::Create) => {
                self.items.push(r);
                Ok(())
            }
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
