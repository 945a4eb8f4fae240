//! Embedded Kubernetes-compatible API server (axum), usable in-process as a tower service handed to
//! `kube::Client` and over HTTP(S) for kubectl and other processes.
//!
//! A request's path through the folders: [`server`] accepts it and dispatches, `http` resolves the route and
//! decodes the request, `auth` authenticates and authorizes it, `handlers` runs its verb against `kinds` (what
//! is served, defaulting, validation) and `storage` (the versioned store with watches), and `lifecycle` does
//! what kube-controller-manager would do next (deletion, garbage collection, namespace termination). `state`
//! is what they all share. Nothing below `server` imports it back.
//!
//! Behaviour worth knowing, as kube-apiserver's:
//! - **Namespace deletion**: DELETE marks the namespace (deletionTimestamp, `status.phase: Terminating`,
//!   the `kubernetes` finalizer in `spec.finalizers`) and answers at once; its contents are deleted in the
//!   background (objects with finalizers stay until those are removed), and the namespace goes once it is
//!   empty. Creating an object in a terminating namespace gets 403 `unable to create new content in
//!   namespace X because it is being terminated`. `kubectl delete ns X` waits until it is gone.
//! - **Required fields** of built-in kinds (the OpenAPI schemas' `required` lists) are checked on create,
//!   update, patch and apply, dry runs included: 422 Invalid, `Deployment.apps "x" is invalid:
//!   spec.selector: Required value`, with one `FieldValueRequired` cause per field.
//! - **Strategic merge patch** takes merge keys and strategies from the built-in schemas'
//!   `x-kubernetes-patch-merge-key` / `x-kubernetes-patch-strategy` (also served in `/openapi/v3`), with
//!   `$patch`, `$setElementOrder`, `$retainKeys` and `$deleteFromPrimitiveList`; lists without a patch
//!   strategy are replaced.
//! - **Protobuf bodies** (`kubectl create` of built-in kinds) are stored as the same object sent as JSON
//!   would be: the zero values Go's JSON encoding omits are dropped.
//! - **Writes** to an existing object are computed outside the store's lock and committed only if the
//!   object has not changed meanwhile (recomputed otherwise), so concurrent writers do not queue behind
//!   each other's validation and managedFields bookkeeping.
//!
//! ```no_run
//! # async fn demo() {
//! let server = fleet_apiserver::ApiServer::in_memory();
//! let client = server.client(); // a kube::Client talking to it in-process
//! let addr = server.spawn_loopback().await.unwrap(); // and over http://127.0.0.1:PORT
//! # let _ = (client, addr); }
//! ```

mod auth;
mod error;
mod handlers;
mod http;
mod kinds;
mod lifecycle;
mod server;
mod storage;

pub mod standalone;
mod state;

pub use server::tls;

pub use auth::authenticate::User;
pub use error::ApiError;
pub use server::{ApiServer, ApiService, Config, StartError};
