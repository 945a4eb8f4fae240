//! Charts in OCI registries through the distribution API, as `helm pull oci://…` gets them: the version is a
//! digest (`@sha256:…` or `version: sha256:…`), a tag, or a constraint over the repository's tags (Helm writes
//! `+` as `_` in tags, and the tag list is read page after page through its `Link: <…>; rel="next"` headers);
//! the manifest's layer of Helm's chart media type is the archive. A `401` answer's
//! challenge is followed: `Bearer` asks the realm for a token (with the credentials, if any), `Basic` resends
//! with them.

use fleet_bundle::remote::version::{Constraint, compare, parse_version};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, LINK, WWW_AUTHENTICATE};
use serde::Deserialize;

use crate::auth::Auth;
use crate::error::SourceError;

/// Helm's chart content layer media type (and the one Helm 3.0–3.7 wrote before it).
const CHART_LAYER: &[&str] = &[
    "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
    "application/tar+gzip",
];
const MANIFEST_ACCEPT: &str = "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json";

/// `oci://host[:port]/path/chart[:tag][@digest]`, split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reference {
    pub host: String,
    pub name: String,
    pub tag: Option<String>,
    pub digest: Option<String>,
}

impl Reference {
    pub(crate) fn parse(reference: &str) -> Result<Self, SourceError> {
        let error = |message: &str| SourceError::Oci {
            reference: reference.to_string(),
            message: message.to_string(),
        };
        let rest = reference
            .strip_prefix("oci://")
            .ok_or_else(|| error("not an oci:// reference"))?;
        let (rest, digest) = match rest.split_once('@') {
            Some((rest, digest)) => (rest, Some(digest.to_string())),
            None => (rest, None),
        };
        let (host, path) = rest
            .split_once('/')
            .ok_or_else(|| error("no repository path after the registry host"))?;
        let (name, tag) = match path.rsplit_once(':') {
            Some((name, tag)) if !tag.contains('/') => (name, Some(tag.to_string())),
            _ => (path, None),
        };
        if host.is_empty() || name.is_empty() || name.split('/').any(str::is_empty) {
            return Err(error("an empty registry host or repository path"));
        }
        Ok(Self {
            host: host.to_string(),
            name: name.trim_end_matches('/').to_string(),
            tag,
            digest,
        })
    }
}

/// A registry session for one repository: the client, the settings and the token a challenge gave.
pub(crate) struct Registry<'a> {
    client: reqwest::Client,
    base: String,
    reference: &'a Reference,
    original: &'a str,
    auth: &'a Auth,
    authorization: Option<String>,
    /// The `n` asked of the tag list per page; `None` leaves the page size to the registry.
    page_size: Option<usize>,
}

#[derive(Deserialize)]
struct Tags {
    #[serde(default)]
    tags: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct Manifest {
    #[serde(default)]
    layers: Vec<Descriptor>,
}

#[derive(Deserialize)]
struct Descriptor {
    #[serde(rename = "mediaType", default)]
    media_type: String,
    #[serde(default)]
    digest: String,
}

#[derive(Deserialize)]
struct Token {
    #[serde(default)]
    token: String,
    #[serde(default)]
    access_token: String,
}

impl<'a> Registry<'a> {
    pub(crate) fn new(
        client: reqwest::Client,
        reference: &'a Reference,
        original: &'a str,
        auth: &'a Auth,
    ) -> Self {
        let scheme = if auth.basic_http { "http" } else { "https" };
        Self {
            client,
            base: format!("{scheme}://{}", reference.host),
            reference,
            original,
            auth,
            authorization: None,
            page_size: None,
        }
    }

    /// Asks the registry for tag list pages of at most `n` tags (`None`: the registry's own page size).
    pub(crate) fn with_page_size(mut self, n: Option<usize>) -> Self {
        self.page_size = n;
        self
    }

    fn error(&self, message: impl Into<String>) -> SourceError {
        SourceError::Oci {
            reference: fleet_bundle::remote::redact_url(self.original),
            message: message.into(),
        }
    }

    /// GET `path` under `/v2/<name>/`, answering one auth challenge.
    async fn get(&mut self, path: &str, accept: Option<&str>) -> Result<Vec<u8>, SourceError> {
        let url = format!("{}/v2/{}/{path}", self.base, self.reference.name);
        Ok(self.get_url(&url, accept).await?.0)
    }

    /// GET `url` (on this registry), answering one auth challenge; the body and the answer's headers.
    async fn get_url(
        &mut self,
        url: &str,
        accept: Option<&str>,
    ) -> Result<(Vec<u8>, HeaderMap), SourceError> {
        let url = url.to_string();
        for attempt in 0..2 {
            let mut request = self.client.get(&url);
            if let Some(accept) = accept {
                request = request.header(ACCEPT, accept);
            }
            if let Some(authorization) = &self.authorization {
                request = request.header(AUTHORIZATION, authorization);
            }
            let response = request
                .send()
                .await
                .map_err(|err| crate::http::request_error(&url, err))?;
            if response.status() == StatusCode::UNAUTHORIZED && attempt == 0 {
                let challenge = response
                    .headers()
                    .get(WWW_AUTHENTICATE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string();
                self.authorization = Some(self.answer(&challenge).await?);
                continue;
            }
            if !response.status().is_success() {
                return Err(SourceError::Status {
                    url,
                    status: response.status().as_u16(),
                });
            }
            let headers = response.headers().clone();
            return response
                .bytes()
                .await
                .map(|b| (b.to_vec(), headers))
                .map_err(|err| crate::http::request_error(&url, err));
        }
        Err(self.error("the registry refused the credentials"))
    }

    /// The `Authorization` header that answers a `WWW-Authenticate` challenge.
    async fn answer(&self, challenge: &str) -> Result<String, SourceError> {
        use base64::Engine;
        let basic = || {
            base64::engine::general_purpose::STANDARD
                .encode(format!("{}:{}", self.auth.username, self.auth.password))
        };
        let (scheme, params) = challenge.split_once(' ').unwrap_or((challenge, ""));
        if scheme.eq_ignore_ascii_case("basic") {
            if !self.auth.has_credentials() {
                return Err(
                    self.error("the registry asks for credentials and none are configured for it")
                );
            }
            return Ok(format!("Basic {}", basic()));
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(self.error(format!("unsupported auth challenge {scheme:?}")));
        }
        let params = challenge_params(params);
        let realm = params
            .iter()
            .find(|(k, _)| k == "realm")
            .map(|(_, v)| v.clone())
            .ok_or_else(|| self.error("a Bearer challenge without a realm"))?;
        let mut query: Vec<(&str, String)> = Vec::new();
        for (key, value) in &params {
            if key == "service" || key == "scope" {
                query.push((key.as_str(), value.clone()));
            }
        }
        if !query.iter().any(|(k, _)| *k == "scope") {
            query.push(("scope", format!("repository:{}:pull", self.reference.name)));
        }
        let query: Vec<String> = query
            .iter()
            .map(|(key, value)| format!("{key}={}", percent_encode(value)))
            .collect();
        let separator = if realm.contains('?') { '&' } else { '?' };
        let token_url = format!("{realm}{separator}{}", query.join("&"));
        let mut request = self.client.get(&token_url);
        if self.auth.has_credentials() {
            request = request.header(AUTHORIZATION, format!("Basic {}", basic()));
        }
        let response = request
            .send()
            .await
            .map_err(|err| crate::http::request_error(&realm, err))?;
        if !response.status().is_success() {
            return Err(SourceError::Status {
                url: realm,
                status: response.status().as_u16(),
            });
        }
        let body = response
            .bytes()
            .await
            .map_err(|err| crate::http::request_error(&realm, err))?;
        let token: Token = serde_json::from_slice(&body)
            .map_err(|err| self.error(format!("the token service's answer is not JSON: {err}")))?;
        let token = if token.token.is_empty() {
            token.access_token
        } else {
            token.token
        };
        if token.is_empty() {
            return Err(self.error("the token service answered no token"));
        }
        Ok(format!("Bearer {token}"))
    }

    /// The tag or digest to pull for `version` (a constraint, a tag or empty for the highest stable tag).
    pub(crate) async fn resolve(&mut self, version: &str) -> Result<String, SourceError> {
        if let Some(digest) = &self.reference.digest {
            return Ok(digest.clone());
        }
        if version.starts_with("sha256:") {
            return Ok(version.to_string());
        }
        let wanted = if version.is_empty() {
            self.reference.tag.clone().unwrap_or_default()
        } else {
            version.to_string()
        };
        let tags = self.tags().await?;
        let as_tag = wanted.replace('+', "_");
        if !wanted.is_empty() && tags.contains(&as_tag) {
            return Ok(as_tag);
        }
        let constraint = Constraint::parse(&wanted).map_err(|err| self.error(err.to_string()))?;
        tags.iter()
            .filter_map(|tag| parse_version(&tag.replace('_', "+")).map(|v| (v, tag)))
            .filter(|(v, _)| constraint.matches(v))
            .max_by(|(a, _), (b, _)| compare(a, b))
            .map(|(_, tag)| tag.clone())
            .ok_or_else(|| {
                self.error(format!(
                    "no tag matches version {wanted:?} (tags: {})",
                    tags.join(", ")
                ))
            })
    }

    /// Every tag of the repository (for image scans).
    pub(crate) async fn all_tags(mut self) -> Result<Vec<String>, SourceError> {
        self.tags().await
    }

    /// The manifest `tag_or_digest` asked for with `accept`; its body and the answer's headers.
    pub(crate) async fn manifest(
        &mut self,
        tag_or_digest: &str,
        accept: &str,
    ) -> Result<(Vec<u8>, HeaderMap), SourceError> {
        let url = format!(
            "{}/v2/{}/manifests/{tag_or_digest}",
            self.base, self.reference.name
        );
        self.get_url(&url, Some(accept)).await
    }

    /// Every tag of the repository: the tag list's pages, following each answer's `Link: <…>; rel="next"` (the
    /// distribution API's pagination, which a registry may apply on its own as well as when asked with `n`).
    async fn tags(&mut self) -> Result<Vec<String>, SourceError> {
        let mut url = format!("{}/v2/{}/tags/list", self.base, self.reference.name);
        if let Some(n) = self.page_size {
            url.push_str(&format!("?n={n}"));
        }
        let mut seen = std::collections::HashSet::new();
        let mut tags = Vec::new();
        loop {
            if !seen.insert(url.clone()) {
                return Err(self.error("the tag list's pages link back to a page already read"));
            }
            let (body, headers) = self.get_url(&url, None).await?;
            let page: Tags = serde_json::from_slice(&body)
                .map_err(|err| self.error(format!("the tag list is not valid JSON: {err}")))?;
            tags.extend(page.tags.unwrap_or_default());
            match self.next_page(&url, &headers)? {
                Some(next) => url = next,
                None => return Ok(tags),
            }
        }
    }

    /// The absolute URL of the next tag list page, from the `Link` headers of the page at `current`. It must be
    /// on this registry: the token or credentials go with it.
    fn next_page(&self, current: &str, headers: &HeaderMap) -> Result<Option<String>, SourceError> {
        let Some(target) = headers
            .get_all(LINK)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .find_map(next_link)
        else {
            return Ok(None);
        };
        let base = reqwest::Url::parse(current)
            .map_err(|err| self.error(format!("the tag list URL is not valid: {err}")))?;
        let next = base
            .join(&target)
            .map_err(|err| self.error(format!("the tag list's next page {target:?}: {err}")))?;
        if next.origin() != base.origin() {
            return Err(self.error(format!(
                "the tag list's next page is on another server ({})",
                fleet_bundle::remote::redact_url(next.as_str())
            )));
        }
        Ok(Some(next.to_string()))
    }

    /// The digest of the chart layer of the manifest `tag_or_digest`.
    pub(crate) async fn chart_layer(&mut self, tag_or_digest: &str) -> Result<String, SourceError> {
        let body = self
            .get(&format!("manifests/{tag_or_digest}"), Some(MANIFEST_ACCEPT))
            .await?;
        if let Some(expected) = tag_or_digest.strip_prefix("sha256:") {
            let actual = crate::archive::sha256_hex(&body);
            if actual != expected {
                return Err(
                    self.error(format!("the manifest's sha256 is {actual}, not {expected}"))
                );
            }
        }
        let manifest: Manifest = serde_json::from_slice(&body)
            .map_err(|err| self.error(format!("the manifest is not valid JSON: {err}")))?;
        manifest
            .layers
            .iter()
            .find(|layer| CHART_LAYER.contains(&layer.media_type.as_str()))
            .map(|layer| layer.digest.clone())
            .ok_or_else(|| self.error("the manifest has no Helm chart layer: not a Helm chart"))
    }

    /// The blob `digest`, checked against it.
    pub(crate) async fn blob(&mut self, digest: &str) -> Result<Vec<u8>, SourceError> {
        let bytes = self.get(&format!("blobs/{digest}"), None).await?;
        let expected = digest.strip_prefix("sha256:").unwrap_or(digest);
        let actual = crate::archive::sha256_hex(&bytes);
        if actual != expected {
            return Err(SourceError::Digest {
                url: format!("{}/v2/{}/blobs/{digest}", self.base, self.reference.name),
                expected: expected.to_string(),
                actual,
            });
        }
        Ok(bytes)
    }
}

/// Percent-encodes a query value (RFC 3986 unreserved characters kept).
fn percent_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The target of the `rel="next"` link in a `Link` header value (RFC 8288: `<target>; rel="next", <…>; …`).
fn next_link(value: &str) -> Option<String> {
    let mut rest = value;
    while let Some(start) = rest.find('<') {
        let end = start + rest[start..].find('>')?;
        let target = &rest[start + 1..end];
        let params_end = rest[end..].find('<').map_or(rest.len(), |i| end + i);
        let is_next = rest[end + 1..params_end].split(';').any(|param| {
            param.split_once('=').is_some_and(|(key, value)| {
                key.trim().eq_ignore_ascii_case("rel")
                    && value
                        .trim()
                        .trim_end_matches(',')
                        .trim()
                        .trim_matches('"')
                        .split_ascii_whitespace()
                        .any(|rel| rel.eq_ignore_ascii_case("next"))
            })
        });
        if is_next {
            return Some(target.to_string());
        }
        rest = &rest[params_end..];
    }
    None
}

/// `key="value", key2=value2` pairs of a challenge.
fn challenge_params(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let Some((key, after)) = rest.split_once('=') else {
            break;
        };
        let key = key.trim().trim_start_matches(',').trim().to_string();
        let after = after.trim_start();
        let (value, remaining) = if let Some(quoted) = after.strip_prefix('"') {
            match quoted.find('"') {
                Some(end) => (quoted[..end].to_string(), &quoted[end + 1..]),
                None => (quoted.to_string(), ""),
            }
        } else {
            match after.find(',') {
                Some(end) => (after[..end].trim().to_string(), &after[end..]),
                None => (after.trim().to_string(), ""),
            }
        };
        out.push((key, value));
        rest = remaining.trim_start().trim_start_matches(',').trim_start();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_and_challenges() {
        let r = Reference::parse("oci://127.0.0.1:5000/charts/app:1.2.3").unwrap();
        assert_eq!(
            (r.host.as_str(), r.name.as_str(), r.tag.as_deref()),
            ("127.0.0.1:5000", "charts/app", Some("1.2.3"))
        );
        let r = Reference::parse("oci://reg/app@sha256:abc").unwrap();
        assert_eq!(
            (r.name.as_str(), r.digest.as_deref()),
            ("app", Some("sha256:abc"))
        );
        assert!(Reference::parse("oci://reg").is_err());
        assert_eq!(
            next_link(r#"</v2/a/tags/list?last=b&n=2>; rel="next""#).as_deref(),
            Some("/v2/a/tags/list?last=b&n=2")
        );
        assert_eq!(
            next_link(r#"<https://r/p1>; rel="prev", <https://r/p3>; rel=next"#).as_deref(),
            Some("https://r/p3")
        );
        assert_eq!(next_link(r#"<https://r/p1>; rel="prev""#), None);
        assert_eq!(
            challenge_params(
                r#"realm="https://auth/token",service="registry",scope="repository:a:pull,push""#
            ),
            [
                ("realm".to_string(), "https://auth/token".to_string()),
                ("service".to_string(), "registry".to_string()),
                ("scope".to_string(), "repository:a:pull,push".to_string())
            ]
        );
    }
}
