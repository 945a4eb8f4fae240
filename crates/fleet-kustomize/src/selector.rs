//! Choosing resources: kustomize's `Selector` (group/version/kind/name/namespace as anchored regular expressions,
//! plus Kubernetes label and annotation selector expressions).

use regex::Regex;
use serde_json::{Map, Value};

use crate::kustomization::Selector;
use crate::resource::Resource;

/// A compiled selector.
#[derive(Debug)]
pub struct Compiled {
    group: String,
    version: String,
    kind: String,
    name: Option<Regex>,
    namespace: Option<Regex>,
    labels: Vec<Requirement>,
    annotations: Vec<Requirement>,
}

/// Which part of a selector is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// `name` or `namespace` is not a regular expression.
    #[error("invalid {field} regular expression {pattern:?}: {message}")]
    Regex {
        field: &'static str,
        pattern: String,
        message: String,
    },
    /// `labelSelector` or `annotationSelector` does not parse.
    #[error("invalid {field}: {problem}")]
    Requirements {
        field: &'static str,
        problem: RequirementError,
    },
}

/// Why one requirement of a label or annotation selector does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequirementError {
    #[error("empty requirement")]
    Empty,
    #[error("expected `(values)` in {requirement:?}")]
    NoValues { requirement: String },
    #[error("cannot parse {requirement:?}")]
    Unparsable { requirement: String },
}

/// Compiles a selector; the error says which part is malformed.
pub fn compile(sel: &Selector) -> Result<Compiled, SelectorError> {
    let anchored = |s: &str, field: &'static str| -> Result<Option<Regex>, SelectorError> {
        if s.is_empty() {
            return Ok(None);
        }
        Regex::new(&format!("^(?:{s})$"))
            .map(Some)
            .map_err(|e| SelectorError::Regex {
                field,
                pattern: s.to_string(),
                message: e.to_string(),
            })
    };
    let requirements = |s: &str, field: &'static str| {
        parse_requirements(s).map_err(|problem| SelectorError::Requirements { field, problem })
    };
    Ok(Compiled {
        group: sel.group.clone(),
        version: sel.version.clone(),
        kind: sel.kind.clone(),
        name: anchored(&sel.name, "name")?,
        namespace: anchored(&sel.namespace, "namespace")?,
        labels: requirements(&sel.label_selector, "labelSelector")?,
        annotations: requirements(&sel.annotation_selector, "annotationSelector")?,
    })
}

impl Compiled {
    /// Whether `r` is selected: names and namespaces match the original or the current id.
    pub fn matches(&self, r: &Resource) -> bool {
        let cur = r.id();
        if let Some(ns) = &self.namespace
            && !ns.is_match(r.original.effective_namespace())
            && !ns.is_match(cur.effective_namespace())
        {
            return false;
        }
        if let Some(name) = &self.name
            && !name.is_match(&r.original.name)
            && !name.is_match(&cur.name)
        {
            return false;
        }
        if !cur.gvk.selected_by(&self.group, &self.version, &self.kind) {
            return false;
        }
        matches_all(&self.labels, &r.labels()) && matches_all(&self.annotations, &r.annotations())
    }
}

#[derive(Debug)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

fn matches_all(reqs: &[Requirement], map: &Map<String, Value>) -> bool {
    let get = |k: &str| map.get(k).and_then(Value::as_str);
    reqs.iter().all(|r| match r {
        Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
        Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
        Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
        Requirement::NotIn(k, vs) => get(k).is_none_or(|x| vs.iter().all(|v| v != x)),
        Requirement::Exists(k) => map.contains_key(k),
        Requirement::NotExists(k) => !map.contains_key(k),
    })
}

/// Splits on commas that are not inside parentheses.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn parse_requirements(s: &str) -> Result<Vec<Requirement>, RequirementError> {
    if s.trim().is_empty() {
        return Ok(Vec::new());
    }
    split_top(s).into_iter().map(parse_requirement).collect()
}

fn parse_set(rest: &str, whole: &str) -> Result<Vec<String>, RequirementError> {
    let inner = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| RequirementError::NoValues {
            requirement: whole.to_string(),
        })?;
    Ok(inner
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect())
}

fn parse_requirement(part: &str) -> Result<Requirement, RequirementError> {
    let p = part.trim();
    if p.is_empty() {
        return Err(RequirementError::Empty);
    }
    if let Some(k) = p.strip_prefix('!') {
        return Ok(Requirement::NotExists(k.trim().to_string()));
    }
    if let Some((k, v)) = p.split_once("!=") {
        return Ok(Requirement::NotEquals(k.trim().into(), v.trim().into()));
    }
    if let Some((k, v)) = p.split_once("==").or_else(|| p.split_once('=')) {
        return Ok(Requirement::Equals(k.trim().into(), v.trim().into()));
    }
    let mut words = p.splitn(2, char::is_whitespace);
    let key = words.next().unwrap_or_default().to_string();
    let rest = words.next().unwrap_or_default().trim();
    if let Some(set) = rest.strip_prefix("notin") {
        return Ok(Requirement::NotIn(key, parse_set(set, p)?));
    }
    if let Some(set) = rest.strip_prefix("in") {
        return Ok(Requirement::In(key, parse_set(set, p)?));
    }
    if rest.is_empty() {
        return Ok(Requirement::Exists(key));
    }
    Err(RequirementError::Unparsable {
        requirement: p.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn res(v: Value) -> Resource {
        Resource::new(v, "t")
    }

    #[test]
    fn regex_names_and_label_expressions() {
        let r = res(json!({"apiVersion":"apps/v1","kind":"Deployment",
            "metadata":{"name":"web-1","labels":{"tier":"front","env":"prod"}}}));
        let sel = |s: Selector| compile(&s).unwrap().matches(&r);
        assert!(sel(Selector {
            name: "web-.*".into(),
            ..Default::default()
        }));
        assert!(!sel(Selector {
            name: "web".into(),
            ..Default::default()
        }));
        assert!(sel(Selector {
            kind: "Deployment".into(),
            group: "apps".into(),
            ..Default::default()
        }));
        assert!(!sel(Selector {
            group: "batch".into(),
            ..Default::default()
        }));
        assert!(sel(Selector {
            label_selector: "tier=front,env in (prod, dev)".into(),
            ..Default::default()
        }));
        assert!(!sel(Selector {
            label_selector: "tier!=front".into(),
            ..Default::default()
        }));
        assert!(sel(Selector {
            label_selector: "!missing,env".into(),
            ..Default::default()
        }));
        assert!(sel(Selector {
            namespace: "default".into(),
            ..Default::default()
        }));
        assert!(
            compile(&Selector {
                name: "(".into(),
                ..Default::default()
            })
            .is_err()
        );
    }

    #[test]
    fn a_malformed_selector_names_the_part_at_fault() {
        let err = compile(&Selector {
            label_selector: "env in prod".into(),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(
            err,
            SelectorError::Requirements {
                field: "labelSelector",
                problem: RequirementError::NoValues {
                    requirement: "env in prod".into()
                }
            }
        );
        assert_eq!(
            err.to_string(),
            "invalid labelSelector: expected `(values)` in \"env in prod\""
        );
        let err = compile(&Selector {
            name: "(".into(),
            ..Default::default()
        })
        .unwrap_err();
        assert!(
            matches!(err, SelectorError::Regex { field: "name", .. }),
            "{err}"
        );
    }
}
