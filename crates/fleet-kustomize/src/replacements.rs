//! `replacements`: copying a field of one resource (whole, or one delimited part) into fields of others.
//! Field paths are dot-separated; `[name=value]` picks list elements by a field, a number by index, `*` all.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::files::Files;
use crate::kustomization::{
    FieldOptions, ReplacementEntry, Selector, SourceSelector, TargetSelector,
};
use crate::resmap::ResMap;
use crate::selector;

/// Splits a field path on dots outside brackets.
fn split(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut cur, mut depth) = (String::new(), 0);
    for c in path.chars() {
        match c {
            '[' => {
                depth += 1;
                cur.push(c);
            }
            ']' => {
                depth -= 1;
                cur.push(c);
            }
            '.' if depth == 0 => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter().filter(|s| !s.is_empty()).collect()
}

enum Seg<'a> {
    Key(&'a str),
    Match(&'a str, &'a str),
    Index(usize),
    All,
}

fn seg(s: &str) -> Seg<'_> {
    if s == "*" || s == "[*]" {
        return Seg::All;
    }
    if let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        if let Some((k, v)) = inner.split_once('=') {
            return Seg::Match(k, v);
        }
        return Seg::Key(inner);
    }
    match s.parse::<usize>() {
        Ok(i) => Seg::Index(i),
        Err(_) => Seg::Key(s),
    }
}

/// Collects every node the path reaches.
fn lookup<'v>(v: &'v Value, path: &[String], out: &mut Vec<&'v Value>) {
    let Some((first, rest)) = path.split_first() else {
        out.push(v);
        return;
    };
    match (seg(first), v) {
        (Seg::Key(k), Value::Object(m)) => {
            if let Some(c) = m.get(k) {
                lookup(c, rest, out);
            }
        }
        (Seg::Match(k, val), Value::Array(items)) => {
            for i in items.iter().filter(|i| {
                i.get(k)
                    .is_some_and(|x| scalar_text(x).as_deref() == Some(val))
            }) {
                lookup(i, rest, out);
            }
        }
        (Seg::Index(i), Value::Array(items)) => {
            if let Some(c) = items.get(i) {
                lookup(c, rest, out);
            }
        }
        (Seg::All, Value::Array(items)) => items.iter().for_each(|c| lookup(c, rest, out)),
        (Seg::All, Value::Object(m)) => m.values().for_each(|c| lookup(c, rest, out)),
        _ => {}
    }
}

/// Sets every node the path reaches with `f`, creating missing mapping fields (and `[k=v]` elements) if `create`.
fn set(v: &mut Value, path: &[String], create: bool, f: &mut dyn FnMut(&mut Value)) -> usize {
    let Some((first, rest)) = path.split_first() else {
        f(v);
        return 1;
    };
    if v.is_null() && create {
        *v = match seg(first) {
            Seg::Key(_) => Value::Object(Map::new()),
            _ => Value::Array(Vec::new()),
        };
    }
    let mut n = 0;
    match (seg(first), v) {
        (Seg::Key(k), Value::Object(m)) => {
            if let Some(c) = m.get_mut(k) {
                n += set(c, rest, create, f);
            } else if create {
                let c = m.entry(k.to_string()).or_insert(Value::Null);
                n += set(c, rest, create, f);
            }
        }
        (Seg::Match(k, val), Value::Array(items)) => {
            for i in items.iter_mut().filter(|i| {
                i.get(k)
                    .is_some_and(|x| scalar_text(x).as_deref() == Some(val))
            }) {
                n += set(i, rest, create, f);
            }
            if n == 0 && create {
                let mut m = Map::new();
                m.insert(k.to_string(), Value::String(val.to_string()));
                items.push(Value::Object(m));
                if let Some(last) = items.last_mut() {
                    n += set(last, rest, create, f);
                }
            }
        }
        (Seg::Index(i), Value::Array(items)) => {
            if let Some(c) = items.get_mut(i) {
                n += set(c, rest, create, f);
            }
        }
        (Seg::All, Value::Array(items)) => {
            for c in items.iter_mut() {
                n += set(c, rest, create, f);
            }
        }
        (Seg::All, Value::Object(m)) => {
            for c in m.values_mut() {
                n += set(c, rest, create, f);
            }
        }
        _ => {}
    }
    n
}

/// A scalar as text (strings as is, numbers and booleans printed).
fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A scalar target keeps its own type and takes the source's text (kustomize copies only the text); a new or
/// null target reads the text as a plain YAML scalar (`1` becomes a number, `true` a boolean).
fn typed_like(target: &Value, text: String) -> Value {
    let plain = || {
        fleet_yaml::parse::from_str_with::<Value>(
            &fleet_yaml::parse::Options::kustomize(),
            &text,
            "replacement",
        )
        .ok()
        .filter(|v| matches!(v, Value::Number(_) | Value::Bool(_)))
    };
    match target {
        Value::String(_) => Value::String(text),
        Value::Number(_) | Value::Bool(_) => plain().unwrap_or(Value::String(text)),
        Value::Null => plain().unwrap_or_else(|| {
            if text == "null" || text == "~" {
                Value::Null
            } else {
                Value::String(text)
            }
        }),
        _ => Value::String(text),
    }
}

/// `options.index` names no part of the source value split by `options.delimiter`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("options.index {index} is out of bounds for the source value split by {delimiter:?}")]
struct NoSuchPart {
    index: i64,
    delimiter: String,
}

fn part(text: &str, opts: &FieldOptions) -> std::result::Result<String, NoSuchPart> {
    if opts.delimiter.is_empty() {
        return Ok(text.to_string());
    }
    let parts: Vec<&str> = text.split(opts.delimiter.as_str()).collect();
    usize::try_from(opts.index)
        .ok()
        .and_then(|i| parts.get(i))
        .map(|s| s.to_string())
        .ok_or_else(|| NoSuchPart {
            index: opts.index,
            delimiter: opts.delimiter.clone(),
        })
}

fn splice(target: &str, value: &str, opts: &FieldOptions) -> String {
    let mut parts: Vec<String> = target
        .split(opts.delimiter.as_str())
        .map(str::to_string)
        .collect();
    match usize::try_from(opts.index) {
        Ok(i) if i < parts.len() => parts[i] = value.to_string(),
        Ok(_) => parts.push(value.to_string()),
        Err(_) => parts.insert(0, value.to_string()),
    }
    parts.join(&opts.delimiter)
}

fn source_selector(s: &SourceSelector) -> Selector {
    Selector {
        group: s.group.clone(),
        version: s.version.clone(),
        kind: s.kind.clone(),
        name: regex::escape(&s.name),
        namespace: regex::escape(&s.namespace),
        ..Default::default()
    }
}

fn source_value(m: &ResMap, src: &SourceSelector, kfile: &str) -> Result<Value> {
    let sel = source_selector(src);
    let compiled = selector::compile(&sel)
        .map_err(|e| Error::invalid(kfile, format!("replacements: source: {e}")))?;
    let hits: Vec<_> = m.items.iter().filter(|r| compiled.matches(r)).collect();
    let r = match hits.as_slice() {
        [one] => *one,
        [] => {
            return Err(Error::invalid(
                kfile,
                format!(
                    "replacements: the source ({}) matches no resource; fix the source selector",
                    crate::patches::describe_selector(&sel)
                ),
            ));
        }
        _ => {
            return Err(Error::invalid(
                kfile,
                format!(
                    "replacements: the source ({}) matches {} resources; it must select exactly one",
                    crate::patches::describe_selector(&sel),
                    hits.len()
                ),
            ));
        }
    };
    let path = if src.field_path.is_empty() {
        "metadata.name"
    } else {
        &src.field_path
    };
    let mut found = Vec::new();
    lookup(&r.obj, &split(path), &mut found);
    let Some(v) = found.first() else {
        return Err(Error::invalid(
            kfile,
            format!(
                "replacements: field {path} not found in source {}",
                r.id().describe()
            ),
        ));
    };
    match (&src.options, scalar_text(v)) {
        (Some(opts), Some(text)) if !opts.delimiter.is_empty() => part(&text, opts)
            .map(Value::String)
            .map_err(|e| Error::invalid(kfile, format!("replacements: {e}"))),
        _ => Ok((*v).clone()),
    }
}

fn apply_target(m: &mut ResMap, t: &TargetSelector, value: &Value, kfile: &str) -> Result<()> {
    let select = t.select.clone().unwrap_or_default();
    let compiled = selector::compile(&select)
        .map_err(|e| Error::invalid(kfile, format!("replacements: select: {e}")))?;
    let rejects = t
        .reject
        .iter()
        .map(selector::compile)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::invalid(kfile, format!("replacements: reject: {e}")))?;
    let opts = t.options.clone().unwrap_or_default();
    for r in m.items.iter_mut() {
        if !compiled.matches(r) || rejects.iter().any(|c| c.matches(r)) {
            continue;
        }
        let id = r.id();
        for fp in &t.field_paths {
            let mut f = |node: &mut Value| {
                let Some(text) = scalar_text(value) else {
                    *node = value.clone();
                    return;
                };
                let text = if opts.delimiter.is_empty() {
                    text
                } else {
                    splice(&scalar_text(node).unwrap_or_default(), &text, &opts)
                };
                *node = typed_like(node, text);
            };
            let n = set(&mut r.obj, &split(fp), opts.create, &mut f);
            if n == 0 && !opts.create {
                return Err(Error::invalid(
                    kfile,
                    format!(
                        "replacements: target {} has no field {fp}; fix the fieldPath or set options.create: true",
                        id.describe()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Runs the replacements of one kustomization; `path` entries are files holding a list of replacements.
pub fn apply(
    m: &mut ResMap,
    files: &impl Files,
    dir: &str,
    kfile: &str,
    entries: &[ReplacementEntry],
) -> Result<()> {
    let mut all: Vec<ReplacementEntry> = Vec::new();
    for e in entries {
        if let Some(path) = &e.path {
            let resolved = crate::root::resolve_in_root(dir, kfile, "replacements", path)?;
            let bytes = files.read(&resolved).ok_or_else(|| Error::Missing {
                file: kfile.into(),
                field: "replacements".into(),
                entry: path.clone(),
                resolved: resolved.clone(),
            })?;
            for doc in crate::yaml::documents(&bytes, &resolved)? {
                let list: Vec<ReplacementEntry> = match doc {
                    Value::Array(_) => serde_json::from_value(doc),
                    other => serde_json::from_value(other).map(|e| vec![e]),
                }
                .map_err(|e| Error::invalid(&resolved, format!("invalid replacement: {e}")))?;
                all.extend(list);
            }
        } else {
            all.push(e.clone());
        }
    }
    for e in &all {
        let Some(src) = &e.source else {
            return Err(Error::invalid(
                kfile,
                "replacements entry without a `source` or `path`",
            ));
        };
        let value = source_value(m, src, kfile)?;
        for t in &e.targets {
            apply_target(m, t, &value, kfile)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_with_selectors() {
        let v = json!({"spec":{"containers":[{"name":"a","image":"x"},{"name":"b","image":"y"}]}});
        let mut out = Vec::new();
        lookup(&v, &split("spec.containers.[name=b].image"), &mut out);
        assert_eq!(out, vec![&json!("y")]);
        assert_eq!(
            split("metadata.annotations.[a.b/c]"),
            ["metadata", "annotations", "[a.b/c]"]
        );
        let o = FieldOptions {
            delimiter: ":".into(),
            index: 1,
            ..Default::default()
        };
        assert_eq!(splice("nginx:1", "2", &o), "nginx:2");
        assert_eq!(part("a:b", &o).unwrap(), "b");
    }
}
