//! The one error type of this crate: what went wrong, in which input (`origin`), and where.

use std::fmt;

/// A 1-based position in a YAML text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column number (in characters).
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// A YAML error naming the input (`origin`, usually a file path), the position when known, and the cause.
///
/// Displays as `origin:line:column: message`, or `origin: message` without a position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}{}: {message}", .location.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct Error {
    /// Name of the input, e.g. a file path.
    pub origin: String,
    /// Where the problem is, when known.
    pub location: Option<Location>,
    /// What is wrong.
    pub message: String,
}

impl Error {
    /// An error about `origin` at an optional position.
    pub fn new(origin: &str, location: Option<Location>, message: impl Into<String>) -> Self {
        Self {
            origin: origin.to_string(),
            location,
            message: message.into(),
        }
    }
}
