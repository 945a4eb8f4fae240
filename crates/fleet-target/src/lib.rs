//! Targeting and placement: cluster index, target matching, customizations, rollout partitions,
//! scheduler. Pure: no network or Kubernetes I/O, no clock (callers pass the time), and every
//! output sorted, so the same input always gives the same answer.
//!
//! Data flow: [`index::ClusterIndex`] → [`mapping::bundle_namespaces`] →
//! [`targeting::compute_targets`] (matching, [`customization`], [`templating`]) → optionally
//! [`placement::schedule`] (policy-based selection among the targeted clusters) →
//! [`rollout::plan_rollout`] (which BundleDeployments to create, stage and promote).
//! [`pipeline::plan_bundle`] runs all of them for one bundle; [`restrictions::authorize`] checks a
//! GitRepo against GitRepoRestrictions first.

pub mod bundle_spec;
pub mod customization;
pub mod error;
pub mod explain;
pub mod index;
pub mod intstr;
pub mod mapping;
pub mod matcher;
pub mod model;
pub mod pipeline;
pub mod placement;
pub mod quantity;
pub mod restrictions;
pub mod rollout;
pub mod selector;
pub mod serde_util;
pub mod targeting;
pub mod template_engine;
pub mod templating;

pub use error::TargetError;
