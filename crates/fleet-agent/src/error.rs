//! The agent's error type. Errors about one BundleDeployment's content end up in its status; only errors
//! talking to the hub ([`Error::Kube`]) are returned to the loop, which retries them with backoff. A failed
//! request to the downstream cluster is [`Error::Downstream`] and goes to the status; the agent tells the two
//! apart by variant. Per-object, hook, dependency and restriction failures have their own types in their
//! modules ([`crate::apply::ObjectError`], [`crate::hooks::HookFailure`], [`crate::depends_on::NotReady`],
//! [`crate::restriction::Refused`]).

/// Something the agent could not do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the hub or the downstream cluster failed.
    #[error("{action}: {source}")]
    Kube {
        action: String,
        #[source]
        source: kube::Error,
    },
    /// A request to the downstream cluster failed while deploying: the BundleDeployment's status reports it;
    /// it is not a hub error (the loop neither backs off nor treats a 401 as revoked credentials).
    #[error("downstream: {action}: {source}")]
    Downstream {
        action: String,
        #[source]
        source: kube::Error,
    },
    /// The Content object could not be decoded.
    #[error("content {name}: {message}")]
    Content { name: String, message: String },
    /// The bundle did not render.
    #[error("rendering: {0}")]
    Render(#[from] fleet_render::RenderError),
    /// A rendered object is not a valid Kubernetes object.
    #[error("object {index} ({name}): {message}")]
    InvalidObject {
        index: usize,
        name: String,
        message: String,
    },
    /// The hub refuses the agent's credentials (401): they were revoked. Re-register with a new bootstrap
    /// Secret.
    #[error("the hub refuses this agent's credentials (revoked?): {0}")]
    Revoked(String),
    /// An object listed in `downstreamResources` cannot be copied.
    #[error("downstreamResources {kind} {name}: {message}")]
    DownstreamResource {
        kind: String,
        name: String,
        message: String,
    },
    /// The BundleDeployment's options Secret does not exist or does not hold the values its `valuesHash`
    /// names, yet: the controller writes that Secret just after the BundleDeployment. Retried; never names
    /// the values (they may hold secrets).
    #[error("its options secret {namespace}/{name} {problem} yet; retrying")]
    OptionsSecretPending {
        namespace: String,
        name: String,
        problem: &'static str,
    },
    /// A `helm.valuesFrom` reference cannot be read: the ConfigMap or Secret or its key is missing, or it
    /// does not hold YAML values. Retried (the object may be created later); never quotes a Secret's data.
    #[error("valuesFrom {kind} {namespace}/{name}: {problem}")]
    ValuesFrom {
        kind: &'static str,
        namespace: String,
        name: String,
        problem: String,
    },
    /// A HelmOp's chart could not be downloaded (source down, wrong credentials, no matching version).
    /// Retried; what is deployed stays. Never holds a credential.
    #[error("downloading chart {chart}: {problem}")]
    ChartDownload {
        chart: String,
        problem: ChartDownloadProblem,
    },
    /// A namespaced object without a namespace: no request is sent for it (kube-apiserver answers 400).
    #[error("{object} names no namespace, but {kind} is namespaced")]
    NoNamespace { object: String, kind: String },
    /// The inventory record is unreadable.
    #[error("inventory {name}: {message}")]
    Inventory { name: String, message: String },
}

/// Why a HelmOp's chart could not be downloaded. Never holds a credential.
#[derive(Debug, thiserror::Error)]
pub enum ChartDownloadProblem {
    /// The options name no chart to download.
    #[error("the options name no chart")]
    NoChart,
    /// The chart access Secret the BundleDeployment names is not there.
    #[error("the access secret {namespace}/{name} does not exist (yet)")]
    SecretMissing { namespace: String, name: String },
    /// The access Secret could not be read as credentials, or the chart source failed.
    #[error(transparent)]
    Source(#[from] fleet_chart_source::SourceError),
}

impl Error {
    /// Wraps a kube error with what was being done.
    pub fn kube(action: impl Into<String>, source: kube::Error) -> Self {
        Error::Kube {
            action: action.into(),
            source,
        }
    }
}

impl Error {
    /// Wraps a kube error from the downstream cluster with what was being done.
    pub fn downstream(action: impl Into<String>, source: kube::Error) -> Self {
        Error::Downstream {
            action: action.into(),
            source,
        }
    }

    /// The same error, marked as coming from the downstream cluster when it is a request error.
    pub fn in_downstream(self) -> Self {
        match self {
            Error::Kube { action, source } => Error::Downstream { action, source },
            other => other,
        }
    }
}

/// `Result` with the agent's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Whether a kube error is the API's 404.
pub fn is_not_found(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 404)
}

/// Whether an answer about one named object says it cannot exist or was never created: 404 (no such
/// object, or its kind is not served), 400 (a request that cannot address an object, e.g. an empty
/// namespace), 405 (a kind that is never stored), or a kind discovery does not know.
pub fn is_gone(err: &kube::Error) -> bool {
    match err {
        kube::Error::Api(status) => matches!(status.code, 400 | 404 | 405),
        kube::Error::Discovery(_) => true,
        _ => false,
    }
}

/// Whether resolving an object's API (kind and namespace) says it cannot exist: see [`is_gone`].
pub fn is_gone_kind(err: &Error) -> bool {
    match err {
        Error::NoNamespace { .. } => true,
        Error::Kube { source, .. } | Error::Downstream { source, .. } => is_gone(source),
        _ => false,
    }
}

/// Whether a kube error is the API's 409 (an apply conflict or an existing object).
pub fn is_conflict(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 409)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_error(code: u16, message: &str) -> kube::Error {
        kube::Error::Api(Box::new(
            serde_json::from_value(serde_json::json!({
                "status": "Failure", "code": code, "message": message, "reason": "NotFound",
            }))
            .unwrap(),
        ))
    }

    #[test]
    fn a_downstream_request_error_is_its_own_kind_and_keeps_its_message() {
        let hub = Error::kube("reading content s-1", api_error(500, "etcd down"));
        assert!(matches!(hub, Error::Kube { .. }));
        let downstream = Error::kube("applying x", api_error(404, "not found")).in_downstream();
        assert!(matches!(downstream, Error::Downstream { .. }));
        assert!(
            downstream
                .to_string()
                .starts_with("downstream: applying x: "),
            "{downstream}"
        );
        // Resolving an object's kind downstream still counts as "cannot exist" when the API says so.
        assert!(is_gone_kind(&downstream));
        // Errors that are not requests stay as they are.
        let content = Error::Content {
            name: "s-1".into(),
            message: "bad".into(),
        }
        .in_downstream();
        assert!(matches!(content, Error::Content { .. }));
    }
}
