//! Downloads the Helm charts a bundle names but does not hold, as Fleet's bundle reader does: charts in Helm
//! repositories over HTTP(S) (`index.yaml`), chart archive URLs and charts in OCI registries (the distribution
//! API with Helm's media types and the registry's auth challenge), and chart dependencies from repositories.
//! Credentials and trust follow the GitRepo's `helmSecretName`, `helmSecretNameForPaths`, `helmRepoURLRegex`
//! and `insecureSkipTLSVerify` ([`auth`]).
//!
//! [`ChartSource`] is long-lived and shared: archives are cached by their sha256 digest, so every bundle and
//! GitRepo that uses a chart version downloads it once (a repository index or OCI manifest names the digest
//! before the download). [`ChartSource::fetcher`] gives the synchronous [`fleet_bundle::remote::ChartFetcher`]
//! the pure reader calls; it runs the downloads on the source's own runtime, so it may be called from any thread.

pub mod archive;
pub mod auth;
pub mod error;
mod http;
pub mod image;
mod oci;
mod repo;
mod session;
mod source;

pub use auth::{Auth, Credentials};
pub use error::SourceError;
pub use image::{ImageName, ImageRegistry};
pub use source::{ChartSource, Fetcher, ReadSession, Stats};
