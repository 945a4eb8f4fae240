//! One conversation with a remote: opening the cache's bare repository with isolated configuration, and
//! connecting to the source's URL with its credentials, TLS settings and ssh wrapper in place.

use std::ffi::OsString;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gix::protocol::transport::client::blocking_io::http;
use gix::remote::Direction;

use crate::classify::{Operation, classify};
use crate::error::GitError;

use crate::source::{GitAuth, GitSource};
use crate::ssh::SshSession;

/// The transport gix picks for a URL.
type BoxedTransport = Box<dyn gix::protocol::transport::client::blocking_io::Transport + Send>;

/// The bare repository at `dir`, created if missing, opened without reading user or system configuration.
/// Failures here concern the local cache, never the remote, so they are all [`GitError::Corrupt`].
pub(crate) fn open_bare(
    dir: &Path,
    source: &GitSource,
    overrides: Vec<String>,
) -> Result<gix::Repository, GitError> {
    let corrupt = |reason: String| GitError::Corrupt {
        url: source.display_url(),
        reason: format!("{}: {reason}", dir.display()),
    };
    if !dir.join("HEAD").exists() {
        std::fs::create_dir_all(dir).map_err(|err| corrupt(format!("cannot create: {err}")))?;
        gix::init_bare(dir).map_err(|err| corrupt(format!("cannot initialise: {err}")))?;
    }
    let options = gix::open::Options::isolated().config_overrides(overrides);
    gix::open_opts(dir, options).map_err(|err| corrupt(format!("cannot open: {err}")))
}

/// Everything a connection needs that must outlive it: the repository with the right overrides and, for
/// ssh, the key files.
pub(crate) struct Session {
    pub(crate) repo: gix::Repository,
    ssh: Option<SshSession>,
    source: GitSource,
}

impl Session {
    /// Opens the cache repository at `dir` set up to talk to `source`.
    pub(crate) fn open(
        dir: &Path,
        source: &GitSource,
        ssh_program: &OsString,
    ) -> Result<Self, GitError> {
        let is_ssh = is_ssh_url(&source.url);
        let ssh = is_ssh
            .then(|| SshSession::new(ssh_program, &source.auth))
            .transpose()?;
        let mut overrides = vec!["protocol.version=2".to_string()];
        if let Some(ssh) = &ssh {
            overrides.push(format!("core.sshCommand={}", ssh.command().display()));
            overrides.push("ssh.variant=ssh".to_string());
        }
        let repo = open_bare(dir, source, overrides)?;
        Ok(Self {
            repo,
            ssh,
            source: source.clone(),
        })
    }

    /// A remote for the source's URL with `refspecs` and no implicit tag following.
    pub(crate) fn remote(&self, refspecs: &[String]) -> Result<gix::Remote<'_>, GitError> {
        self.repo
            .remote_at(self.source.url.as_str())
            .and_then(|remote| {
                remote.with_refspecs(refspecs.iter().map(String::as_str), Direction::Fetch)
            })
            .map(|remote| remote.with_fetch_tags(gix::remote::fetch::Tags::None))
            .map_err(|err| self.error(&err, Operation::ListRefs))
    }

    /// Connects `remote` with the source's credentials and TLS settings.
    pub(crate) fn connect<'r, 'repo>(
        &self,
        remote: &'r gix::Remote<'repo>,
        operation: Operation,
    ) -> Result<gix::remote::Connection<'r, 'static, 'repo, BoxedTransport>, GitError> {
        // Refused before any request: gix would also refuse, but only once the server has asked for them.
        if matches!(
            self.source.auth,
            GitAuth::Basic { .. } | GitAuth::GitHubApp(_)
        ) && is_plain_http_url(&self.source.url)
        {
            return Err(GitError::InsecureCredentials {
                url: self.source.display_url(),
            });
        }
        let mut connection = remote
            .connect(Direction::Fetch)
            .map_err(|err| self.error(&err, operation))?;
        let account = match &self.source.auth {
            GitAuth::Basic { username, password } => Some(gix::sec::identity::Account {
                username: username.clone(),
                password: password.clone(),
                oauth_refresh_token: None,
            }),
            GitAuth::GitHubApp(app) => Some(gix::sec::identity::Account {
                username: crate::github_app::TOKEN_USERNAME.to_string(),
                password: app.token(
                    &self.source.url,
                    self.source.ca_bundle.as_deref(),
                    self.source.insecure_skip_tls_verify,
                )?,
                oauth_refresh_token: None,
            }),
            _ => None,
        };
        connection.set_credentials(move |action| match action {
            gix::credentials::helper::Action::Get(context) => {
                Ok(account
                    .clone()
                    .map(|identity| gix::credentials::protocol::Outcome {
                        identity,
                        next: context.into(),
                    }))
            }
            _ => Ok(None),
        });
        if is_http_url(&self.source.url) {
            let tls = fleet_tls::client_config(
                self.source.ca_bundle.as_deref(),
                self.source.insecure_skip_tls_verify,
            )
            .map_err(|err| GitError::Tls {
                url: self.source.display_url(),
                reason: err.to_string(),
            })?;
            let timeout = http_timeout(operation);
            let backend = http::reqwest::Options {
                configure_client: Some(Box::new(
                    move |builder: reqwest::blocking::ClientBuilder| {
                        Ok(builder
                            .tls_backend_preconfigured(tls.clone())
                            .timeout(timeout))
                    },
                )),
                configure_request: None,
            };
            let options = http::Options {
                backend: Some(Arc::new(Mutex::new(backend))),
                ..Default::default()
            };
            connection.set_transport_options(Box::new(options));
        }
        Ok(connection)
    }

    /// Classifies a gix error of this session.
    pub(crate) fn error(&self, err: &gix::error::Error, operation: Operation) -> GitError {
        let stderr = self
            .ssh
            .as_ref()
            .map(SshSession::stderr)
            .unwrap_or_default();
        classify(err, &self.source, operation, &stderr)
    }
}

/// How long one HTTP request may take: listing refs gets Fleet's `gitClientTimeout` (30 s); a pack download
/// may take longer.
fn http_timeout(operation: Operation) -> Duration {
    match operation {
        Operation::ListRefs => Duration::from_secs(30),
        Operation::Fetch | Operation::Read => Duration::from_secs(600),
    }
}

fn is_http_url(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://")
}

fn is_plain_http_url(url: &str) -> bool {
    url.trim().to_ascii_lowercase().starts_with("http://")
}

fn is_ssh_url(url: &str) -> bool {
    let url = url.trim();
    if let Some(pos) = url.find("://") {
        let scheme = url[..pos].to_ascii_lowercase();
        return scheme == "ssh" || scheme == "git+ssh" || scheme == "ssh+git";
    }
    // scp-style `user@host:path` (a ':' before any '/').
    url.find(':')
        .is_some_and(|colon| colon > 0 && !url[..colon].contains('/'))
}
