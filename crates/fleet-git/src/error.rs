//! [`GitError`]: what went wrong talking to a remote, in words a user can act on. gix's errors become these in
//! [`crate::classify`]; every message is scrubbed of credentials.

/// Errors of [`crate::GitCache`]. URLs in them never carry user info; reasons never carry a password or key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitError {
    #[error(
        "authentication to {url} failed: check the username and password (or token) or the ssh key in the GitRepo's clientSecretName secret"
    )]
    AuthenticationFailed { url: String },
    #[error("{reference} not found in {url}: check the GitRepo's branch or revision")]
    RefNotFound { url: String, reference: String },
    #[error(
        "repository {url} not found: check the GitRepo's repo URL and that the credentials may read it"
    )]
    RepositoryNotFound { url: String },
    #[error("cannot reach {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error(
        "host key verification failed for {url}: add the server's key to known_hosts in the clientSecretName secret, or set insecureSkipHostKeyChecks"
    )]
    HostKeyMismatch { url: String },
    #[error(
        "TLS connection to {url} failed: {reason} (set caBundle to trust a private CA, or insecureSkipTLSVerify)"
    )]
    Tls { url: String, reason: String },
    #[error("refusing to send credentials to {url} over plain http: use an https:// URL")]
    InsecureCredentials { url: String },
    #[error("commit {commit} of {url} is not in the local cache: fetch it first")]
    NotFetched { url: String, commit: String },
    #[error("the cached repository for {url} is corrupt: {reason}")]
    Corrupt { url: String, reason: String },
    #[error(
        "push to {reference} of {url} was rejected: {reason} (the branch is fetched again and the change retried)"
    )]
    PushRejected {
        url: String,
        reference: String,
        reason: String,
    },
    #[error(
        "GitHub App authentication at {api} failed: {reason} (check github_app_id, github_app_installation_id and github_app_private_key in the clientSecretName secret)"
    )]
    GitHubApp { api: String, reason: String },
    #[error("invalid git credentials secret: {reason}")]
    InvalidSecret { reason: String },
    #[error("git operation on {url} failed: {reason}")]
    Other { url: String, reason: String },
}
