//! Status writing, BundleDeployment → Bundle → GitRepo and Cluster: the status of Bundles ([`bundle`]),
//! GitRepos ([`gitrepo`]) and ClusterGroups ([`group`]), conditions that keep their transition time while
//! their status does not change ([`conditions`]), and the server-side apply of a status ([`apply`]).
//! The summaries they are made of (the state of one BundleDeployment, the tallies, Fleet's ready message)
//! are the index's ([`crate::index::summary`], [`crate::index::tally`]), kept up to date from watch deltas.

pub mod apply;
pub mod bundle;
pub mod conditions;
pub mod gitrepo;
pub mod group;

pub use crate::index::summary::{
    MAX_NON_READY, deployment_message, deployment_state, increment, non_ready_entry, ready_message,
    summary_state,
};
pub use crate::index::{resources, tally};
pub use apply::apply_status;
pub use conditions::set_ready;
