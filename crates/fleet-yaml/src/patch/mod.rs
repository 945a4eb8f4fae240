//! Patch algorithms shared by bundle overlays, kustomize and the API server: JSON patch (RFC 6902), JSON merge
//! patch (RFC 7386) and Kubernetes strategic merge patch. All work on `serde_json::Value`, are pure and never panic;
//! failures are [`PatchError`]s naming the operation and the path that failed.

mod error;
pub mod json_patch;
pub mod merge_patch;
pub mod pointer;
pub mod strategic;

pub use error::{MergeProblem, PatchError};
