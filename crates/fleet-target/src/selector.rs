//! Kubernetes label selectors (`matchLabels` and `matchExpressions` with `In`, `NotIn`, `Exists`,
//! `DoesNotExist`): validation and matching against a label map, with Kubernetes' semantics
//! (`NotIn` and `DoesNotExist` match when the key is absent; an empty selector matches everything).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::TargetError;

/// Labels or annotations of an object, sorted by key.
pub type Labels = BTreeMap<String, String>;

/// A `metav1.LabelSelector`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelSelector {
    #[serde(
        default,
        deserialize_with = "crate::serde_util::null_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub match_labels: Labels,
    #[serde(
        default,
        deserialize_with = "crate::serde_util::null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

/// One `matchExpressions` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelSelectorRequirement {
    pub key: String,
    pub operator: SelectorOperator,
    #[serde(
        default,
        deserialize_with = "crate::serde_util::null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub values: Vec<String>,
}

/// Set-based selector operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SelectorOperator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

impl LabelSelector {
    /// A selector with only `matchLabels`.
    pub fn from_labels<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        LabelSelector {
            match_labels: pairs
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            match_expressions: Vec::new(),
        }
    }

    /// True when the selector has neither labels nor expressions (it then matches everything).
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }

    /// Checks the rules kube-apiserver enforces: `In`/`NotIn` need values, `Exists`/`DoesNotExist`
    /// must have none, keys are not empty. `field` names the selector in the error.
    pub fn validate(&self, field: &str) -> Result<(), TargetError> {
        for (i, req) in self.match_expressions.iter().enumerate() {
            let at = format!("{field}.matchExpressions[{i}]");
            if req.key.is_empty() {
                return Err(TargetError::invalid(at, "key must not be empty"));
            }
            match req.operator {
                SelectorOperator::In | SelectorOperator::NotIn if req.values.is_empty() => {
                    return Err(TargetError::invalid(
                        at,
                        format!("operator {:?} needs at least one value", req.operator),
                    ));
                }
                SelectorOperator::Exists | SelectorOperator::DoesNotExist
                    if !req.values.is_empty() =>
                {
                    return Err(TargetError::invalid(
                        at,
                        format!("operator {:?} takes no values", req.operator),
                    ));
                }
                _ => {}
            }
        }
        if self.match_labels.keys().any(String::is_empty) {
            return Err(TargetError::invalid(
                format!("{field}.matchLabels"),
                "key must not be empty",
            ));
        }
        Ok(())
    }

    /// Whether `labels` satisfy every requirement of the selector.
    pub fn matches(&self, labels: &Labels) -> bool {
        self.match_labels
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|r| r.matches(labels))
    }
}

impl LabelSelectorRequirement {
    /// Whether `labels` satisfy this one requirement.
    pub fn matches(&self, labels: &Labels) -> bool {
        let value = labels.get(&self.key);
        match self.operator {
            SelectorOperator::In => value.is_some_and(|v| self.values.contains(v)),
            SelectorOperator::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            SelectorOperator::Exists => value.is_some(),
            SelectorOperator::DoesNotExist => value.is_none(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn expr(key: &str, operator: SelectorOperator, values: &[&str]) -> LabelSelector {
        LabelSelector {
            match_labels: Labels::new(),
            match_expressions: vec![LabelSelectorRequirement {
                key: key.into(),
                operator,
                values: values.iter().map(|v| v.to_string()).collect(),
            }],
        }
    }

    #[test]
    fn selector_matching_table() {
        use SelectorOperator::*;
        let prod = labels(&[("env", "prod"), ("region", "east")]);
        let bare = labels(&[]);
        let cases = [
            ("empty matches all", LabelSelector::default(), &prod, true),
            (
                "empty matches no labels",
                LabelSelector::default(),
                &bare,
                true,
            ),
            (
                "matchLabels equal",
                LabelSelector::from_labels([("env", "prod")]),
                &prod,
                true,
            ),
            (
                "matchLabels differ",
                LabelSelector::from_labels([("env", "dev")]),
                &prod,
                false,
            ),
            (
                "matchLabels absent",
                LabelSelector::from_labels([("env", "prod")]),
                &bare,
                false,
            ),
            ("In hit", expr("env", In, &["dev", "prod"]), &prod, true),
            ("In miss", expr("env", In, &["dev"]), &prod, false),
            ("In absent", expr("env", In, &["prod"]), &bare, false),
            ("NotIn hit", expr("env", NotIn, &["prod"]), &prod, false),
            ("NotIn miss", expr("env", NotIn, &["dev"]), &prod, true),
            (
                "NotIn absent key matches",
                expr("env", NotIn, &["prod"]),
                &bare,
                true,
            ),
            ("Exists", expr("region", Exists, &[]), &prod, true),
            ("Exists absent", expr("zone", Exists, &[]), &prod, false),
            ("DoesNotExist", expr("zone", DoesNotExist, &[]), &prod, true),
            (
                "DoesNotExist present",
                expr("env", DoesNotExist, &[]),
                &prod,
                false,
            ),
        ];
        for (name, sel, l, want) in cases {
            assert_eq!(sel.matches(l), want, "{name}");
        }
    }

    #[test]
    fn validation_names_the_field() {
        let err = expr("env", SelectorOperator::In, &[])
            .validate("targets[0].clusterSelector")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "targets[0].clusterSelector.matchExpressions[0]: operator In needs at least one value"
        );
        let err = expr("env", SelectorOperator::Exists, &["x"])
            .validate("sel")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "sel.matchExpressions[0]: operator Exists takes no values"
        );
        assert!(
            expr("env", SelectorOperator::Exists, &[])
                .validate("sel")
                .is_ok()
        );
    }

    #[test]
    fn unknown_operator_is_a_deserialization_error() {
        let err = serde_json::from_value::<LabelSelector>(serde_json::json!({
            "matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]
        }))
        .unwrap_err();
        assert!(err.to_string().contains("unknown variant `Gt`"), "{err}");
    }
}
