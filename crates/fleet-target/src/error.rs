//! The crate's error type: every error names the field (as a path such as
//! `targets[2].clusterSelector.matchExpressions[0]`) and says what is wrong with it.

use thiserror::Error;

/// Errors from validating or evaluating targeting, rollout and placement input.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TargetError {
    /// A field holds a value the rules do not allow.
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    /// A `${ }` values template failed to parse or render for a cluster.
    #[error("cluster {cluster}: {field}: {message}")]
    Template {
        cluster: String,
        field: String,
        message: String,
    },
    /// A GitRepo breaks a GitRepoRestriction in its namespace.
    #[error("{0}")]
    Restricted(String),
}

impl TargetError {
    /// Shorthand for [`TargetError::Invalid`].
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        TargetError::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }
}
