//! Predicates that reproduce Go's `encoding/json` `omitempty` rule for scalar fields.
//!
//! Go omits a field tagged `omitempty` when it holds the zero value of its type: `false`,
//! `0`, `""`, a nil pointer, or an empty slice or map. Strings, slices and maps use the
//! standard `String::is_empty` / `Vec::is_empty` / `BTreeMap::is_empty`; this module covers
//! the rest so that every `skip_serializing_if` in the crate reads the same way.

/// `true` when a Go `bool` with `omitempty` would be left out (it is `false`).
pub fn is_false(value: &bool) -> bool {
    !*value
}

/// `true` when a Go integer with `omitempty` would be left out (it is `0`).
pub fn is_zero(value: &i64) -> bool {
    *value == 0
}
