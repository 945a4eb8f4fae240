//! Bundle reading over abstract file trees: discovery, fleet.yaml, charts in the repository ([`charts`]) and
//! references to remote ones ([`remote`]), naming and hashing. Pure: no I/O beyond the tree it is given
//! ([`tree::LocalTree`] is the one place that touches the filesystem) and the chart fetcher a runtime passes in.
//! It never renders: turning a Bundle into objects is `fleet-render`'s.
//!
//! Data flow: [`tree`] → [`discover`] → [`read`] (with [`fleetyaml`], [`resources`], [`ignore`]) → `Bundle`
//! → [`hash`] for IDs.

pub mod charts;
pub mod discover;
pub mod error;
pub mod fleetyaml;
pub mod glob;
pub mod hash;
pub mod ignore;
pub mod names;
pub mod read;
pub mod remote;
pub mod resources;
pub mod tree;

pub use error::ReadError;
pub use read::{ReadOptions, TargetsSpec, read_bundles};
