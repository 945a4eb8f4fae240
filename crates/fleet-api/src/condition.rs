//! Status conditions in the shape Fleet uses (wrangler's `genericcondition.GenericCondition`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omit::null_as_zero;

/// One status condition (`Ready`, `Accepted`, `GitPolling`, `Deployed`, `Monitored`, …).
/// Timestamps are RFC 3339 strings, as wrangler stores them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct Condition {
    /// Condition type, e.g. `Ready`.
    #[serde(rename = "type", deserialize_with = "null_as_zero")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(deserialize_with = "null_as_zero")]
    pub status: String,
    /// Last time the condition was updated.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub last_update_time: String,
    /// Last time the status changed.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub last_transition_time: String,
    /// Machine-readable reason for the last transition.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub reason: String,
    /// Human-readable message.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_zero")]
    pub message: String,
}

impl Condition {
    /// `true` when the condition's status is `True`.
    pub fn is_true(&self) -> bool {
        self.status == "True"
    }
}

/// Finds the condition of the given type in a list.
pub fn find_condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|condition| condition.type_ == type_)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_type_and_status_always() {
        let condition = Condition {
            type_: "Ready".into(),
            ..Condition::default()
        };
        assert_eq!(
            serde_json::to_string(&condition).unwrap(),
            r#"{"type":"Ready","status":""}"#
        );
        assert!(find_condition(std::slice::from_ref(&condition), "Ready").is_some());
        assert!(!condition.is_true());
    }
}
