//! The one error type of every patch algorithm, with the typed reasons it carries.

use super::pointer::PointerError;

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
        reason: OperationError,
    },
    /// A strategic merge patch is malformed or does not fit the document.
    #[error("strategic merge patch at {path}: {reason}")]
    StrategicMerge {
        /// Dotted path of the field that failed, e.g. `spec.template.spec.containers`.
        path: String,
        /// What went wrong.
        reason: MergeProblem,
    },
}

/// What is wrong at one path of a strategic merge patch (or a diff) and its document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeProblem {
    #[error("the document to patch must be a JSON object")]
    DocumentNotObject,
    #[error("a strategic merge patch must be a JSON object")]
    PatchNotObject,
    #[error("both documents to compare must be JSON objects")]
    DiffNotObjects,
    #[error("the document nests deeper than {max} levels")]
    TooDeep { max: usize },
    /// The patch and the document hold different kinds of node here (kustomize's wording).
    #[error("wrong node kind: expected {expected} but got {got}")]
    WrongNodeKind {
        expected: &'static str,
        got: &'static str,
    },
    #[error("unknown patch strategy '{strategy}'")]
    UnknownStrategy { strategy: String },
    #[error("unknown patch type {directive:?} in a map (expected replace or delete)")]
    UnknownMapDirective { directive: String },
    #[error("$patch must be a string")]
    DirectiveNotString,
    #[error("$patch: merge is not supported in lists")]
    MergeInList,
    #[error("unknown $patch directive in a list item (expected delete or replace)")]
    UnknownListDirective,
    #[error("a $patch: delete item has no merge key {key:?}")]
    DeleteWithoutKey { key: String },
    #[error("$retainKeys must be a list of field names")]
    RetainKeysNotList,
    #[error("the patch sets {key:?}, which $retainKeys does not list")]
    NotRetained { key: String },
    /// A `$setElementOrder/…` or `$deleteFromPrimitiveList/…` key names no list.
    #[error("{key:?} must have the form {directive}/<list>")]
    BadDirectiveKey {
        key: String,
        directive: &'static str,
    },
    #[error("{key} must be a list")]
    OrderNotList { key: String },
    /// `side` is "the original" or "the patch".
    #[error("{side} holds no list here, but $setElementOrder orders one")]
    OrderedNotList { side: &'static str },
    #[error("the order of the patch list does not match its $setElementOrder list")]
    OrderMismatch,
    #[error("cannot merge a list of objects: the field declares no merge key")]
    NoMergeKey,
    #[error("cannot diff a list of objects: the field declares no merge key")]
    NoMergeKeyToDiff,
    #[error("a list item has no merge key {key:?}")]
    ItemWithoutKey { key: String },
    #[error("a list item is not an object with merge key {key:?}")]
    ItemNotKeyed { key: String },
    #[error("a list item is not an object")]
    ItemNotObject,
    #[error("lists of lists cannot be merged")]
    ListsOfLists,
    #[error("the items of a merged list must all have the same type")]
    MixedItems,
}

/// Why one operation is malformed or cannot be applied (the patch error adds its index, name and path).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OperationError {
    #[error("an operation must be an object, found {found}")]
    NotAnObject { found: &'static str },
    #[error("missing string member {member:?}")]
    MissingString { member: &'static str },
    #[error("missing member \"value\"")]
    MissingValue,
    #[error("unknown operation {op:?}")]
    UnknownOp { op: String },
    /// A pointer member (`path`, `from`) is malformed.
    #[error("{member}: {error}")]
    BadPointer {
        member: &'static str,
        error: PointerError,
    },
    /// An array index in the path is malformed.
    #[error(transparent)]
    Index(#[from] PointerError),
    #[error("cannot move a value into one of its own children")]
    MoveIntoChild,
    /// The `from` location of `move` or `copy` failed.
    #[error("from: {0}")]
    From(Box<OperationError>),
    #[error("test failed: the value differs")]
    TestDiffers,
    #[error("test failed: no value at this location")]
    TestNoValue,
    #[error("index {index} is out of bounds (array length {len})")]
    OutOfBounds { index: String, len: usize },
    #[error("cannot add a member to {found}")]
    NotAContainer { found: &'static str },
    #[error("the parent of the target location does not exist")]
    NoParent,
    #[error("cannot remove the whole document")]
    RemoveRoot,
    #[error("no value at this location")]
    NoValue,
}
