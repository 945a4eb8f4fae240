//! The controller's error type: what a reconcile can fail with. Messages name the object and never carry
//! secret material (git errors come pre-scrubbed from `fleet-git`). [`Error::retry`] classifies each kind for
//! the shared error policy ([`crate::retry`]).

/// Errors of a reconcile or of starting the controller.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error(transparent)]
    Git(#[from] fleet_git::GitError),
    /// The object's own input is wrong (or names an object the user must create): it stalls.
    #[error("{object}: {message}")]
    Invalid { object: String, message: String },
    /// The object waits for an object the controller writes itself (its values or options Secret).
    #[error("{object}: {message}; retrying")]
    Waiting { object: String, message: String },
    /// A HelmOp's chart source could not be used.
    #[error(transparent)]
    ChartSource(#[from] SourceProblem),
    #[error("finalizer on {object}: {message}")]
    Finalizer {
        object: String,
        message: String,
        /// The finalizer patch was refused because the object changed since it was read.
        stale_object: bool,
    },
    #[error("background task failed: {0}")]
    Task(String),
}

/// Why the chart source could not be used. Never holds a credential.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceProblem {
    #[error("helmSecretName: secret {namespace}/{name} not found")]
    SecretMissing { namespace: String, name: String },
    #[error("helmSecretName: secret {namespace}/{name}: {message}")]
    SecretInvalid {
        namespace: String,
        name: String,
        message: String,
    },
    #[error("could not get a chart version: {0}")]
    Resolve(String),
}

/// What a failed reconcile asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// The reconcile acted on an out-of-date copy (a write conflict) or waits for a write of its own that
    /// the watch has not delivered yet: run again after [`crate::retry::SOON`].
    Soon,
    /// Something outside the object failed (the API server, the network, a remote): run again after the
    /// object's next [`crate::retry::Backoff`] delay.
    Backoff,
    /// The object's own input is wrong (an invalid spec, a missing object the user must create): report it
    /// and wait for a change.
    Stalled,
}

impl Error {
    pub fn invalid(object: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid {
            object: object.into(),
            message: message.into(),
        }
    }

    pub fn waiting(object: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Waiting {
            object: object.into(),
            message: message.into(),
        }
    }

    /// What the shared error policy does after this error, decided by its kind.
    pub fn retry(&self) -> Retry {
        use fleet_git::GitError;
        match self {
            _ if self.is_stale_object() => Retry::Soon,
            Error::Invalid { .. } => Retry::Stalled,
            Error::Git(error) => match error {
                // The GitRepo's URL, branch, revision or credentials are wrong: the user must change them.
                GitError::AuthenticationFailed { .. }
                | GitError::RefNotFound { .. }
                | GitError::RepositoryNotFound { .. }
                | GitError::HostKeyMismatch { .. }
                | GitError::InsecureCredentials { .. }
                | GitError::InvalidSecret { .. } => Retry::Stalled,
                GitError::NotFetched { .. } | GitError::PushRejected { .. } => Retry::Soon,
                // A refused app key and an API that is down look alike from here: retried.
                GitError::Unreachable { .. }
                | GitError::GitHubApp { .. }
                | GitError::Tls { .. }
                | GitError::Corrupt { .. }
                | GitError::Other { .. } => Retry::Backoff,
            },
            // The controller does not watch the Secrets a HelmOp names, so a missing or wrong one is not
            // stalled: creating it must be noticed without a change of the HelmOp.
            Error::ChartSource(_) => Retry::Backoff,
            Error::Kube(_) | Error::Waiting { .. } | Error::Finalizer { .. } | Error::Task(_) => {
                Retry::Backoff
            }
        }
    }

    /// The error of a reconcile run through kube's `finalizer` helper on `object`: the reconcile's own error
    /// when apply or cleanup failed, otherwise the finalizer's (adding or removing it failed).
    pub fn from_finalizer(object: String, err: kube::runtime::finalizer::Error<Error>) -> Error {
        match err {
            kube::runtime::finalizer::Error::ApplyFailed(e)
            | kube::runtime::finalizer::Error::CleanupFailed(e) => e,
            kube::runtime::finalizer::Error::AddFinalizer(e)
            | kube::runtime::finalizer::Error::RemoveFinalizer(e) => Error::Finalizer {
                object,
                stale_object: is_stale_object(&e),
                message: e.to_string(),
            },
            other => Error::Finalizer {
                object,
                message: other.to_string(),
                stale_object: false,
            },
        }
    }

    /// The reconcile acted on an out-of-date copy of its object (a write conflict, or the finalizer
    /// helper's JSON patch `test` failing because the cache had not yet seen the previous write): retried
    /// at once, not reported as a failure worth a warning.
    pub fn is_stale_object(&self) -> bool {
        match self {
            Error::Kube(e) => is_stale_object(e),
            Error::Finalizer { stale_object, .. } => *stale_object,
            _ => false,
        }
    }

    /// A short label for metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Kube(_) => "kube",
            Error::Git(_) => "git",
            Error::Invalid { .. } => "invalid",
            Error::Waiting { .. } => "waiting",
            Error::ChartSource(_) => "chart_source",
            Error::Finalizer {
                stale_object: true, ..
            } => "conflict",
            Error::Finalizer { .. } => "finalizer",
            Error::Task(_) => "task",
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A 409 Conflict, or a 422 for a failed JSON patch `test` (how the API server refuses a patch written
/// against an older copy of the object).
fn is_stale_object(error: &kube::Error) -> bool {
    match error {
        kube::Error::Api(status) => {
            status.code == 409 || (status.code == 422 && status.message.contains("test failed"))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_error(code: u16, message: &str) -> kube::Error {
        kube::Error::Api(Box::new(
            serde_json::from_value(serde_json::json!({
                "status": "Failure", "code": code, "message": message, "reason": "Invalid",
            }))
            .unwrap(),
        ))
    }

    #[test]
    fn a_finalizer_patch_against_an_older_copy_is_a_stale_object_not_a_failure() {
        let finalizer = |e| {
            Error::from_finalizer(
                "Cluster ns/c".into(),
                kube::runtime::finalizer::Error::AddFinalizer(e),
            )
        };
        let stale = finalizer(api_error(
            422,
            "Cluster.fleet.cattle.io \"c\" is invalid: patch: JSON patch operation 0 (test \"/metadata/finalizers\"): test failed: the value differs",
        ));
        assert!(stale.is_stale_object());
        assert_eq!(stale.kind(), "conflict");
        assert!(finalizer(api_error(409, "the object has been modified")).is_stale_object());
        assert!(Error::Kube(api_error(409, "conflict")).is_stale_object());

        let refused = finalizer(api_error(403, "forbidden"));
        assert!(!refused.is_stale_object());
        assert_eq!(refused.kind(), "finalizer");
        assert!(!finalizer(api_error(422, "metadata.finalizers: Invalid value")).is_stale_object());
        assert!(!Error::invalid("GitRepo ns/r", "bad").is_stale_object());
    }
}
