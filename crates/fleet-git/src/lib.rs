//! Git for GitRepos, through gix only (no `git` binary at run time): resolve a branch or revision to a commit
//! with an ls-remote ([`GitCache::resolve`]), fetch that one commit shallowly into a bare repository cached per
//! remote ([`GitCache::fetch`]), and read its files straight from the object database ([`GitCache::tree`],
//! a [`fleet_bundle::tree::FileTree`]). Transports: `file://` and local paths (read in-process: refs resolved
//! and objects copied straight from the repository's object database), `https://` (rustls, `caBundle`,
//! `insecureSkipTLSVerify`), `http://`, and ssh through the system client with the secret's key and
//! `known_hosts`, GitHub App installations ([`github_app`]). [`GitCache::push`] commits changed files on top of a
//! fetched commit and pushes it (smart HTTP(S), ssh and local repositories). [`webhook`] verifies and parses push
//! events of the common git hosts.
//!
//! Everything here blocks; async callers use `tokio::task::spawn_blocking`.

mod cache;
mod classify;
mod error;
mod fetch;
pub mod github_app;
mod local;
mod push;
mod remote;
mod resolve;
mod source;
mod ssh;
mod tree;
mod url;
pub mod webhook;

pub use cache::GitCache;
pub use error::GitError;
pub use fetch::FetchStats;
pub use push::{Change, PushOutcome};
pub use source::{
    BASIC_AUTH_SECRET_TYPE, DEFAULT_BRANCH, GitAuth, GitSource, SSH_AUTH_SECRET_TYPE,
};
pub use tree::GitTree;
pub use url::{normalize_url, redact_url};
