//! Pushing over smart HTTP(S): `GET info/refs?service=git-receive-pack` for the server's refs, then one
//! `POST git-receive-pack` with the update command and the pack. Credentials, `caBundle` and
//! `insecureSkipTLSVerify` as for fetching.

use std::time::Duration;

use crate::error::GitError;
use crate::push::protocol::{self, Advertisement, Report};
use crate::source::{GitAuth, GitSource};

/// A client for one remote.
pub(crate) struct HttpRemote<'a> {
    source: &'a GitSource,
    client: reqwest::blocking::Client,
    base: String,
}

impl<'a> HttpRemote<'a> {
    pub(crate) fn new(source: &'a GitSource) -> Result<Self, GitError> {
        if matches!(source.auth, GitAuth::Basic { .. })
            && source
                .url
                .trim()
                .to_ascii_lowercase()
                .starts_with("http://")
        {
            return Err(GitError::InsecureCredentials {
                url: source.display_url(),
            });
        }
        let tls =
            fleet_tls::client_config(source.ca_bundle.as_deref(), source.insecure_skip_tls_verify)
                .map_err(|err| GitError::Tls {
                    url: source.display_url(),
                    reason: err.to_string(),
                })?;
        let client = reqwest::blocking::Client::builder()
            .tls_backend_preconfigured(tls)
            .timeout(Duration::from_secs(600))
            .connect_timeout(Duration::from_secs(30))
            .build()
            .map_err(|err| GitError::Other {
                url: source.display_url(),
                reason: format!("cannot build an HTTP client: {err}"),
            })?;
        Ok(Self {
            source,
            client,
            base: source.url.trim().trim_end_matches('/').to_string(),
        })
    }

    /// The refs the server would update.
    pub(crate) fn advertisement(&self) -> Result<Advertisement, GitError> {
        let request = self
            .client
            .get(format!("{}/info/refs?service=git-receive-pack", self.base));
        let body = self.send(request, "application/x-git-receive-pack-advertisement")?;
        protocol::parse_advertisement(&body).map_err(|reason| self.other(reason))
    }

    /// Sends the update command and pack; the server's report.
    pub(crate) fn receive_pack(&self, body: Vec<u8>, reference: &str) -> Result<Report, GitError> {
        let request = self
            .client
            .post(format!("{}/git-receive-pack", self.base))
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-git-receive-pack-request",
            )
            .header(
                reqwest::header::ACCEPT,
                "application/x-git-receive-pack-result",
            )
            .body(body);
        let answer = self.send(request, "application/x-git-receive-pack-result")?;
        protocol::parse_report(&answer, reference).map_err(|reason| self.other(reason))
    }

    /// Sends `request` with the source's credentials; the body of a successful answer of `content_type`.
    fn send(
        &self,
        mut request: reqwest::blocking::RequestBuilder,
        content_type: &str,
    ) -> Result<Vec<u8>, GitError> {
        if let GitAuth::Basic { username, password } = &self.source.auth {
            request = request.basic_auth(username, Some(password));
        }
        let url = self.source.display_url();
        let response = request.send().map_err(|err| {
            let text = crate::classify::scrub(&error_chain(&err), self.source);
            let lower = text.to_ascii_lowercase();
            if lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake")
            {
                GitError::Tls {
                    url: url.clone(),
                    reason: text,
                }
            } else {
                GitError::Unreachable {
                    url: url.clone(),
                    reason: text,
                }
            }
        })?;
        let status = response.status();
        match status.as_u16() {
            401 | 403 => return Err(GitError::AuthenticationFailed { url }),
            404 => return Err(GitError::RepositoryNotFound { url }),
            _ if !status.is_success() => {
                return Err(self.other(format!("the server answered {status}")));
            }
            _ => {}
        }
        let actual = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_string();
        if actual != content_type {
            // A dumb HTTP server (or a login page) answers without the smart protocol's content type.
            return Err(self.other(format!(
                "the server does not speak git's smart HTTP protocol for pushing (content type {actual:?})"
            )));
        }
        response
            .bytes()
            .map(|bytes| bytes.to_vec())
            .map_err(|err| GitError::Unreachable {
                url,
                reason: crate::classify::scrub(&error_chain(&err), self.source),
            })
    }

    fn other(&self, reason: String) -> GitError {
        GitError::Other {
            url: self.source.display_url(),
            reason,
        }
    }
}

/// An error and its sources, one line.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
