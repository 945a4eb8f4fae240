//! Embedded Kubernetes-compatible API server (axum), usable in-process as a tower service handed to
//! `kube::Client` and over HTTP(S) for kubectl and other processes.
//!
//! ```no_run
//! # async fn demo() {
//! let server = fleet_apiserver::ApiServer::in_memory();
//! let client = server.client(); // a kube::Client talking to it in-process
//! let addr = server.spawn_loopback().await.unwrap(); // and over http://127.0.0.1:PORT
//! # let _ = (client, addr); }
//! ```

mod apply;
mod auth;
mod builtin;
mod builtin_schema;
mod core_kinds;
mod crd;
mod defaults;
mod discovery;
mod error;
mod fieldset;
mod gc;
mod handlers;
mod kubeconfig;
mod lifecycle;
mod managed;
mod namespaces;
mod object;
mod openapi;
mod persist;
mod protobuf;
mod rbac;
mod rbac_defaults;
mod registry;
mod request;
mod reviews;
mod route;
mod selectors;
mod server;
pub mod standalone;
mod store;
mod strategic;
mod table;
pub mod tls;
mod tokens;
mod validate;

pub use auth::User;
pub use error::ApiError;
pub use server::{ApiServer, Config, StartError};
