//! The controller's error type: what a reconcile can fail with. Messages name the object and never carry
//! secret material (git errors come pre-scrubbed from `fleet-git`).

/// Errors of a reconcile or of starting the controller.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error(transparent)]
    Git(#[from] fleet_git::GitError),
    #[error("{object}: {message}")]
    Invalid { object: String, message: String },
    #[error("finalizer on {object}: {message}")]
    Finalizer { object: String, message: String },
    #[error("background task failed: {0}")]
    Task(String),
}

impl Error {
    pub fn invalid(object: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid {
            object: object.into(),
            message: message.into(),
        }
    }

    /// The error of a reconcile run through kube's `finalizer` helper on `object`: the reconcile's own error
    /// when apply or cleanup failed, otherwise the finalizer's (adding or removing it failed).
    pub fn from_finalizer(object: String, err: kube::runtime::finalizer::Error<Error>) -> Error {
        match err {
            kube::runtime::finalizer::Error::ApplyFailed(e)
            | kube::runtime::finalizer::Error::CleanupFailed(e) => e,
            other => Error::Finalizer {
                object,
                message: other.to_string(),
            },
        }
    }

    /// A short label for metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Kube(_) => "kube",
            Error::Git(_) => "git",
            Error::Invalid { .. } => "invalid",
            Error::Finalizer { .. } => "finalizer",
            Error::Task(_) => "task",
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
