//! Kubernetes strategic merge patch: JSON merge patch semantics, except that lists tagged `patchStrategy: merge`
//! merge item by item (by their `patchMergeKey`, or as sets of primitives) and that patches may carry the
//! directives `$patch` (`replace`, `delete`), `$retainKeys`, `$setElementOrder/<list>` and
//! `$deleteFromPrimitiveList/<list>`. A `null` member deletes the field.
//!
//! Member order: the result keeps the original's member order, with new members appended in patch order
//! (kubectl prints members sorted, as Go maps serialize; our consumers write YAML for people, so we keep the
//! author's order). List order follows Kubernetes exactly.
//!
//! [`apply`] is kube-apiserver's and `kubectl patch`'s algorithm (k8s.io/apimachinery); [`kustomize::apply`] is
//! kustomize's (kyaml), whose list order and directive support differ.
//!
//! Differences from Kubernetes, by design: fields our schema does not declare are merged like a JSON merge patch
//! (maps merge, lists are replaced) where Kubernetes' typed patcher would refuse a field unknown to its Go struct.

mod builtin;
mod diff;
mod directives;
pub mod kustomize;
mod merge;
mod openapi;
mod order;
mod path;
mod schema;

use crate::patch::error::MergeProblem;
use serde_json::Value;

pub use builtin::{BuiltinSchema, builtin_schema_for, schema_for_object};
pub use diff::diff;
pub use openapi::OpenApiSchema;
pub use schema::{Field, MergeSchema, PatchMeta, Schemaless, Strategy};

use crate::patch::error::PatchError;
use path::Path;

/// Applies the strategic merge patch `patch` to `original` using `schema` (the patch knowledge of the object's
/// type) and returns the patched document. Both must be JSON objects. `original` is not modified.
pub fn apply(
    original: &Value,
    patch: &Value,
    schema: &dyn MergeSchema,
) -> Result<Value, PatchError> {
    let root = Path::root();
    let Value::Object(original) = original else {
        return Err(root.error(MergeProblem::DocumentNotObject));
    };
    let Value::Object(patch) = patch else {
        return Err(root.error(MergeProblem::PatchNotObject));
    };
    merge::merge_map(original.clone(), patch.clone(), schema, &root).map(Value::Object)
}

/// [`apply`] with the schema of the object's kind ([`schema_for_object`]).
pub fn apply_to_object(original: &Value, patch: &Value) -> Result<Value, PatchError> {
    apply(original, patch, schema_for_object(original))
}

#[cfg(test)]
mod tests;
