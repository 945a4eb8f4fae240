//! The crate's error type: every error names the field (as a path such as
//! `targets[2].clusterSelector.matchExpressions[0]`) and says what is wrong with it.

use thiserror::Error;

/// Errors from validating or evaluating targeting, rollout and placement input.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TargetError {
    /// A field holds a value the rules do not allow.
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    /// A `${ }` template of `helm.values` or `helm.templateValues` failed for a cluster. `field` is the fleet.yaml
    /// field the template is in (`helm.values.a.b`, `helm.values.list[0]`, `helm.templateValues.x`).
    #[error("cluster {cluster}: {field}: {problem}")]
    Template {
        cluster: String,
        field: String,
        #[source]
        problem: TemplateProblem,
    },
    /// A GitRepo breaks a GitRepoRestriction in its namespace.
    #[error("{0}")]
    Restricted(String),
}

/// What is wrong with a `${ }` template. Messages from the template engine are Go's; rendered text is never quoted
/// (values can be secret).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TemplateProblem {
    /// The template does not parse (`line` counts lines of the field's text).
    #[error("template syntax error at line {line}: {message}")]
    Syntax { line: usize, message: String },
    /// Evaluating an expression failed: a missing map key, a function's error, an undefined function.
    #[error("executing <{expression}>: {message}")]
    Execution { expression: String, message: String },
    /// The template called `fail`.
    #[error("error calling fail: {0}")]
    Failed(String),
    /// The template ran past the render budget.
    #[error("the template runs too long (render budget exhausted)")]
    Budget,
    /// Another error from the template engine.
    #[error("{0}")]
    Engine(String),
    /// The rendered text is not YAML (the parser's message, without the text).
    #[error("the rendered template is not valid YAML: {0}")]
    NotYaml(String),
    /// `helm.values` rendered to something other than a map.
    #[error("the rendered values are not a map")]
    NotAMap,
    /// `global.fleet.clusterLabels.` substitution met values nested deeper than Fleet allows.
    #[error(
        "maximum recursion depth of {0} exceeded for cluster label prefix processing, too many nested values"
    )]
    TooDeep(usize),
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
