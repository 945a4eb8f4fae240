//! Bundle planning: the fleet's state, target matching, customizations, placement scheduler,
//! rollout partitions, and the BundleDeployments to write and delete. Pure: no network or Kubernetes I/O, no clock (callers pass the time), and every
//! output sorted, so the same input always gives the same answer — except where a fleet.yaml
//! `${ }` template asks for the time or randomness (`now`, `uuidv4`, `rand*`), which Fleet
//! evaluates at targeting too.
//!
//! Inputs are fleet-api's types (Bundles, selectors, targets, rollout strategies, BundleDeployments,
//! BundleDeploymentOptions, which customizations merge and `${ }` templates fill as that type,
//! GitRepoRestrictions; a Cluster's taints, custom scores and resource usage inside the cluster model
//! [`model::ClusterInfo`], which is what targeting and the scheduler read of a Cluster). Where fleet-api
//! keeps an enum as a string, it is checked once on the way in, with an error naming the field: the
//! `placement` block into [`placement::PlacementPolicy`] ([`placement::from_api`]), a taint's effect by
//! [`model::TaintEffect::of`] (an unknown one keeps the cluster from new placements, with the reason).
//! Why a cluster cannot take a placement is typed ([`placement::Unfit`]).
//!
//! Data flow: [`plan::FleetState`] (the fleet: [`index::ClusterIndex`], cluster namespaces, mappings,
//! namespace labels, every Bundle's targeting input) → [`plan::plan`], the one entry point from a
//! Bundle and its existing BundleDeployments to the BundleDeployments to write and delete:
//! [`bundle_spec::read_bundle_spec`] → [`mapping::bundle_namespaces`] →
//! [`targeting::compute_targets`] (matching, [`customization`], [`templating`]) → optionally
//! [`placement::schedule`] and its rolling-update budget ([`pipeline::plan_bundle`]) →
//! [`rollout::plan_rollout`] (partitions, `maxNew` continued across passes by [`plan::max_new`]) →
//! the desired BundleDeployments ([`plan::desired`]: compared with the existing ones, and each one to
//! write built only when the caller writes it). [`restrictions::authorize`] checks a GitRepo
//! against GitRepoRestrictions.
//!
//! Entry points for other crates:
//! - the controller: [`plan::plan`] over a [`plan::FleetState`] it keeps up to date from watches
//!   (each update returns the Bundles it affects, see [`targeting::changed_bundles`]), with
//!   [`plan::TargetingCache`] keeping targeting between plans;
//! - `fleet target`: [`pipeline::plan_bundle`] and [`explain::explain`] over an
//!   [`index::ClusterIndex`] (also from a [`model::FleetSnapshot`] file); `fleet test`:
//!   [`targeting::compute_targets`];
//! - label selectors (the one matcher, also for the agent): [`selector::SelectorExt`];
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
pub mod plan;
pub mod quantity;
pub mod restrictions;
pub mod rollout;
pub mod selector;
pub mod serde_util;
pub mod targeting;
pub mod templating;

pub use error::{TargetError, TemplateProblem};
