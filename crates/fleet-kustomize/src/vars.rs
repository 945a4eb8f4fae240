//! `vars` (deprecated in kustomize, still common): `$(NAME)` in the fields listed by `varReference` is replaced by
//! a field of another resource, after names are final. `$$` escapes a `$`; unknown names are left as written.

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::fieldspec::{FieldSpec, visit};
use crate::resource::{Gvk, Resource};

/// One entry of `vars`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Var {
    pub name: String,
    pub objref: ObjRef,
    #[serde(default)]
    pub fieldref: FieldRef,
}

/// The resource a var reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct ObjRef {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub kind: String,
    pub name: String,
    #[serde(default)]
    pub namespace: String,
}

/// The field a var reads (default `metadata.name`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct FieldRef {
    #[serde(default)]
    pub fieldpath: String,
}

/// A var with the file that declared it.
#[derive(Debug, Clone)]
pub struct Declared {
    /// The var.
    pub var: Var,
    /// The kustomization file declaring it.
    pub file: String,
}

/// Parses a kustomization's `vars`.
pub fn parse(raw: &[Value], file: &str) -> Result<Vec<Declared>> {
    raw.iter()
        .map(|v| {
            serde_json::from_value::<Var>(v.clone())
                .map(|var| Declared {
                    var,
                    file: file.to_string(),
                })
                .map_err(|e| Error::invalid(file, format!("invalid var: {e}")))
        })
        .collect()
}

/// Adds `more` to `all`; a name declared twice is an error.
pub fn merge(all: &mut Vec<Declared>, more: Vec<Declared>) -> Result<()> {
    for d in more {
        if let Some(prev) = all.iter().find(|x| x.var.name == d.var.name) {
            return Err(Error::invalid(
                &d.file,
                format!(
                    "var {:?} is already declared in {}; var names must be unique",
                    d.var.name, prev.file
                ),
            ));
        }
        all.push(d);
    }
    Ok(())
}

/// Splits `a.b[0].c` into `a`, `b`, `0`, `c`.
fn field_path(path: &str) -> Vec<String> {
    path.replace('[', ".")
        .replace(']', "")
        .split('.')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn lookup<'v>(v: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter().try_fold(v, |cur, seg| match cur {
        Value::Object(m) => m.get(seg),
        Value::Array(items) => seg.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

fn value_of(d: &Declared, resources: &[Resource]) -> Result<Value> {
    let o = &d.var.objref;
    let gvk = if o.api_version.is_empty() {
        Gvk {
            group: o.group.clone(),
            version: o.version.clone(),
            kind: o.kind.clone(),
        }
    } else {
        Gvk::new(&o.api_version, &o.kind)
    };
    let hits: Vec<&Resource> = resources
        .iter()
        .filter(|r| {
            std::iter::once(r.id())
                .chain(r.history().cloned())
                .any(|id| {
                    id.gvk.selected_by(&gvk.group, &gvk.version, &gvk.kind)
                        && id.name == o.name
                        && (o.namespace.is_empty() || id.namespace == o.namespace)
                })
        })
        .collect();
    let r = match hits.as_slice() {
        [one] => *one,
        [] => {
            return Err(Error::invalid(
                &d.file,
                format!(
                    "var {:?} refers to {} {:?}, which is not among the resources",
                    d.var.name, o.kind, o.name
                ),
            ));
        }
        _ => {
            return Err(Error::invalid(
                &d.file,
                format!(
                    "var {:?} matches {} resources; add apiVersion or namespace to its objref",
                    d.var.name,
                    hits.len()
                ),
            ));
        }
    };
    let path = if d.var.fieldref.fieldpath.is_empty() {
        "metadata.name"
    } else {
        &d.var.fieldref.fieldpath
    };
    lookup(&r.obj, &field_path(path)).cloned().ok_or_else(|| {
        Error::invalid(
            &d.file,
            format!(
                "var {:?}: {} has no field {path}",
                d.var.name,
                r.id().describe()
            ),
        )
    })
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Expands `$(NAME)` in `s`; `None` when nothing changed.
fn expand(s: &str, values: &[(String, Value)]) -> Option<Value> {
    if !s.contains('$') {
        return None;
    }
    if let Some(name) = s.strip_prefix("$(").and_then(|r| r.strip_suffix(')'))
        && let Some((_, v)) = values.iter().find(|(n, _)| n == name)
    {
        return Some(v.clone());
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(inner) = after.strip_prefix('(')
            && let Some(end) = inner.find(')')
            && let Some((_, v)) = values.iter().find(|(n, _)| *n == inner[..end])
        {
            out.push_str(&text(v));
            rest = &inner[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    (out != s).then_some(Value::String(out))
}

fn expand_value(v: &mut Value, values: &[(String, Value)]) {
    match v {
        Value::String(s) => {
            if let Some(new) = expand(s, values) {
                *v = new;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| expand_value(i, values)),
        Value::Object(m) => m.values_mut().for_each(|i| expand_value(i, values)),
        _ => {}
    }
}

/// Resolves every var and expands references in the `varReference` fields.
pub fn resolve(resources: &mut [Resource], vars: &[Declared], specs: &[FieldSpec]) -> Result<()> {
    if vars.is_empty() {
        return Ok(());
    }
    let values = vars
        .iter()
        .map(|d| value_of(d, resources).map(|v| (d.var.name.clone(), v)))
        .collect::<Result<Vec<_>>>()?;
    for r in resources.iter_mut() {
        let gvk = r.gvk();
        for fs in specs.iter().filter(|fs| fs.applies_to(&gvk)) {
            let _ = visit::<()>(&mut r.obj, &fs.path, false, &mut |v| {
                expand_value(v, &values);
                Ok(())
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn expansion_follows_kubernetes_rules() {
        let values = vec![
            ("SVC".to_string(), json!("web")),
            ("PORT".to_string(), json!(80)),
        ];
        assert_eq!(
            expand("http://$(SVC):$(PORT)/", &values),
            Some(json!("http://web:80/"))
        );
        assert_eq!(expand("$(PORT)", &values), Some(json!(80)));
        assert_eq!(expand("$$(SVC)", &values), Some(json!("$(SVC)")));
        assert_eq!(expand("$(UNKNOWN)", &values), None);
        assert_eq!(expand("plain", &values), None);
        assert_eq!(
            field_path("spec.ports[0].port"),
            ["spec", "ports", "0", "port"]
        );
    }
}
