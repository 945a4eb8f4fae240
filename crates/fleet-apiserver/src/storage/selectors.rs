//! Label selectors (equality- and set-based: `a=b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`) and
//! field selectors (`metadata.name`, `metadata.namespace` and other dotted paths, `=`, `==`, `!=`).

use serde_json::Value;

use crate::error::ApiError;
use crate::storage::object;

#[derive(Debug, Clone, PartialEq)]
enum Op {
    Eq(String),
    NotEq(String),
    In(Vec<String>),
    NotIn(Vec<String>),
    Exists,
    NotExists,
}

#[derive(Debug, Clone, PartialEq)]
struct Requirement {
    key: String,
    op: Op,
}

/// A parsed label selector; empty matches everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

impl LabelSelector {
    pub fn parse(text: &str) -> Result<Self, ApiError> {
        let mut requirements = Vec::new();
        for clause in split_top_level(text) {
            let clause = clause.trim();
            if clause.is_empty() {
                continue;
            }
            requirements.push(parse_requirement(clause).ok_or_else(|| {
                ApiError::bad_request(format!(
                    "unable to parse requirement: invalid label selector: {clause:?}"
                ))
            })?);
        }
        Ok(LabelSelector { requirements })
    }

    /// A `metav1.LabelSelector` object (`matchLabels`, `matchExpressions`).
    pub fn from_json(selector: &Value) -> Result<Self, ApiError> {
        let invalid = || ApiError::bad_request(format!("invalid label selector: {selector}"));
        let mut requirements = Vec::new();
        for (key, value) in selector
            .get("matchLabels")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let value = value.as_str().ok_or_else(invalid)?;
            requirements.push(Requirement {
                key: key.clone(),
                op: Op::Eq(value.to_string()),
            });
        }
        for expr in selector
            .get("matchExpressions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = expr
                .get("key")
                .and_then(Value::as_str)
                .ok_or_else(invalid)?;
            let values: Vec<String> = expr
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect();
            let op = match expr.get("operator").and_then(Value::as_str) {
                Some("In") => Op::In(values),
                Some("NotIn") => Op::NotIn(values),
                Some("Exists") => Op::Exists,
                Some("DoesNotExist") => Op::NotExists,
                _ => return Err(invalid()),
            };
            requirements.push(Requirement {
                key: key.to_string(),
                op,
            });
        }
        Ok(LabelSelector { requirements })
    }

    pub fn matches(&self, obj: &Value) -> bool {
        let labels = object::labels(obj);
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.requirements.iter().all(|r| match &r.op {
            Op::Eq(v) => get(&r.key) == Some(v.as_str()),
            Op::NotEq(v) => get(&r.key) != Some(v.as_str()),
            Op::In(vs) => get(&r.key).is_some_and(|x| vs.iter().any(|v| v == x)),
            Op::NotIn(vs) => get(&r.key).is_none_or(|x| !vs.iter().any(|v| v == x)),
            Op::Exists => get(&r.key).is_some(),
            Op::NotExists => get(&r.key).is_none(),
        })
    }
}

/// Splits on commas outside parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
}

fn parse_set(text: &str) -> Option<Vec<String>> {
    let inner = text.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(
        inner
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect(),
    )
}

fn parse_requirement(clause: &str) -> Option<Requirement> {
    if let Some(key) = clause.strip_prefix('!') {
        let key = key.trim();
        return valid_key(key).then(|| Requirement {
            key: key.into(),
            op: Op::NotExists,
        });
    }
    for (sep, notin) in [(" notin ", true), (" in ", false)] {
        if let Some((key, set)) = clause.split_once(sep) {
            let key = key.trim();
            let values = parse_set(set)?;
            let op = if notin {
                Op::NotIn(values)
            } else {
                Op::In(values)
            };
            return valid_key(key).then(|| Requirement {
                key: key.into(),
                op,
            });
        }
    }
    let (key, op) = if let Some((k, v)) = clause.split_once("!=") {
        (k, Op::NotEq(v.trim().into()))
    } else if let Some((k, v)) = clause.split_once("==") {
        (k, Op::Eq(v.trim().into()))
    } else if let Some((k, v)) = clause.split_once('=') {
        (k, Op::Eq(v.trim().into()))
    } else {
        (clause, Op::Exists)
    };
    let key = key.trim();
    valid_key(key).then(|| Requirement {
        key: key.into(),
        op,
    })
}

/// A parsed field selector; empty matches everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector {
    terms: Vec<(String, bool, String)>,
}

impl FieldSelector {
    pub fn parse(text: &str) -> Result<Self, ApiError> {
        let mut terms = Vec::new();
        for clause in text.split(',').map(str::trim).filter(|c| !c.is_empty()) {
            let (field, equal, value) = if let Some((f, v)) = clause.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = clause.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = clause.split_once('=') {
                (f, true, v)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{text}'; can't understand '{clause}'"
                )));
            };
            terms.push((field.trim().to_string(), equal, value.trim().to_string()));
        }
        Ok(FieldSelector { terms })
    }

    pub fn matches(&self, obj: &Value) -> bool {
        self.terms.iter().all(|(field, equal, value)| {
            let actual = match object::field_at(obj, field) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            (actual == *value) == *equal
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(labels: Value) -> Value {
        json!({"metadata": {"name": "a", "namespace": "ns", "labels": labels}})
    }

    #[test]
    fn equality_and_set_based() {
        let o = obj(json!({"app": "web", "tier": "front"}));
        for (sel, expected) in [
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app in (web, db)", true),
            ("app notin (web)", false),
            ("tier,app=web", true),
            ("!tier", false),
            ("missing", false),
            ("!missing", true),
            ("app in (db),tier", false),
            ("", true),
        ] {
            assert_eq!(
                LabelSelector::parse(sel).unwrap().matches(&o),
                expected,
                "{sel}"
            );
        }
    }

    #[test]
    fn rejects_garbage() {
        assert_eq!(LabelSelector::parse("a in b").unwrap_err().code, 400);
        assert_eq!(FieldSelector::parse("metadata.name").unwrap_err().code, 400);
    }

    #[test]
    fn field_selectors() {
        let o = obj(json!({}));
        assert!(
            FieldSelector::parse("metadata.name=a,metadata.namespace==ns")
                .unwrap()
                .matches(&o)
        );
        assert!(
            !FieldSelector::parse("metadata.name!=a")
                .unwrap()
                .matches(&o)
        );
    }
}
