//! GitHub App credentials in a `clientSecretName` Secret (`github_app_id`, `github_app_installation_id`,
//! `github_app_private_key`), exchanged for an installation access token the way Fleet does it: a JWT signed
//! with the app's RSA key (RS256) is POSTed to `<api>/app/installations/<id>/access_tokens`, and the token
//! it answers with is the password of HTTP basic auth with the user name `x-access-token`.
//!
//! The API lives at `https://api.<host of the repo URL>` (or the host itself when it starts with `api.`), as in
//! Fleet's code (`internal/github/app.go`), so `github.com` and `*.ghe.com` work. The token request trusts the
//! GitRepo's `caBundle` and honours `insecureSkipTLSVerify` like the git requests do. Tokens are cached per
//! app, installation and API for 50 minutes (GitHub's tokens live one hour), so polling does not ask for a
//! new one every time.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

use crate::error::GitError;

/// The Secret keys of a GitHub App, as in Fleet.
pub const GITHUB_APP_ID_KEY: &str = "github_app_id";
pub const GITHUB_APP_INSTALLATION_ID_KEY: &str = "github_app_installation_id";
pub const GITHUB_APP_PRIVATE_KEY_KEY: &str = "github_app_private_key";

/// The user name GitHub wants with an installation token.
pub const TOKEN_USERNAME: &str = "x-access-token";

/// How long a token is reused.
const TOKEN_REUSE: Duration = Duration::from_secs(50 * 60);

/// What a cached token is for: the API, the app, the installation and the key.
type TokenKey = (String, i64, i64, String);

/// A GitHub App installation. `Debug` never prints the key.
#[derive(Clone, PartialEq, Eq)]
pub struct GitHubApp {
    pub app_id: i64,
    pub installation_id: i64,
    /// PEM of the app's RSA private key (`RSA PRIVATE KEY`, as GitHub issues it, or PKCS#8 `PRIVATE KEY`).
    pub private_key: String,
    /// The API base URL; `None` derives it from the repository URL as Fleet does.
    pub api_url: Option<String>,
}

impl std::fmt::Debug for GitHubApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitHubApp")
            .field("app_id", &self.app_id)
            .field("installation_id", &self.installation_id)
            .field("private_key", &"<redacted>")
            .field("api_url", &self.api_url)
            .finish()
    }
}

impl GitHubApp {
    /// The app of a Secret holding all three keys non-empty (Fleet's `HasGitHubAppKeys`), else `None`.
    pub fn from_secret(
        data: &std::collections::BTreeMap<String, Vec<u8>>,
    ) -> Result<Option<Self>, GitError> {
        let value = |key: &str| data.get(key).filter(|v| !v.is_empty());
        let (Some(id), Some(installation), Some(key)) = (
            value(GITHUB_APP_ID_KEY),
            value(GITHUB_APP_INSTALLATION_ID_KEY),
            value(GITHUB_APP_PRIVATE_KEY_KEY),
        ) else {
            return Ok(None);
        };
        let number = |key: &str, bytes: &[u8]| -> Result<i64, GitError> {
            std::str::from_utf8(bytes)
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .ok_or_else(|| GitError::InvalidSecret {
                    reason: format!("{key:?} is not a number"),
                })
        };
        Ok(Some(Self {
            app_id: number(GITHUB_APP_ID_KEY, id)?,
            installation_id: number(GITHUB_APP_INSTALLATION_ID_KEY, installation)?,
            private_key: String::from_utf8(key.clone()).map_err(|_| GitError::InvalidSecret {
                reason: format!("{GITHUB_APP_PRIVATE_KEY_KEY:?} is not UTF-8"),
            })?,
            api_url: None,
        }))
    }

    /// The JWT that authenticates the app itself, issued at `now` (seconds since the epoch): RS256, `iss` the
    /// app ID, valid from a minute before `now` (clock drift) for ten minutes, GitHub's maximum.
    pub fn jwt(&self, now: u64) -> Result<String, GitError> {
        let key = self.key_pair()?;
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256","typ":"JWT"}"#);
        let claims = serde_json::json!({
            "iat": now.saturating_sub(60),
            "exp": now + 540,
            "iss": self.app_id.to_string(),
        });
        let claims = URL_SAFE_NO_PAD.encode(claims.to_string());
        let message = format!("{header}.{claims}");
        let mut signature = vec![0; key.public().modulus_len()];
        key.sign(
            &ring::signature::RSA_PKCS1_SHA256,
            &ring::rand::SystemRandom::new(),
            message.as_bytes(),
            &mut signature,
        )
        .map_err(|_| invalid_key("signing failed"))?;
        Ok(format!("{message}.{}", URL_SAFE_NO_PAD.encode(signature)))
    }

    fn key_pair(&self) -> Result<ring::signature::RsaKeyPair, GitError> {
        let (label, der) = pem_block(&self.private_key).ok_or_else(|| invalid_key("not PEM"))?;
        match label.as_str() {
            "RSA PRIVATE KEY" => ring::signature::RsaKeyPair::from_der(&der)
                .map_err(|err| invalid_key(&format!("invalid RSA key: {err}"))),
            "PRIVATE KEY" => ring::signature::RsaKeyPair::from_pkcs8(&der)
                .map_err(|err| invalid_key(&format!("invalid RSA key: {err}"))),
            other => Err(invalid_key(&format!("unsupported key type {other:?}"))),
        }
    }

    /// The API base URL for a repository at `repo_url`.
    pub fn api_url_for(&self, repo_url: &str) -> Result<String, GitError> {
        if let Some(url) = &self.api_url {
            return Ok(url.trim_end_matches('/').to_string());
        }
        let host = repo_url
            .split_once("://")
            .map(|(_, rest)| rest)
            .and_then(|rest| rest.split('/').next())
            .map(|authority| authority.rsplit('@').next().unwrap_or(authority))
            .filter(|host| !host.is_empty())
            .ok_or_else(|| GitError::GitHubApp {
                api: String::new(),
                reason:
                    "the repo URL has no host to derive the GitHub API from; use an https:// URL"
                        .into(),
            })?;
        Ok(if host.starts_with("api.") {
            format!("https://{host}")
        } else {
            format!("https://api.{host}")
        })
    }

    /// An installation access token for the repository at `repo_url`, from the cache or from the API.
    /// `ca_bundle` and `insecure_skip_tls_verify` are the GitRepo's.
    pub fn token(
        &self,
        repo_url: &str,
        ca_bundle: Option<&[u8]>,
        insecure_skip_tls_verify: bool,
    ) -> Result<String, GitError> {
        static CACHE: LazyLock<Mutex<HashMap<TokenKey, (Instant, String)>>> =
            LazyLock::new(Default::default);
        let api = self.api_url_for(repo_url)?;
        // The key is part of the cache key so that a rotated (or wrong) key is never answered from the cache.
        let cache_key = (
            api.clone(),
            self.app_id,
            self.installation_id,
            self.private_key.clone(),
        );
        if let Some((at, token)) = CACHE.lock().ok().and_then(|c| c.get(&cache_key).cloned())
            && at.elapsed() < TOKEN_REUSE
        {
            return Ok(token);
        }
        let tls = fleet_tls::client_config(ca_bundle, insecure_skip_tls_verify).map_err(|err| {
            GitError::Tls {
                url: api.clone(),
                reason: err.to_string(),
            }
        })?;
        let client = reqwest::blocking::Client::builder()
            .tls_backend_preconfigured(tls)
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|err| GitError::GitHubApp {
                api: api.clone(),
                reason: format!("cannot build an HTTP client: {err}"),
            })?;
        let token = self.request_token(&api, &client)?;
        if let Ok(mut cache) = CACHE.lock() {
            cache.insert(cache_key, (Instant::now(), token.clone()));
        }
        Ok(token)
    }

    fn request_token(
        &self,
        api: &str,
        client: &reqwest::blocking::Client,
    ) -> Result<String, GitError> {
        let failed = |reason: String| GitError::GitHubApp {
            api: api.to_string(),
            reason,
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let jwt = self.jwt(now)?;
        let url = format!(
            "{api}/app/installations/{}/access_tokens",
            self.installation_id
        );
        let response = client
            .post(&url)
            .bearer_auth(jwt)
            .header("Accept", "application/vnd.github+json")
            .header("User-Agent", "fleet")
            .send()
            .map_err(|err| failed(format!("request failed: {}", without_url(&err))))?;
        let status = response.status();
        let body: serde_json::Value = response
            .text()
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        if !status.is_success() {
            let message = body["message"].as_str().unwrap_or("");
            return Err(failed(format!(
                "installation {} of app {}: HTTP {status} {message}",
                self.installation_id, self.app_id
            )));
        }
        body["token"]
            .as_str()
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .ok_or_else(|| failed("the answer holds no token".into()))
    }
}

fn invalid_key(reason: &str) -> GitError {
    GitError::InvalidSecret {
        reason: format!("{GITHUB_APP_PRIVATE_KEY_KEY:?}: {reason}"),
    }
}

/// A reqwest error's text without its URL (which carries nothing secret, but is reported separately).
fn without_url(err: &reqwest::Error) -> String {
    let mut text = err.to_string();
    if let Some(url) = err.url() {
        text = text.replace(&format!(" for url ({url})"), "");
    }
    let mut source = std::error::Error::source(err);
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}

/// The label and bytes of the first PEM block of `text`.
fn pem_block(text: &str) -> Option<(String, Vec<u8>)> {
    let begin = text.find("-----BEGIN ")?;
    let rest = &text[begin + "-----BEGIN ".len()..];
    let label_end = rest.find("-----")?;
    let label = rest[..label_end].to_string();
    let body = &rest[label_end + 5..];
    let end = body.find(&format!("-----END {label}-----"))?;
    let base64: String = body[..end].chars().filter(|c| !c.is_whitespace()).collect();
    Some((label, STANDARD.decode(base64).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(api_url: Option<&str>) -> GitHubApp {
        GitHubApp {
            app_id: 1,
            installation_id: 2,
            private_key: String::new(),
            api_url: api_url.map(str::to_string),
        }
    }

    /// Fleet's `getBaseURL`.
    #[test]
    fn api_url_follows_the_repo_host() {
        let app = app(None);
        assert_eq!(
            app.api_url_for("https://github.com/o/r").unwrap(),
            "https://api.github.com"
        );
        assert_eq!(
            app.api_url_for("https://octo.ghe.com/o/r.git").unwrap(),
            "https://api.octo.ghe.com"
        );
        assert_eq!(
            app.api_url_for("https://api.example.com/o/r").unwrap(),
            "https://api.example.com"
        );
        assert!(app.api_url_for("git@github.com:o/r").is_err());
    }

    #[test]
    fn secret_needs_all_three_keys_and_numbers() {
        let data = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
                .collect()
        };
        assert_eq!(
            GitHubApp::from_secret(&data(&[(GITHUB_APP_ID_KEY, "1")])).unwrap(),
            None
        );
        let app = GitHubApp::from_secret(&data(&[
            (GITHUB_APP_ID_KEY, "12"),
            (GITHUB_APP_INSTALLATION_ID_KEY, "34"),
            (
                GITHUB_APP_PRIVATE_KEY_KEY,
                "-----BEGIN RSA PRIVATE KEY-----\nsecret",
            ),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!((app.app_id, app.installation_id), (12, 34));
        assert!(!format!("{app:?}").contains("secret"));
        let err = GitHubApp::from_secret(&data(&[
            (GITHUB_APP_ID_KEY, "twelve"),
            (GITHUB_APP_INSTALLATION_ID_KEY, "34"),
            (GITHUB_APP_PRIVATE_KEY_KEY, "k"),
        ]))
        .unwrap_err();
        assert!(err.to_string().contains(GITHUB_APP_ID_KEY), "{err}");
    }

    #[test]
    fn a_key_that_is_not_rsa_pem_is_refused_without_its_text() {
        let mut app = app(None);
        app.private_key = "not a key at all".into();
        let err = app.jwt(0).unwrap_err();
        assert!(err.to_string().contains("not PEM"), "{err}");
        assert!(!err.to_string().contains("not a key at all"), "{err}");
    }
}
