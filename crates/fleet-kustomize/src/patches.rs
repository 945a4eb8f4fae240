//! `patches`, `patchesStrategicMerge` and `patchesJson6902`: loading patches (inline or from files), choosing
//! their targets (by the patch's own id, or by a `target` selector) and applying them.

use serde_json::Value;

use crate::error::{Error, Result, Warning};
use crate::files::Files;
use crate::kustomization::{Patch, Selector};
use crate::resmap::ResMap;
use crate::resource::{Gvk, ResId, Resource};
use crate::selector;

/// A loaded patch.
enum Loaded {
    /// Strategic merge patches (one per document).
    Strategic(Vec<Value>),
    /// One JSON 6902 operation list.
    Json(Value),
}

/// Where a patch came from, for messages.
struct Source<'a> {
    kfile: &'a str,
    field: &'a str,
    name: String,
    allow_name_change: bool,
    allow_kind_change: bool,
}

impl Source<'_> {
    /// The error for a patch that could not be applied to `target`.
    fn failed(&self, target: &ResId, cause: impl std::fmt::Display) -> Error {
        Error::invalid(
            self.kfile,
            format!(
                "{}: applying {} to {}: {cause}",
                self.field,
                self.name,
                target.describe()
            ),
        )
    }
}

fn load(
    files: &impl Files,
    dir: &str,
    kfile: &str,
    field: &str,
    p: &Patch,
) -> Result<(Loaded, String)> {
    let (bytes, name) = match (&p.path, &p.patch) {
        (Some(path), None) => {
            let resolved = crate::root::resolve_in_root(dir, kfile, field, path)?;
            let bytes = files.read(&resolved).ok_or_else(|| Error::Missing {
                file: kfile.into(),
                field: field.into(),
                entry: path.clone(),
                resolved: resolved.clone(),
            })?;
            (bytes.into_owned(), resolved)
        }
        (None, Some(inline)) => (
            inline.as_bytes().to_vec(),
            format!("{kfile} ({field} inline patch)"),
        ),
        (Some(_), Some(_)) => {
            return Err(Error::invalid(
                kfile,
                format!("{field} entry has both `path` and `patch`; keep one"),
            ));
        }
        (None, None) => {
            return Err(Error::invalid(
                kfile,
                format!("{field} entry needs a `path` or a `patch`"),
            ));
        }
    };
    Ok((parse(&bytes, &name)?, name))
}

fn parse(bytes: &[u8], name: &str) -> Result<Loaded> {
    let docs = crate::yaml::documents(bytes, name)?;
    if let [Value::Array(_)] = docs.as_slice() {
        return Ok(Loaded::Json(docs.into_iter().next().unwrap_or(Value::Null)));
    }
    if docs.iter().any(|d| !d.is_object()) {
        return Err(Error::invalid(
            name,
            "a patch must be a strategic merge patch (a Kubernetes object) or a JSON 6902 list of operations",
        ));
    }
    Ok(Loaded::Strategic(docs))
}

fn patch_id(p: &Value) -> ResId {
    let s = |path: &[&str]| crate::resource::str_at(p, path).to_string();
    ResId {
        gvk: Gvk::new(&s(&["apiVersion"]), &s(&["kind"])),
        name: s(&["metadata", "name"]),
        namespace: s(&["metadata", "namespace"]),
    }
}

fn select(m: &ResMap, sel: &Selector, src: &Source) -> Result<Vec<usize>> {
    let compiled = selector::compile(sel)
        .map_err(|e| Error::invalid(src.kfile, format!("{}: target: {e}", src.field)))?;
    Ok(m.items
        .iter()
        .enumerate()
        .filter(|(_, r)| compiled.matches(r))
        .map(|(i, _)| i)
        .collect())
}

/// Applies one strategic merge patch; `true` when it deleted the resource. As kustomize does, the resource keeps
/// its name, kind and namespace unless the patch options allow a name or kind change.
fn apply_strategic(m: &mut ResMap, index: usize, patch: &Value, src: &Source) -> Result<bool> {
    let r = &m.items[index];
    let before = r.id();
    let kind = r.obj.get("kind").cloned();
    match crate::smp::apply(&r.obj, patch) {
        Ok(Some(obj)) => {
            let r = &mut m.items[index];
            r.obj = obj;
            if !src.allow_kind_change
                && let (Some(k), Value::Object(o)) = (kind, &mut r.obj)
            {
                o.insert("kind".into(), k);
            }
            let md = crate::resource::metadata_mut(&mut r.obj);
            if !src.allow_name_change {
                md.insert("name".into(), Value::String(before.name.clone()));
            }
            if before.namespace.is_empty() {
                md.shift_remove("namespace");
            } else {
                md.insert("namespace".into(), Value::String(before.namespace.clone()));
            }
            if r.id() != before {
                r.previous.push(before);
            }
            Ok(false)
        }
        Ok(None) => {
            m.items.remove(index);
            Ok(true)
        }
        Err(e) => Err(src.failed(&before, e)),
    }
}

fn apply_json(m: &mut ResMap, index: usize, ops: &Value, src: &Source) -> Result<()> {
    let r = &mut m.items[index];
    let before = r.id();
    fleet_yaml::patch::json_patch::apply(&mut r.obj, ops).map_err(|e| src.failed(&before, e))?;
    if r.name() != before.name {
        r.previous.push(before);
    }
    Ok(())
}

/// Applies a strategic merge patch to the resource with the patch's own id.
fn apply_by_own_id(m: &mut ResMap, patch: &Value, src: &Source) -> Result<()> {
    let id = patch_id(patch);
    match m.find_by_any_id(&id).as_slice() {
        [i] => apply_strategic(m, *i, patch, src).map(|_| ()),
        [] => Err(Error::invalid(
            src.kfile,
            format!(
                "{}: {} targets {}, which is not among the resources; check the patch's apiVersion, kind, \
                 metadata.name and metadata.namespace, or add a `target`",
                src.field,
                src.name,
                id.describe()
            ),
        )),
        _ => Err(Error::invalid(
            src.kfile,
            format!(
                "{}: {} matches several resources ({}); add a namespace",
                src.field,
                src.name,
                id.describe()
            ),
        )),
    }
}

/// A patch whose `target` selects nothing: an error when `strict`, else a warning (kubectl skips it silently).
fn no_match(src: &Source, sel: &Selector, strict: bool, warnings: &mut Vec<Warning>) -> Result<()> {
    let message = format!(
        "{}: the target of {} ({}) matches no resource; fix the target or remove the patch",
        src.field,
        src.name,
        describe_selector(sel)
    );
    if strict {
        return Err(Error::invalid(src.kfile, message));
    }
    warnings.push(Warning {
        file: src.kfile.to_string(),
        message: format!("{message} (skipped, as `kubectl kustomize` skips it)"),
    });
    Ok(())
}

/// A selector in words.
pub fn describe_selector(s: &Selector) -> String {
    let mut parts = Vec::new();
    for (k, v) in [
        ("group", &s.group),
        ("version", &s.version),
        ("kind", &s.kind),
        ("name", &s.name),
        ("namespace", &s.namespace),
        ("labelSelector", &s.label_selector),
        ("annotationSelector", &s.annotation_selector),
    ] {
        if !v.is_empty() {
            parts.push(format!("{k}={v}"));
        }
    }
    if parts.is_empty() {
        "everything".into()
    } else {
        parts.join(", ")
    }
}

/// Applies the `patches` (or, with `field == "patchesJson6902"`, the legacy JSON patches) of one kustomization.
///
/// A `target` that selects nothing is skipped with a warning, as `kubectl kustomize` skips it (silently), unless
/// `strict` is set, which makes it an error.
#[allow(clippy::too_many_arguments)]
pub fn apply_patches(
    m: &mut ResMap,
    files: &impl Files,
    dir: &str,
    kfile: &str,
    field: &str,
    patches: &[Patch],
    strict: bool,
    warnings: &mut Vec<Warning>,
) -> Result<()> {
    for p in patches {
        let (loaded, name) = load(files, dir, kfile, field, p)?;
        let src = Source {
            kfile,
            field,
            name,
            allow_name_change: p.options.get("allowNameChange").copied().unwrap_or(false),
            allow_kind_change: p.options.get("allowKindChange").copied().unwrap_or(false),
        };
        match (loaded, &p.target) {
            (Loaded::Json(ops), Some(target)) => {
                let hits = select(m, target, &src)?;
                if hits.is_empty() {
                    no_match(&src, target, strict, warnings)?;
                }
                for i in hits {
                    apply_json(m, i, &ops, &src)?;
                }
            }
            (Loaded::Json(_), None) => {
                return Err(Error::invalid(
                    kfile,
                    format!("{field}: JSON 6902 patch {} needs a `target`", src.name),
                ));
            }
            (Loaded::Strategic(docs), None) => {
                for d in &docs {
                    apply_by_own_id(m, d, &src)?;
                }
            }
            (Loaded::Strategic(docs), Some(target)) => {
                let hits = select(m, target, &src)?;
                if hits.is_empty() {
                    no_match(&src, target, strict, warnings)?;
                }
                // Apply from the end so that deletions keep earlier indices valid.
                for i in hits.into_iter().rev() {
                    for d in &docs {
                        let retargeted = retarget(d, &m.items[i]);
                        if apply_strategic(m, i, &retargeted, &src)? {
                            break;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// A copy of `patch` carrying the target's apiVersion, kind, name and namespace.
fn retarget(patch: &Value, target: &Resource) -> Value {
    let mut p = patch.clone();
    if let Value::Object(obj) = &mut p {
        for key in ["apiVersion", "kind"] {
            if let Some(v) = target.obj.get(key) {
                obj.insert(key.into(), v.clone());
            }
        }
        let md = crate::resource::metadata_mut(&mut p);
        md.insert("name".into(), Value::String(target.name().into()));
        if target.namespace().is_empty() {
            md.shift_remove("namespace");
        } else {
            md.insert("namespace".into(), Value::String(target.namespace().into()));
        }
    }
    p
}

/// Applies `patchesStrategicMerge`: each entry is a file or an inline patch.
pub fn apply_strategic_merge_list(
    m: &mut ResMap,
    files: &impl Files,
    dir: &str,
    kfile: &str,
    entries: &[String],
) -> Result<()> {
    let field = "patchesStrategicMerge";
    for entry in entries {
        let as_file = crate::files::join(dir, entry).filter(|p| files.read(p).is_some());
        let p = match as_file {
            Some(_) => Patch {
                path: Some(entry.clone()),
                ..Default::default()
            },
            None if entry.contains('\n') || entry.contains(": ") => Patch {
                patch: Some(entry.clone()),
                ..Default::default()
            },
            None => Patch {
                path: Some(entry.clone()),
                ..Default::default()
            },
        };
        let (loaded, name) = load(files, dir, kfile, field, &p)?;
        let src = Source {
            kfile,
            field,
            name,
            allow_name_change: false,
            allow_kind_change: false,
        };
        let Loaded::Strategic(docs) = loaded else {
            return Err(Error::invalid(
                kfile,
                format!(
                    "{field}: {} is a JSON 6902 patch; list it under `patches` with a target",
                    src.name
                ),
            ));
        };
        for d in &docs {
            apply_by_own_id(m, d, &src)?;
        }
    }
    Ok(())
}
