//! The errors of dev mode: each names what it was doing (the data dir, a `--repo` argument, a cluster, a
//! Kubernetes call) so that the user sees where it went wrong.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("data dir {path}: {message}")]
    DataDir { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--repo {argument}: {message}")]
    Repo { argument: String, message: String },
    #[error("git repository {path}: {message}")]
    Git { path: PathBuf, message: String },
    #[error("{what}: {source}")]
    Kube { what: String, source: kube::Error },
    #[error("cluster {cluster}: {message}")]
    Cluster { cluster: String, message: String },
    #[error("watching {path}: {source}")]
    Watch {
        path: PathBuf,
        source: notify::Error,
    },
    #[error("making the API server's certificates: {0}")]
    Tls(String),
    #[error("starting an API server: {0}")]
    ApiServer(#[from] fleet_apiserver::StartError),
    #[error("timed out after {seconds}s waiting for {what}")]
    Timeout { what: String, seconds: u64 },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn kube(what: impl Into<String>, source: kube::Error) -> Self {
        Error::Kube {
            what: what.into(),
            source,
        }
    }

    pub(crate) fn git(path: impl Into<PathBuf>, message: impl std::fmt::Display) -> Self {
        Error::Git {
            path: path.into(),
            message: message.to_string(),
        }
    }
}
