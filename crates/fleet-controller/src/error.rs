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
    #[error("finalizer on {object}: {source}")]
    Finalizer {
        object: String,
        source: FinalizerFailure,
        /// The finalizer patch was refused because the object changed since it was read.
        stale_object: bool,
    },
    #[error("background task failed: {0}")]
    Task(String),
}

/// Why kube-runtime's finalizer helper could not add or remove the controller's finalizer.
#[derive(Debug, thiserror::Error)]
pub enum FinalizerFailure {
    /// The finalizer patch was refused.
    #[error(transparent)]
    Patch(kube::Error),
    /// The object or the finalizer cannot be used (no name, an invalid finalizer name).
    #[error(transparent)]
    Helper(Box<kube::runtime::finalizer::Error<Error>>),
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
                stale_object: is_conflict(&e) || is_refused_json_patch(&e),
                source: FinalizerFailure::Patch(e),
            },
            other => Error::Finalizer {
                object,
                source: FinalizerFailure::Helper(Box::new(other)),
                stale_object: false,
            },
        }
    }

    /// The reconcile acted on an out-of-date copy of its object (a write conflict, or the finalizer
    /// helper's JSON patch `test` failing because the cache had not yet seen the previous write): retried
    /// at once, not reported as a failure worth a warning.
    pub fn is_stale_object(&self) -> bool {
        match self {
            Error::Kube(e) => is_conflict(e),
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

/// A 409 Conflict: the object changed since the copy the write was based on.
fn is_conflict(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 409)
}

/// Whether the API server refused a JSON patch because it could not be applied to the object as stored.
/// kube-runtime's finalizer helper sends a `test` of the finalizers it read before its `add` or `remove`, so
/// for its patches this means the object changed since it was read.
///
/// kube-apiserver answers a JSON patch it cannot apply (a failed `test`, a path that is gone) with 422, reason
/// `Invalid`, a generic message and no `details.causes` (its patch handler wraps the patch library's error in
/// `NewGenericServerResponse` and keeps none of its text), while a patched object that fails validation gets
/// 422 `Invalid` with one cause per invalid field: the missing causes tell the two apart. The embedded API
/// server answers the same way.
fn is_refused_json_patch(error: &kube::Error) -> bool {
    let kube::Error::Api(status) = error else {
        return false;
    };
    let no_causes = status
        .details
        .as_ref()
        .is_none_or(|details| details.causes.is_empty());
    status.code == 422 && status.reason == "Invalid" && no_causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, Patch, PatchParams, PostParams};
    use kube::runtime::controller::Action;
    use serde_json::json;

    fn api_error(status: serde_json::Value) -> kube::Error {
        kube::Error::Api(Box::new(serde_json::from_value(status).unwrap()))
    }

    fn finalizer(e: kube::Error) -> Error {
        Error::from_finalizer(
            "Cluster ns/c".into(),
            kube::runtime::finalizer::Error::AddFinalizer(e),
        )
    }

    #[test]
    fn a_finalizer_patch_against_an_older_copy_is_a_stale_object_not_a_failure() {
        // kube-apiserver's answer to a JSON patch whose `test` failed: 422 Invalid, a generic message, no causes.
        let stale = finalizer(api_error(json!({
            "status": "Failure", "code": 422, "reason": "Invalid",
            "message": "the server rejected our request due to an error in our request", "details": {},
        })));
        assert!(stale.is_stale_object());
        assert_eq!(stale.kind(), "conflict");
        let conflict = json!({"status": "Failure", "code": 409, "reason": "Conflict",
                              "message": "the object has been modified"});
        assert!(finalizer(api_error(conflict.clone())).is_stale_object());
        assert!(Error::Kube(api_error(conflict)).is_stale_object());

        let refused = finalizer(api_error(json!({
            "status": "Failure", "code": 403, "reason": "Forbidden", "message": "forbidden",
        })));
        assert!(!refused.is_stale_object());
        assert_eq!(refused.kind(), "finalizer");
        // A patch that applied but made the object invalid lists its causes: not stale.
        let invalid = json!({
            "status": "Failure", "code": 422, "reason": "Invalid",
            "message": "Cluster.fleet.cattle.io \"c\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted",
            "details": {"name": "c", "group": "fleet.cattle.io", "kind": "Cluster", "causes": [
                {"reason": "FieldValueForbidden", "field": "metadata.finalizers",
                 "message": "Forbidden: no new finalizers can be added if the object is being deleted"},
            ]},
        });
        assert!(!finalizer(api_error(invalid)).is_stale_object());
        assert!(!Error::invalid("GitRepo ns/r", "bad").is_stale_object());
    }

    /// kube-runtime's finalizer helper run on a copy older than the stored object, against the embedded API
    /// server: its JSON patch `test` fails there, answered as kube-apiserver answers it, and that is told apart as
    /// a stale object.
    #[tokio::test]
    async fn the_embedded_api_server_refusing_a_stale_finalizer_patch_is_a_stale_object() {
        let hub = fleet_testing::TestCluster::empty();
        let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(hub.client.clone());
        let _ = namespaces
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({"metadata": {"name": "ns"}})).unwrap(),
            )
            .await;
        let api: Api<ConfigMap> = Api::namespaced(hub.client.clone(), "ns");
        api.create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "c"}})).unwrap(),
        )
        .await
        .unwrap();
        let older = api.get("c").await.unwrap();
        api.patch(
            "c",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["example.com/other"]}})),
        )
        .await
        .unwrap();
        let err = kube::runtime::finalizer::finalizer(
            &api,
            "example.com/ours",
            Arc::new(older),
            |_| async { Ok::<_, Error>(Action::await_change()) },
        )
        .await
        .unwrap_err();
        assert!(
            matches!(err, kube::runtime::finalizer::Error::AddFinalizer(_)),
            "{err:?}"
        );
        let err = Error::from_finalizer("ConfigMap ns/c".into(), err);
        assert!(err.is_stale_object(), "{err}");
        assert_eq!(err.kind(), "conflict");
        // The API server's answer is kept whole.
        let Error::Finalizer {
            source: FinalizerFailure::Patch(kube::Error::Api(status)),
            ..
        } = &err
        else {
            panic!("{err:?}");
        };
        assert_eq!(status.code, 422);
        assert_eq!(
            status.message,
            "the server rejected our request due to an error in our request"
        );
    }
}
