//! Label selectors in the exact JSON shape of Kubernetes' Go `metav1.LabelSelector`.
//!
//! k8s-openapi's `LabelSelector` serializes `matchExpressions` before `matchLabels`; Go prints
//! `matchLabels` first. Selectors can end up inside hashed deployment options
//! (`allowedTargetNamespaceSelector`), so Fleet's types use this copy, convertible both ways.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omit::null_as_zero;

/// A label query over objects, as in `metav1.LabelSelector`. An empty selector matches
/// everything; Fleet treats an absent (`None`) selector as matching nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct LabelSelector {
    /// Labels that must all be present with these values.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_zero")]
    pub match_labels: BTreeMap<String, String>,
    /// Set-based requirements, all of which must hold.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

/// One set-based requirement of a `LabelSelector`: `key operator values`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LabelSelectorRequirement {
    /// The label key the requirement applies to.
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    pub operator: String,
    /// Values for `In` and `NotIn`; empty for `Exists` and `DoesNotExist`.
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_zero")]
    pub values: Vec<String>,
}

impl From<meta::LabelSelector> for LabelSelector {
    fn from(selector: meta::LabelSelector) -> Self {
        Self {
            match_labels: selector.match_labels.unwrap_or_default(),
            match_expressions: selector
                .match_expressions
                .unwrap_or_default()
                .into_iter()
                .map(|requirement| LabelSelectorRequirement {
                    key: requirement.key,
                    operator: requirement.operator,
                    values: requirement.values.unwrap_or_default(),
                })
                .collect(),
        }
    }
}

impl From<LabelSelector> for meta::LabelSelector {
    fn from(selector: LabelSelector) -> Self {
        Self {
            match_labels: (!selector.match_labels.is_empty()).then_some(selector.match_labels),
            match_expressions: (!selector.match_expressions.is_empty()).then(|| {
                selector
                    .match_expressions
                    .into_iter()
                    .map(|requirement| meta::LabelSelectorRequirement {
                        key: requirement.key,
                        operator: requirement.operator,
                        values: (!requirement.values.is_empty()).then_some(requirement.values),
                    })
                    .collect()
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn match_labels_come_first_like_go() {
        let selector = LabelSelector {
            match_labels: BTreeMap::from([("env".to_string(), "prod".to_string())]),
            match_expressions: vec![LabelSelectorRequirement {
                key: "tier".into(),
                operator: "Exists".into(),
                values: vec![],
            }],
        };
        assert_eq!(
            serde_json::to_string(&selector).unwrap(),
            r#"{"matchLabels":{"env":"prod"},"matchExpressions":[{"key":"tier","operator":"Exists"}]}"#
        );
    }

    #[test]
    fn converts_to_and_from_k8s_openapi() {
        let selector = LabelSelector {
            match_labels: BTreeMap::from([("a".to_string(), "b".to_string())]),
            match_expressions: vec![LabelSelectorRequirement {
                key: "k".into(),
                operator: "In".into(),
                values: vec!["v".into()],
            }],
        };
        let k8s: meta::LabelSelector = selector.clone().into();
        assert_eq!(k8s.match_labels.as_ref().unwrap()["a"], "b");
        assert_eq!(LabelSelector::from(k8s), selector);
    }
}
