//! Fleet-compatible API types (`fleet.cattle.io/v1alpha1`) and CRD generation. Pure: no I/O.
//!
//! Field names, JSON shapes and `omitempty` behaviour follow Rancher Fleet, so that objects
//! written for Fleet deserialize unchanged and deployment options serialize to the bytes
//! Fleet hashes. One module per kind family; shared status pieces in their own modules;
//! everything public is re-exported here.

pub mod bundle;
pub mod bundledeployment;
pub mod cluster;
pub mod cluster_properties;
pub mod clustergroup;
pub mod condition;
pub mod content;
pub mod crd;
pub mod deployment_state;
pub mod generic_map;
pub mod gitrepo;
pub mod go_json;
pub mod helmop;
pub mod imagescan;
pub mod labels;
pub mod namespace_mapping;
pub mod omit;
pub mod options;
pub mod placement;
pub mod registration;
pub mod restriction;
pub mod selector;
pub mod state;
pub mod status;
pub mod summary;
mod validation;

pub use bundle::*;
pub use bundledeployment::*;
pub use cluster::*;
pub use cluster_properties::*;
pub use clustergroup::*;
pub use condition::*;
pub use content::*;
pub use crd::{crds, crds_yaml};
pub use deployment_state::deployment_state;
pub use generic_map::GenericMap;
pub use gitrepo::*;
pub use helmop::*;
pub use imagescan::*;
pub use namespace_mapping::*;
pub use options::*;
pub use placement::*;
pub use registration::*;
pub use restriction::*;
pub use selector::*;
pub use state::BundleState;
pub use status::*;
pub use summary::*;

/// API group of every Fleet kind.
pub const GROUP: &str = "fleet.cattle.io";
/// API version of every Fleet kind.
pub const VERSION: &str = "v1alpha1";
/// `apiVersion` of every Fleet object.
pub const API_VERSION: &str = "fleet.cattle.io/v1alpha1";
