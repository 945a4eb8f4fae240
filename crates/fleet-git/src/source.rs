//! What to fetch and how to authenticate: [`GitSource`] (a GitRepo's `repo`, `branch`, `revision`, TLS settings)
//! and [`GitAuth`], built from the Kubernetes secret named by `clientSecretName`.

use std::collections::BTreeMap;

use crate::error::GitError;
use crate::github_app::GitHubApp;
use crate::url::redact_url;

/// The branch Fleet follows when a GitRepo names neither a branch nor a revision.
pub const DEFAULT_BRANCH: &str = "master";

/// One remote and the ref of it to follow.
#[derive(Clone, PartialEq, Eq)]
pub struct GitSource {
    /// `https://`, `http://`, `ssh://`, scp-style `user@host:path`, `file://` or a plain local path.
    pub url: String,
    /// The branch to follow (default [`DEFAULT_BRANCH`]); ignored when `revision` is set.
    pub branch: Option<String>,
    /// A commit SHA, a tag (annotated tags are peeled to their commit) or a branch name; wins over `branch`.
    pub revision: Option<String>,
    pub auth: GitAuth,
    /// PEM certificates trusted in addition to the system roots for `https://` remotes (`caBundle`).
    pub ca_bundle: Option<Vec<u8>>,
    /// Accept any server certificate (`insecureSkipTLSVerify`).
    pub insecure_skip_tls_verify: bool,
}

impl GitSource {
    /// A source for `url` following the default branch, without credentials.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            branch: None,
            revision: None,
            auth: GitAuth::None,
            ca_bundle: None,
            insecure_skip_tls_verify: false,
        }
    }

    /// The URL with any user name and password removed, for messages and logs.
    pub fn display_url(&self) -> String {
        redact_url(&self.url)
    }
}

impl std::fmt::Debug for GitSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitSource")
            .field("url", &self.display_url())
            .field("branch", &self.branch)
            .field("revision", &self.revision)
            .field("auth", &self.auth)
            .field("ca_bundle", &self.ca_bundle.as_ref().map(Vec::len))
            .field("insecure_skip_tls_verify", &self.insecure_skip_tls_verify)
            .finish()
    }
}

/// Credentials for a remote. `Debug` never prints a password or key.
#[derive(Clone, PartialEq, Eq, Default)]
pub enum GitAuth {
    #[default]
    None,
    /// HTTP(S) basic authentication; a token goes in `password`.
    Basic { username: String, password: String },
    /// An SSH private key (OpenSSH or PEM format) and the `known_hosts` lines the server must match.
    Ssh {
        private_key: String,
        known_hosts: Option<String>,
        insecure_skip_host_key_checks: bool,
    },
    /// A GitHub App installation: its token is fetched when connecting and sent as basic auth.
    GitHubApp(GitHubApp),
}

/// The Kubernetes secret types Fleet accepts for `clientSecretName`.
pub const BASIC_AUTH_SECRET_TYPE: &str = "kubernetes.io/basic-auth";
pub const SSH_AUTH_SECRET_TYPE: &str = "kubernetes.io/ssh-auth";

impl GitAuth {
    /// Reads a `kubernetes.io/basic-auth` secret (`username`, `password`) or a `kubernetes.io/ssh-auth` secret
    /// (`ssh-privatekey`, optional `known_hosts`) as Fleet does. An empty or unknown type is read by its keys,
    /// as Fleet's own secrets (`Opaque` with the same keys) are. Host key checks are enforced; the caller sets
    /// `insecure_skip_host_key_checks` from the GitRepo afterwards. A secret of any type holding the three
    /// GitHub App keys is a [`GitHubApp`] (Fleet checks for them before anything else).
    pub fn from_secret(type_: &str, data: &BTreeMap<String, Vec<u8>>) -> Result<Self, GitError> {
        if let Some(app) = GitHubApp::from_secret(data)? {
            return Ok(Self::GitHubApp(app));
        }
        let text = |key: &str| -> Result<Option<String>, GitError> {
            data.get(key)
                .map(|bytes| {
                    String::from_utf8(bytes.clone()).map_err(|_| GitError::InvalidSecret {
                        reason: format!("key {key:?} is not UTF-8"),
                    })
                })
                .transpose()
        };
        let basic = || -> Result<Self, GitError> {
            let username = text("username")?.unwrap_or_default();
            let password = text("password")?.ok_or_else(|| GitError::InvalidSecret {
                reason: format!("a {BASIC_AUTH_SECRET_TYPE} secret needs the key \"password\""),
            })?;
            Ok(Self::Basic { username, password })
        };
        let ssh = || -> Result<Self, GitError> {
            let private_key = text("ssh-privatekey")?
                .filter(|key| !key.trim().is_empty())
                .ok_or_else(|| GitError::InvalidSecret {
                    reason: format!(
                        "a {SSH_AUTH_SECRET_TYPE} secret needs the key \"ssh-privatekey\""
                    ),
                })?;
            Ok(Self::Ssh {
                private_key,
                known_hosts: text("known_hosts")?.filter(|hosts| !hosts.trim().is_empty()),
                insecure_skip_host_key_checks: false,
            })
        };
        match type_ {
            BASIC_AUTH_SECRET_TYPE => basic(),
            SSH_AUTH_SECRET_TYPE => ssh(),
            _ if data.contains_key("ssh-privatekey") => ssh(),
            _ if data.contains_key("password") => basic(),
            other => Err(GitError::InvalidSecret {
                reason: format!(
                    "secret type {other:?} holds neither \"ssh-privatekey\" nor \"username\"/\"password\"; \
                     use {BASIC_AUTH_SECRET_TYPE} or {SSH_AUTH_SECRET_TYPE}"
                ),
            }),
        }
    }

    /// The secret strings of these credentials, so that messages can be scrubbed of them.
    pub(crate) fn secrets(&self) -> Vec<&str> {
        match self {
            Self::None => Vec::new(),
            Self::Basic { password, .. } => vec![password.as_str()],
            Self::Ssh { private_key, .. } => vec![private_key.as_str()],
            Self::GitHubApp(app) => vec![app.private_key.as_str()],
        }
    }
}

impl std::fmt::Debug for GitAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::None => f.write_str("None"),
            Self::Basic { username, .. } => f
                .debug_struct("Basic")
                .field("username", username)
                .field("password", &"<redacted>")
                .finish(),
            Self::Ssh {
                known_hosts,
                insecure_skip_host_key_checks,
                ..
            } => f
                .debug_struct("Ssh")
                .field("private_key", &"<redacted>")
                .field("known_hosts", &known_hosts.as_ref().map(|_| "<set>"))
                .field(
                    "insecure_skip_host_key_checks",
                    insecure_skip_host_key_checks,
                )
                .finish(),
            Self::GitHubApp(app) => app.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn basic_auth_secret() {
        let auth = GitAuth::from_secret(
            BASIC_AUTH_SECRET_TYPE,
            &data(&[("username", "fleet"), ("password", "s3cret")]),
        )
        .unwrap();
        assert_eq!(
            auth,
            GitAuth::Basic {
                username: "fleet".into(),
                password: "s3cret".into()
            }
        );
        assert!(!format!("{auth:?}").contains("s3cret"));
    }

    #[test]
    fn ssh_auth_secret_with_known_hosts() {
        let auth = GitAuth::from_secret(
            SSH_AUTH_SECRET_TYPE,
            &data(&[
                ("ssh-privatekey", "-----BEGIN KEY-----\nabc\n"),
                ("known_hosts", "github.com ssh-ed25519 AAAA"),
            ]),
        )
        .unwrap();
        let GitAuth::Ssh {
            known_hosts,
            insecure_skip_host_key_checks,
            ..
        } = &auth
        else {
            panic!("{auth:?}");
        };
        assert_eq!(known_hosts.as_deref(), Some("github.com ssh-ed25519 AAAA"));
        assert!(!insecure_skip_host_key_checks);
        assert!(!format!("{auth:?}").contains("abc"));
    }

    #[test]
    fn opaque_secret_is_read_by_its_keys() {
        let auth = GitAuth::from_secret("Opaque", &data(&[("password", "token")])).unwrap();
        assert!(matches!(auth, GitAuth::Basic { .. }));
    }

    #[test]
    fn missing_keys_are_named() {
        let err = GitAuth::from_secret(SSH_AUTH_SECRET_TYPE, &data(&[])).unwrap_err();
        assert!(err.to_string().contains("ssh-privatekey"), "{err}");
        let err =
            GitAuth::from_secret(BASIC_AUTH_SECRET_TYPE, &data(&[("username", "u")])).unwrap_err();
        assert!(err.to_string().contains("\"password\""), "{err}");
        let err = GitAuth::from_secret("Opaque", &data(&[("token", "t")])).unwrap_err();
        assert!(err.to_string().contains("Opaque"), "{err}");
    }
}
