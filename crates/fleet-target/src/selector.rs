//! Label selector matching, the one implementation every crate uses: Kubernetes' semantics for
//! fleet-api's [`LabelSelector`] (`matchLabels` and `matchExpressions` with `In`, `NotIn`, `Exists`,
//! `DoesNotExist`; `NotIn` and `DoesNotExist` match when the key is absent; an empty selector
//! matches everything) and the validation kube-apiserver applies to it.

use std::collections::BTreeMap;
use std::str::FromStr;

pub use fleet_api::{LabelSelector, LabelSelectorRequirement};

use crate::error::TargetError;

/// Labels or annotations of an object, sorted by key.
pub type Labels = BTreeMap<String, String>;

/// Set-based selector operators (fleet-api keeps the operator as the string written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelectorOperator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

/// A `matchExpressions` operator that is none of `In`, `NotIn`, `Exists`, `DoesNotExist`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown operator {0:?}, expected one of In, NotIn, Exists, DoesNotExist")]
pub struct UnknownOperator(pub String);

impl FromStr for SelectorOperator {
    type Err = UnknownOperator;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "In" => Ok(SelectorOperator::In),
            "NotIn" => Ok(SelectorOperator::NotIn),
            "Exists" => Ok(SelectorOperator::Exists),
            "DoesNotExist" => Ok(SelectorOperator::DoesNotExist),
            other => Err(UnknownOperator(other.to_string())),
        }
    }
}

/// Matching and validation of a [`LabelSelector`].
pub trait SelectorExt {
    /// A selector with only `matchLabels`.
    fn from_labels<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self;
    /// True when the selector has neither labels nor expressions (it then matches everything).
    fn is_empty(&self) -> bool;
    /// Checks the rules kube-apiserver enforces: a known operator, `In`/`NotIn` need values,
    /// `Exists`/`DoesNotExist` must have none, keys are not empty. `field` names the selector in
    /// the error.
    fn validate(&self, field: &str) -> Result<(), TargetError>;
    /// Whether `labels` satisfy every requirement of the selector (a requirement with an unknown
    /// operator matches nothing).
    fn matches(&self, labels: &Labels) -> bool;
}

impl SelectorExt for LabelSelector {
    fn from_labels<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        LabelSelector {
            match_labels: pairs
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            match_expressions: Vec::new(),
        }
    }

    fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }

    fn validate(&self, field: &str) -> Result<(), TargetError> {
        for (i, req) in self.match_expressions.iter().enumerate() {
            let at = format!("{field}.matchExpressions[{i}]");
            if req.key.is_empty() {
                return Err(TargetError::invalid(at, "key must not be empty"));
            }
            let operator: SelectorOperator = req
                .operator
                .parse()
                .map_err(|e: UnknownOperator| TargetError::invalid(&at, e.to_string()))?;
            match operator {
                SelectorOperator::In | SelectorOperator::NotIn if req.values.is_empty() => {
                    return Err(TargetError::invalid(
                        at,
                        format!("operator {operator:?} needs at least one value"),
                    ));
                }
                SelectorOperator::Exists | SelectorOperator::DoesNotExist
                    if !req.values.is_empty() =>
                {
                    return Err(TargetError::invalid(
                        at,
                        format!("operator {operator:?} takes no values"),
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

    fn matches(&self, labels: &Labels) -> bool {
        self.match_labels
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
            && self
                .match_expressions
                .iter()
                .all(|r| requirement_matches(r, labels))
    }
}

/// Whether `labels` satisfy one requirement.
fn requirement_matches(req: &LabelSelectorRequirement, labels: &Labels) -> bool {
    let value = labels.get(&req.key);
    match req.operator.parse::<SelectorOperator>() {
        Ok(SelectorOperator::In) => value.is_some_and(|v| req.values.contains(v)),
        Ok(SelectorOperator::NotIn) => value.is_none_or(|v| !req.values.contains(v)),
        Ok(SelectorOperator::Exists) => value.is_some(),
        Ok(SelectorOperator::DoesNotExist) => value.is_none(),
        Err(_) => false,
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
                operator: format!("{operator:?}"),
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
    fn an_unknown_operator_is_invalid_and_matches_nothing() {
        let selector: LabelSelector = serde_json::from_value(serde_json::json!({
            "matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]
        }))
        .unwrap();
        let err = selector.validate("sel").unwrap_err();
        assert_eq!(
            err.to_string(),
            "sel.matchExpressions[0]: unknown operator \"Gt\", expected one of In, NotIn, Exists, DoesNotExist"
        );
        assert!(!selector.matches(&labels(&[("a", "2")])));
    }
}
