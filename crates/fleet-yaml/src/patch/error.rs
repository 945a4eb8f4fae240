//! The one error type of every patch algorithm.

/// Why a patch could not be applied. Messages name the operation and the JSON pointer (or strategic-merge path)
/// that failed; they never include document values, which may be secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The JSON patch document is not a JSON array of operation objects.
    #[error("invalid JSON patch: {reason}")]
    InvalidJsonPatch {
        /// What is wrong with the document.
        reason: String,
    },
    /// One JSON patch operation is malformed or cannot be applied to the document.
    #[error("JSON patch operation {index} ({op} {path:?}): {reason}")]
    JsonPatchOperation {
        /// Zero-based position of the operation in the patch array.
        index: usize,
        /// The operation name (`add`, `remove`, ...), or `?` when missing.
        op: String,
        /// The operation's `path` pointer, as written.
        path: String,
        /// What went wrong.
        reason: super::json_patch::OperationError,
    },
    /// A strategic merge patch is malformed or does not fit the document.
    #[error("strategic merge patch at {path}: {reason}")]
    StrategicMerge {
        /// Dotted path of the field that failed, e.g. `spec.template.spec.containers`.
        path: String,
        /// What went wrong.
        reason: String,
    },
}
