//! The annotations the GitRepo reconciler puts on the Bundles it writes (our additions): written by
//! [`super::apply`], read by [`super::restrict`] and the GitRepo's status.

/// Annotation on a Bundle whose directory failed to read in the GitRepo's current commit (our addition:
/// Fleet's git job fails as a whole instead). The Bundle keeps its last good spec.
pub const READ_ERROR_ANNOTATION: &str = "fleet.cattle.io/read-error";

/// Annotation on each Bundle a GitRepo wrote: the [`super::restrict::fingerprint`] of the effective access it was read with
/// (our addition).
pub const ACCESS_ANNOTATION: &str = "fleet.cattle.io/gitrepo-access";
