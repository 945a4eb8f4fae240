//! `fleet dev` as a library: one process running an embedded API server as the hub, the controller, the
//! local agent (`fleet-local` workspace, `cattle-fleet-local-system`) and N simulated downstream clusters,
//! each its own embedded API server with its own agent registered through the real token flow
//! (ClusterRegistrationToken on the hub → bootstrap Secret downstream → ClusterRegistration → grant).
//!
//! Data flow: [`data_dir`] (fresh state dir, kubeconfigs) → [`served`] (API servers on loopback) →
//! [`hub`] (CRDs, namespaces, agent config) → [`controller`] (the controller, restartable, with the webhook
//! receiver and the immediate trigger) → [`registration`] + [`cluster`] (downstream clusters and agents,
//! [`workloads`] standing in for their workload controllers) → [`repos`] (GitRepos from `--repo`, local
//! folders committed by [`snapshot`] and watched by [`watch`]) → [`view`] / [`ready`] (what the user sees,
//! and when everything is deployed).
//!
//! Entry point: [`Dev::start`] with [`DevOptions`]; [`Dev::shutdown`] stops everything in order.

pub mod cluster;
pub mod controller;
pub mod data_dir;
mod dev;
pub mod error;
pub mod hub;
pub mod live;
pub mod ready;
pub mod registration;
pub mod repos;
pub mod served;
pub mod snapshot;
mod task;
pub mod view;
pub mod watch;
pub mod workloads;

pub use dev::{Dev, DevOptions, Tuning};
pub use error::{Error, Result};
pub use repos::{RepoRequest, RepoSource};
