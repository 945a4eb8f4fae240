//! Push webhooks: [`verify_and_parse`] checks a request from GitHub, GitLab, Bitbucket Cloud, Bitbucket
//! Server, Gogs/Gitea or Azure DevOps against the shared secret (HMAC signature, token or basic auth) and
//! extracts the repository URLs, branch or tag, and commit. [`PushEvent::matches`] applies Fleet's rule for
//! which GitRepos a push concerns (same normalized URL; same branch when the GitRepo names one; never a
//! GitRepo pinned to a revision). Errors map to HTTP statuses with [`WebhookError::status`].

mod azure;
mod bitbucket;
mod github;
mod gitlab;
mod gogs;
mod signature;

use std::collections::BTreeMap;

use http::{HeaderMap, Method, StatusCode};

pub use crate::url::normalize_url;

/// The git host a webhook came from, told by its headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    GitHub,
    GitLab,
    BitbucketCloud,
    BitbucketServer,
    /// Gogs and Gitea (Gitea sends Gogs' headers too).
    Gogs,
    AzureDevOps,
}

impl Provider {
    /// Detects the provider in Fleet's order: Gogs/Gitea first (Gitea also sends GitHub's event header),
    /// then GitHub, GitLab, Bitbucket Cloud (`X-Hook-UUID`), Bitbucket Server (`X-Event-Key`), Azure DevOps
    /// (`X-Vss-*`).
    pub fn detect(headers: &HeaderMap) -> Option<Self> {
        let has = |name: &str| headers.contains_key(name);
        if has("x-gogs-event") || has("x-gitea-event") {
            Some(Self::Gogs)
        } else if has("x-github-event") {
            Some(Self::GitHub)
        } else if has("x-gitlab-event") {
            Some(Self::GitLab)
        } else if has("x-hook-uuid") {
            Some(Self::BitbucketCloud)
        } else if has("x-event-key") {
            Some(Self::BitbucketServer)
        } else if headers
            .keys()
            .any(|name| name.as_str().starts_with("x-vss-"))
        {
            Some(Self::AzureDevOps)
        } else {
            None
        }
    }

    /// The key of this provider's secret in Fleet's webhook secret (`gitjob-webhook` or `spec.webhookSecret`).
    /// Azure DevOps uses two keys, `azure-username` and `azure-password`: see [`secret_for`].
    pub fn secret_key(self) -> &'static str {
        match self {
            Self::GitHub => "github",
            Self::GitLab => "gitlab",
            Self::BitbucketCloud => "bitbucket",
            Self::BitbucketServer => "bitbucket-server",
            Self::Gogs => "gogs",
            Self::AzureDevOps => "azure-username",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::GitHub => "GitHub",
            Self::GitLab => "GitLab",
            Self::BitbucketCloud => "Bitbucket Cloud",
            Self::BitbucketServer => "Bitbucket Server",
            Self::Gogs => "Gogs/Gitea",
            Self::AzureDevOps => "Azure DevOps",
        }
    }
}

/// The secret for `provider` from a webhook secret's data, in the form [`verify_and_parse`] takes: the HMAC
/// key or token, or for Azure DevOps `username:password`. `None` when the secret has no entry for it.
pub fn secret_for(provider: Provider, data: &BTreeMap<String, Vec<u8>>) -> Option<Vec<u8>> {
    if provider == Provider::AzureDevOps {
        let username = data.get("azure-username")?;
        let password = data.get("azure-password")?;
        let mut joined = username.clone();
        joined.push(b':');
        joined.extend_from_slice(password);
        return Some(joined);
    }
    data.get(provider.secret_key()).cloned()
}

/// What a push changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushEvent {
    pub provider: Provider,
    /// Every URL the payload gives for the repository (web, https clone, ssh clone), as sent.
    pub repo_urls: Vec<String>,
    /// The branch pushed to (`refs/heads/<branch>`), if a branch was pushed.
    pub branch: Option<String>,
    /// The tag pushed (`refs/tags/<tag>`), if a tag was pushed.
    pub tag: Option<String>,
    /// The new commit, when the push did not delete the ref.
    pub commit: Option<String>,
}

impl PushEvent {
    /// Whether a GitRepo with `repo`, `branch` and `revision` follows this push, as Fleet decides: GitRepos
    /// pinned to a revision never do; the URLs must be equal once normalized; a named branch must be the
    /// pushed branch.
    pub fn matches(&self, repo: &str, branch: Option<&str>, revision: Option<&str>) -> bool {
        if revision.is_some_and(|r| !r.trim().is_empty()) {
            return false;
        }
        let wanted = normalize_url(repo);
        if !self
            .repo_urls
            .iter()
            .any(|url| normalize_url(url) == wanted)
        {
            return false;
        }
        match branch.map(str::trim).filter(|b| !b.is_empty()) {
            Some(branch) => self.branch.as_deref() == Some(branch),
            None => true,
        }
    }

    /// Builds an event from a pushed ref name and new commit (all zeros means the ref was deleted).
    pub(crate) fn from_ref(
        provider: Provider,
        repo_urls: Vec<String>,
        reference: &str,
        commit: Option<&str>,
    ) -> Self {
        let (branch, tag) = split_ref(reference);
        let mut urls: Vec<String> = Vec::new();
        for url in repo_urls {
            if !url.is_empty() && !urls.contains(&url) {
                urls.push(url);
            }
        }
        Self {
            provider,
            repo_urls: urls,
            branch,
            tag,
            commit: commit
                .filter(|c| !c.is_empty() && !c.bytes().all(|b| b == b'0'))
                .map(str::to_string),
        }
    }
}

/// `refs/heads/x` → branch `x`; `refs/tags/v1` → tag `v1`; anything else names neither.
fn split_ref(reference: &str) -> (Option<String>, Option<String>) {
    if let Some(branch) = reference.strip_prefix("refs/heads/") {
        (Some(branch.to_string()), None)
    } else if let Some(tag) = reference.strip_prefix("refs/tags/") {
        (None, Some(tag.to_string()))
    } else {
        (None, None)
    }
}

/// Why a webhook request was not turned into a [`PushEvent`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookError {
    #[error("method {method} not allowed: webhooks are POSTed")]
    MethodNotAllowed { method: String },
    #[error("{provider} webhook rejected: {reason}")]
    Unauthorized {
        provider: &'static str,
        reason: String,
    },
    #[error(
        "unknown webhook sender: expected a GitHub, GitLab, Bitbucket, Gogs/Gitea or Azure DevOps event header"
    )]
    UnknownProvider,
    #[error("{provider} event {event:?} ignored: only pushes trigger a sync")]
    Ignored {
        provider: &'static str,
        event: String,
    },
    #[error("{provider} webhook payload is invalid: {reason}")]
    BadPayload {
        provider: &'static str,
        reason: String,
    },
}

impl WebhookError {
    /// The HTTP status to answer with: 405, 401, 400, or 200 for events that are fine but not pushes.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            Self::Unauthorized { .. } => StatusCode::UNAUTHORIZED,
            Self::UnknownProvider | Self::BadPayload { .. } => StatusCode::BAD_REQUEST,
            Self::Ignored { .. } => StatusCode::OK,
        }
    }
}

/// Verifies a webhook request against `secret` (see [`secret_for`]) and parses its push. Without a secret,
/// requests are accepted unverified, as Fleet still does (with a warning in the log).
pub fn verify_and_parse(
    method: &Method,
    headers: &HeaderMap,
    body: &[u8],
    secret: Option<&[u8]>,
) -> Result<PushEvent, WebhookError> {
    if method != Method::POST {
        return Err(WebhookError::MethodNotAllowed {
            method: method.to_string(),
        });
    }
    let provider = Provider::detect(headers).ok_or(WebhookError::UnknownProvider)?;
    match secret {
        Some(secret) => verify(provider, headers, body, secret)?,
        None => tracing::warn!(
            provider = provider.name(),
            "accepting an unauthenticated webhook: configure a webhook secret"
        ),
    }
    match provider {
        Provider::GitHub => github::parse(headers, body),
        Provider::GitLab => gitlab::parse(headers, body),
        Provider::BitbucketCloud => bitbucket::parse_cloud(headers, body),
        Provider::BitbucketServer => bitbucket::parse_server(headers, body),
        Provider::Gogs => gogs::parse(headers, body),
        Provider::AzureDevOps => azure::parse(body),
    }
}

fn verify(
    provider: Provider,
    headers: &HeaderMap,
    body: &[u8],
    secret: &[u8],
) -> Result<(), WebhookError> {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    let verdict = match provider {
        Provider::GitHub => {
            signature::check_prefixed_hmac(header("x-hub-signature-256"), secret, body)
        }
        Provider::GitLab => signature::check_token(header("x-gitlab-token"), secret),
        Provider::BitbucketCloud => match header("x-hub-signature") {
            Some(_) => signature::check_prefixed_hmac(header("x-hub-signature"), secret, body),
            // Webhooks made before Bitbucket Cloud had secrets are checked by their UUID, as Fleet does.
            None => signature::check_token(header("x-hook-uuid"), secret),
        },
        Provider::BitbucketServer => {
            signature::check_prefixed_hmac(header("x-hub-signature"), secret, body)
        }
        Provider::Gogs => signature::check_hex_hmac(
            header("x-gitea-signature").or(header("x-gogs-signature")),
            secret,
            body,
        ),
        Provider::AzureDevOps => signature::check_basic_auth(header("authorization"), secret),
    };
    verdict.map_err(|reason| WebhookError::Unauthorized {
        provider: provider.name(),
        reason,
    })
}

/// Parses `body` as JSON into `T`, naming the provider and serde's path on failure.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(
    provider: Provider,
    body: &[u8],
) -> Result<T, WebhookError> {
    serde_json::from_slice(body).map_err(|err| WebhookError::BadPayload {
        provider: provider.name(),
        reason: err.to_string(),
    })
}

/// The value of header `name`, or `""`.
pub(crate) fn header_str<'h>(headers: &'h HeaderMap, name: &str) -> &'h str {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
}

/// `Ignored` unless `event` is one of `pushes`.
pub(crate) fn require_push(
    provider: Provider,
    event: &str,
    pushes: &[&str],
) -> Result<(), WebhookError> {
    if pushes.contains(&event) {
        Ok(())
    } else {
        Err(WebhookError::Ignored {
            provider: provider.name(),
            event: event.to_string(),
        })
    }
}

#[cfg(test)]
pub(crate) mod test_support;
