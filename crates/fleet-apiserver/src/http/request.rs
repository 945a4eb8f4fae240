//! What a resource request carries besides its path: query parameters, the decoded body (JSON or YAML,
//! size-limited), the media type the client wants back, and the authenticated user.

use std::collections::HashMap;

use bytes::Bytes;
use http::{HeaderMap, Method};
use serde_json::Value;

use crate::auth::authenticate::User;
use crate::error::{ApiError, ApiResult};
use crate::http::route::ResourcePath;
use crate::kinds::registry::ResourceType;

/// The largest request body accepted (etcd's limit).
pub const MAX_BODY: usize = 3 * 1024 * 1024;

/// Query parameters.
#[derive(Debug, Clone, Default)]
pub struct Query(pub HashMap<String, String>);

impl Query {
    pub fn parse(raw: Option<&str>) -> Self {
        let mut map = HashMap::new();
        for pair in raw.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            map.insert(decode_component(k), decode_component(v));
        }
        Query(map)
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// A boolean parameter: present and not `false`/`0`.
    pub fn flag(&self, key: &str) -> bool {
        self.0.get(key).is_some_and(|v| v != "false" && v != "0")
    }

    pub fn dry_run(&self) -> bool {
        self.get("dryRun") == Some("All")
    }

    pub fn u64(&self, key: &str) -> ApiResult<Option<u64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .parse()
                .map(Some)
                .map_err(|_| ApiError::bad_request(format!("invalid {key}: {v:?}"))),
        }
    }
}

fn decode_component(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'+', _) => out.push(b' '),
            (b'%', Some(decoded)) => {
                out.push(decoded);
                i += 2;
            }
            (b, _) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One resource request, resolved.
pub struct Request {
    pub method: Method,
    pub path: ResourcePath,
    pub rt: std::sync::Arc<ResourceType>,
    pub query: Query,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub user: User,
    /// Warnings for the client (`Warning: 299 - "..."` headers), e.g. unknown fields under `fieldValidation=Warn`.
    pub warnings: std::sync::Mutex<Vec<String>>,
}

impl Request {
    pub fn warn(&self, message: String) {
        let mut warnings = self.warnings.lock().unwrap_or_else(|p| p.into_inner());
        if !warnings.contains(&message) {
            warnings.push(message);
        }
    }

    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|p| p.into_inner()))
    }

    pub fn content_type(&self) -> &str {
        self.headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("application/json")
    }

    /// The Content-Type without its parameters (`application/json; charset=utf-8` is `application/json`).
    pub fn media_type(&self) -> &str {
        self.content_type().split(';').next().unwrap_or("").trim()
    }

    pub fn accept(&self) -> &str {
        self.headers
            .get(http::header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// The body as a JSON object (JSON or YAML accepted).
    pub fn object(&self) -> ApiResult<Value> {
        let value = if self
            .content_type()
            .starts_with("application/vnd.kubernetes.protobuf")
        {
            crate::kinds::protobuf::decode(&self.body)?
        } else {
            decode_body(&self.body, self.content_type())?
        };
        if !value.is_object() {
            return Err(ApiError::bad_request("the request body must be an object"));
        }
        Ok(value)
    }

    pub fn field_manager(&self) -> String {
        self.query
            .get("fieldManager")
            .map(str::to_string)
            .unwrap_or_else(|| {
                let agent = self
                    .headers
                    .get(http::header::USER_AGENT)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("unknown");
                agent.split('/').next().unwrap_or("unknown").to_string()
            })
    }
}

/// Decodes JSON, or YAML when the media type says so (or JSON parsing fails for an apply patch).
pub fn decode_body(body: &[u8], content_type: &str) -> ApiResult<Value> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    if content_type.contains("protobuf") || content_type.contains("cbor") {
        // Clients (kubectl's typed clients) fall back to JSON on 415.
        return Err(ApiError::unsupported_media_type(content_type));
    }
    let is_yaml = content_type.contains("yaml");
    match serde_json::from_slice::<Value>(body) {
        Ok(v) => Ok(v),
        Err(json_err) if !is_yaml => Err(ApiError::bad_request(format!(
            "couldn't decode the request body as JSON: {json_err}"
        ))),
        Err(_) => {
            let text = std::str::from_utf8(body).map_err(|_| {
                ApiError::bad_request("error decoding YAML: the body is not valid UTF-8")
            })?;
            serde_saphyr::from_str::<Value>(text)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))
        }
    }
}
