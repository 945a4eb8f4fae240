//! Fixing name references after renames (prefix/suffix, namespace, hash suffixes, patches): every field that
//! refers to a ConfigMap, Secret, ServiceAccount, Service, PVC, Role… by its old name is pointed at the new name,
//! choosing the referred-to resource by its previous names and namespace, as kustomize's nameReference does.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::fieldspec::{NameReference, TransformerConfig, visit};
use crate::resource::{ResId, Resource};

/// The referred-to candidates of one table row: resources of the row's kind that were renamed, looked up by each
/// of their previous names.
struct Candidates {
    list: Vec<Candidate>,
    by_previous_name: HashMap<String, Vec<usize>>,
}

struct Candidate {
    current: ResId,
}

fn candidates(resources: &[Resource], row: &NameReference) -> Candidates {
    let mut out = Candidates {
        list: Vec::new(),
        by_previous_name: HashMap::new(),
    };
    for r in resources.iter().filter(|r| {
        !r.previous.is_empty() && r.gvk().selected_by(&row.group, &row.version, &row.kind)
    }) {
        let i = out.list.len();
        for p in &r.previous {
            let slot = out.by_previous_name.entry(p.name.clone()).or_default();
            if slot.last() != Some(&i) {
                slot.push(i);
            }
        }
        out.list.push(Candidate { current: r.id() });
    }
    out
}

/// A reference that more than one renamed resource could satisfy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the reference to {name:?} is ambiguous: it could be any of {}", candidates.join(", "))]
pub struct Ambiguous {
    /// The name as the reference wrote it.
    pub name: String,
    /// The resources it could mean, described.
    pub candidates: Vec<String>,
}

/// The new name (and namespace) for a reference to `old_name` (in `old_ns` when the reference says so) from a
/// referrer whose id is `referrer`.
fn choose<'c>(
    cands: &'c Candidates,
    old_name: &str,
    old_ns: Option<&str>,
    referrer: &ResId,
) -> std::result::Result<Option<&'c ResId>, Ambiguous> {
    let Some(named) = cands.by_previous_name.get(old_name) else {
        return Ok(None);
    };
    // A reference that names its namespace (a RoleBinding subject, a webhook service) only matches resources
    // currently in that namespace; one that does not must share the referrer's namespace.
    let picked: Vec<&Candidate> = named
        .iter()
        .map(|&i| &cands.list[i])
        .filter(|c| match old_ns {
            Some(ns) => c.current.namespace == ns,
            None => {
                referrer.gvk.is_cluster_scoped()
                    || c.current.gvk.is_cluster_scoped()
                    || referrer.ns_equals(&c.current)
            }
        })
        .collect();
    match picked.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(&one.current)),
        [first, rest @ ..] if rest.iter().all(|c| c.current.name == first.current.name) => {
            Ok(Some(&first.current))
        }
        many => Err(Ambiguous {
            name: old_name.to_string(),
            candidates: many.iter().map(|c| c.current.describe()).collect(),
        }),
    }
}

fn fix_value(
    v: &mut Value,
    cands: &Candidates,
    referrer: &ResId,
) -> std::result::Result<(), Ambiguous> {
    match v {
        Value::String(s) => {
            if let Some(new) = choose(cands, s, None, referrer)? {
                *s = new.name.clone();
            }
        }
        Value::Array(items) => {
            for item in items {
                fix_value(item, cands, referrer)?;
            }
        }
        Value::Object(map) => fix_object(map, cands, referrer)?,
        _ => {}
    }
    Ok(())
}

/// A `{name, namespace}` reference (RoleBinding subjects, webhook services…). Like kustomize, the subject's
/// `kind` is not consulted, and the namespace is written whenever the reference is rewritten.
fn fix_object(
    map: &mut Map<String, Value>,
    cands: &Candidates,
    referrer: &ResId,
) -> std::result::Result<(), Ambiguous> {
    let Some(name) = map.get("name").and_then(Value::as_str).map(str::to_string) else {
        return Ok(());
    };
    let ns = map
        .get("namespace")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(new) = choose(cands, &name, ns.as_deref(), referrer)? {
        map.insert("name".into(), Value::String(new.name.clone()));
        if !new.namespace.is_empty() {
            map.insert("namespace".into(), Value::String(new.namespace.clone()));
        }
    }
    Ok(())
}

/// Points every configured reference at the current name of what it refers to.
pub fn fix(resources: &mut [Resource], cfg: &TransformerConfig) -> Result<()> {
    for row in &cfg.name_reference {
        let cands = candidates(resources, row);
        if cands.list.is_empty() {
            continue;
        }
        for r in resources.iter_mut() {
            let gvk = r.gvk();
            let referrer = r.id();
            for fs in row.field_specs.iter().filter(|fs| fs.applies_to(&gvk)) {
                visit(&mut r.obj, &fs.path, false, &mut |v| {
                    fix_value(v, &cands, &referrer)
                })
                .map_err(|e| {
                    Error::invalid(
                        &r.origin,
                        format!("{}: {}: {e}", referrer.describe(), fs.path.join(".")),
                    )
                })?;
            }
        }
    }
    Ok(())
}
