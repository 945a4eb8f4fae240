//! HTTP(S) clients per trust setting, and GETs (plain, or conditional on an entity tag) whose errors name the URL
//! without credentials.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use fleet_bundle::remote::redact_url;

use crate::auth::Auth;
use crate::error::SourceError;

/// Upper bound on one request, so a server that stops answering cannot hold a GitRepo forever.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// One reqwest client per (CA bundle, insecureSkipVerify), shared by every download with those settings.
#[derive(Default)]
pub(crate) struct Clients {
    clients: Mutex<HashMap<(Vec<u8>, bool), reqwest::Client>>,
}

impl Clients {
    pub(crate) fn get(&self, auth: &Auth) -> Result<reqwest::Client, SourceError> {
        let key = (auth.ca_bundle.clone(), auth.insecure_skip_verify);
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(client) = clients.get(&key) {
            return Ok(client.clone());
        }
        let tls = fleet_tls::client_config(Some(&auth.ca_bundle), auth.insecure_skip_verify)
            .map_err(|err| SourceError::Tls(err.to_string()))?;
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|err| SourceError::Tls(err.without_url().to_string()))?;
        clients.insert(key, client.clone());
        Ok(client)
    }
}

/// The error of a failed request, naming `url` without credentials.
pub(crate) fn request_error(url: &str, err: reqwest::Error) -> SourceError {
    let err = err.without_url();
    let mut message = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    SourceError::Request {
        url: redact_url(url),
        message,
    }
}

/// What a conditional GET got.
pub(crate) enum Fetched {
    /// `304 Not Modified`: the representation the entity tag names is still current.
    NotModified,
    /// The body, and its strong entity tag if the server gave one.
    Body {
        bytes: Vec<u8>,
        etag: Option<String>,
    },
}

/// GETs `url` as [`get`] does, with `If-None-Match: etag` when an entity tag is given.
pub(crate) async fn get_unless_match(
    client: &reqwest::Client,
    url: &str,
    auth: &Auth,
    etag: Option<&str>,
) -> Result<Fetched, SourceError> {
    let mut request = client.get(url);
    if auth.has_credentials() {
        request = request.basic_auth(&auth.username, Some(&auth.password));
    }
    if let Some(etag) = etag {
        request = request.header(reqwest::header::IF_NONE_MATCH, etag);
    }
    let response = request
        .send()
        .await
        .map_err(|err| request_error(url, err))?;
    if etag.is_some() && response.status() == reqwest::StatusCode::NOT_MODIFIED {
        return Ok(Fetched::NotModified);
    }
    if !response.status().is_success() {
        return Err(SourceError::Status {
            url: redact_url(url),
            status: response.status().as_u16(),
        });
    }
    // Only a strong entity tag says the bytes are the same; a weak one (`W/"…"`) allows other bytes.
    let etag = response
        .headers()
        .get(reqwest::header::ETAG)
        .and_then(|value| value.to_str().ok())
        .filter(|value| value.starts_with('"'))
        .map(str::to_string);
    let bytes = response
        .bytes()
        .await
        .map_err(|err| request_error(url, err))?;
    Ok(Fetched::Body {
        bytes: bytes.to_vec(),
        etag,
    })
}

/// GETs `url`, with basic auth when `auth` has credentials; anything but 200 is an error.
pub(crate) async fn get(
    client: &reqwest::Client,
    url: &str,
    auth: &Auth,
) -> Result<Vec<u8>, SourceError> {
    let mut request = client.get(url);
    if auth.has_credentials() {
        request = request.basic_auth(&auth.username, Some(&auth.password));
    }
    let response = request
        .send()
        .await
        .map_err(|err| request_error(url, err))?;
    if !response.status().is_success() {
        return Err(SourceError::Status {
            url: redact_url(url),
            status: response.status().as_u16(),
        });
    }
    let bytes = response
        .bytes()
        .await
        .map_err(|err| request_error(url, err))?;
    Ok(bytes.to_vec())
}
