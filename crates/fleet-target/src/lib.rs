//! Targeting and placement: cluster index, target matching, customizations, rollout partitions,
//! scheduler. Pure: no network or Kubernetes I/O, no clock (callers pass the time), and every
//! output sorted, so the same input always gives the same answer — except where a fleet.yaml
//! `${ }` template asks for the time or randomness (`now`, `uuidv4`, `rand*`), which Fleet
//! evaluates at targeting too.
//!
//! Data flow: [`index::ClusterIndex`] → [`mapping::bundle_namespaces`] →
//! [`targeting::compute_targets`] (matching, [`customization`], [`templating`]) → optionally
//! [`placement::schedule`] (policy-based selection among the targeted clusters) →
//! [`rollout::plan_rollout`] (which BundleDeployments to create, stage and promote).
//! [`pipeline::plan_bundle`] runs all of them for one bundle; [`restrictions::authorize`] checks a
//! GitRepo against GitRepoRestrictions first.
//!
//! Entry points for other crates:
//! - input model: [`model::ClusterInfo`], [`model::ClusterGroupInfo`], [`index::ClusterIndex`]
//!   (also from a [`model::FleetSnapshot`] file);
//!   a Bundle spec (JSON) splits with [`bundle_spec::read_bundle_spec`];
//! - Fleet targeting: [`targeting::compute_targets`], [`targeting::target_cluster`],
//!   [`targeting::affected_bundles`] (what a cluster change re-targets);
//! - the whole bundle: [`pipeline::plan_bundle`] and [`explain::explain`] (`fleet target`);
//!   BundleDeployment labels: [`labels::deployment_labels`];
//! - pieces: [`rollout::plan_rollout`], [`placement::schedule`],
//!   [`placement::budget::plan_roll`], [`placement::membership`] (cluster conditions, automatic
//!   taints), [`customization::merge_options`], [`templating::preprocess_helm_values`] (Fleet's `${ }`
//!   templating on fleet-helm's Go-template engine).

pub mod bundle_spec;
pub mod customization;
pub mod error;
pub mod explain;
pub mod index;
pub mod intstr;
pub mod labels;
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
pub mod templating;

pub use error::{TargetError, TemplateProblem};
