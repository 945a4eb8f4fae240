//! Credentials and trust for chart sources, as a GitRepo configures them in Fleet: the `helmSecretName` secret
//! (`username`, `password`, `cacerts`, `insecureSkipVerify`, `basicHTTP`), the `helmSecretNameForPaths` secret
//! (key `secrets-path.yaml`: bundle path or glob → `username`, `password`, `caBundle`, `insecureSkipVerify`,
//! `basicHTTP`), `helmRepoURLRegex` and `insecureSkipTLSVerify`.
//!
//! Following Fleet's `shouldAddAuthToRequest`, the `helmSecretName` credentials go only to URLs the regex
//! matches at their start, and to none when it is empty (trust settings still apply). Per-path credentials are
//! already scoped to their bundle path and are always sent for it (Fleet's git job passes no regex with them,
//! which would leave them unused: we follow its documentation there).

use std::collections::BTreeMap;
use std::fmt;

use base64::Engine;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::error::SourceError;

/// What one request to a chart source may use. `Debug` never shows the password.
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Auth {
    #[serde(default)]
    pub username: String,
    #[serde(default)]
    pub password: String,
    /// PEM certificates trusted besides the system roots (base64 in `secrets-path.yaml`, as Fleet's JSON).
    #[serde(default, deserialize_with = "base64_bytes")]
    pub ca_bundle: Vec<u8>,
    #[serde(default)]
    pub insecure_skip_verify: bool,
    /// Plain HTTP to OCI registries.
    #[serde(default, rename = "basicHTTP")]
    pub basic_http: bool,
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Auth")
            .field("username", &self.username)
            .field(
                "password",
                &if self.password.is_empty() {
                    ""
                } else {
                    "<redacted>"
                },
            )
            .field("ca_bundle_bytes", &self.ca_bundle.len())
            .field("insecure_skip_verify", &self.insecure_skip_verify)
            .field("basic_http", &self.basic_http)
            .finish()
    }
}

fn base64_bytes<'de, D: serde::Deserializer<'de>>(de: D) -> Result<Vec<u8>, D::Error> {
    let text: Option<String> = Option::deserialize(de)?;
    match text {
        None => Ok(Vec::new()),
        Some(text) => base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|_| serde::de::Error::custom("caBundle is not valid base64")),
    }
}

impl Auth {
    /// The `helmSecretName` secret's data.
    pub fn from_secret(data: &BTreeMap<String, Vec<u8>>) -> Result<Self, SourceError> {
        let text = |key: &str| {
            data.get(key)
                .map(|v| String::from_utf8_lossy(v).into_owned())
        };
        let flag = |key: &str| text(key).is_some_and(|v| parse_bool(&v));
        let (username, password) = (text("username"), text("password"));
        match (&username, &password) {
            (Some(_), None) => {
                return Err(SourceError::Credentials(
                    "username is set in the helm secret, but password isn't".into(),
                ));
            }
            (None, Some(_)) => {
                return Err(SourceError::Credentials(
                    "password is set in the helm secret, but username isn't".into(),
                ));
            }
            _ => {}
        }
        Ok(Self {
            username: username.unwrap_or_default(),
            password: password.unwrap_or_default(),
            ca_bundle: data.get("cacerts").cloned().unwrap_or_default(),
            insecure_skip_verify: flag("insecureSkipVerify"),
            basic_http: flag("basicHTTP"),
        })
    }

    pub fn has_credentials(&self) -> bool {
        !self.username.is_empty() || !self.password.is_empty()
    }

    /// These settings without the username and password (trust settings kept).
    pub fn without_credentials(&self) -> Self {
        Self {
            username: String::new(),
            password: String::new(),
            ..self.clone()
        }
    }

    /// A key that tells settings apart without holding them (for caches).
    pub(crate) fn fingerprint(&self) -> String {
        let mut hash = Sha256::new();
        for field in [
            self.username.as_bytes(),
            self.password.as_bytes(),
            &self.ca_bundle,
            &[
                u8::from(self.insecure_skip_verify),
                u8::from(self.basic_http),
            ],
        ] {
            hash.update((field.len() as u64).to_le_bytes());
            hash.update(field);
        }
        hex::encode(hash.finalize())
    }
}

/// Go's `strconv.ParseBool`; anything else is false (these are security settings).
fn parse_bool(value: &str) -> bool {
    matches!(value.trim(), "1" | "t" | "T" | "true" | "TRUE" | "True")
}

/// A GitRepo's chart credentials.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    /// From `helmSecretName` (plus `insecureSkipTLSVerify`).
    pub default: Auth,
    /// From `helmSecretNameForPaths`: bundle path or glob → settings.
    pub by_path: BTreeMap<String, Auth>,
    /// `helmRepoURLRegex`.
    pub url_regex: String,
}

impl Credentials {
    /// Parses the `secrets-path.yaml` key of a `helmSecretNameForPaths` secret.
    pub fn parse_by_path(text: &str) -> Result<BTreeMap<String, Auth>, SourceError> {
        let parsed: Option<BTreeMap<String, Auth>> =
            fleet_yaml::parse::from_str(text, "secrets-path.yaml")
                .map_err(|err| SourceError::Credentials(redact_values(&err.to_string())))?;
        Ok(parsed.unwrap_or_default())
    }

    /// The settings for the bundle at `path` (relative to the repository root) and whether they may be sent
    /// anywhere: an exact path entry, else the first glob in lexical order that matches (Fleet's
    /// `setAuthByPath`), else the default settings.
    pub fn for_path(&self, path: &str) -> (Auth, Scope) {
        if let Some(auth) = self.by_path.get(path) {
            return (auth.clone(), Scope::Anywhere);
        }
        for (pattern, auth) in &self.by_path {
            if fleet_bundle::glob::matches(pattern, path).unwrap_or(false) {
                return (auth.clone(), Scope::Anywhere);
            }
        }
        if self.by_path.is_empty() {
            (self.default.clone(), Scope::Regex(self.url_regex.clone()))
        } else {
            (Auth::default(), Scope::Anywhere)
        }
    }
}

/// Where credentials may be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    Anywhere,
    /// To URLs this regex matches at their start; nowhere when empty.
    Regex(String),
}

impl Scope {
    /// Whether credentials go with requests for a chart named by `url` (the repository, or the chart URL).
    pub fn allows(&self, url: &str) -> Result<bool, SourceError> {
        match self {
            Self::Anywhere => Ok(true),
            Self::Regex(regex) if regex.is_empty() => Ok(false),
            Self::Regex(regex) => {
                regex::Regex::new(regex).map_err(|err| {
                    SourceError::Credentials(format!("invalid helmRepoURLRegex {regex:?}: {err}"))
                })?;
                let anchored = regex::Regex::new(&format!("^(?:{regex})"))
                    .map_err(|err| SourceError::Credentials(err.to_string()))?;
                Ok(anchored.is_match(url))
            }
        }
    }
}

/// A YAML error about a credentials file must not quote its values.
fn redact_values(message: &str) -> String {
    message.split_once(':').map_or(
        "secrets-path.yaml is not valid".to_string(),
        |(origin, _)| format!("{origin}: not a map of paths to credentials"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_read_as_fleet_reads_them() {
        let mut data = BTreeMap::new();
        data.insert("username".to_string(), b"u".to_vec());
        assert!(Auth::from_secret(&data).is_err());
        data.insert("password".to_string(), b"hunter2".to_vec());
        data.insert("insecureSkipVerify".to_string(), b"true".to_vec());
        data.insert("basicHTTP".to_string(), b"yes".to_vec());
        let auth = Auth::from_secret(&data).unwrap();
        assert_eq!(auth.password, "hunter2");
        assert!(auth.insecure_skip_verify);
        assert!(!auth.basic_http, "ParseBool does not accept yes");
        assert!(!format!("{auth:?}").contains("hunter2"));
    }

    #[test]
    fn credentials_by_path_and_regex() {
        let by_path = Credentials::parse_by_path(
            "apps/one: {username: a, password: p1}\n\"apps/*\": {username: b, password: p2, caBundle: \"LS0t\"}\n",
        )
        .unwrap();
        let creds = Credentials {
            by_path,
            ..Default::default()
        };
        assert_eq!(creds.for_path("apps/one").0.password, "p1");
        let (auth, scope) = creds.for_path("apps/two");
        assert_eq!(
            (auth.password.as_str(), auth.ca_bundle.as_slice()),
            ("p2", &b"---"[..])
        );
        assert_eq!(scope, Scope::Anywhere);
        assert!(!creds.for_path("other").0.has_credentials());
        let err = Credentials::parse_by_path("a: {password: [\"s3cr3t\"]}\n").unwrap_err();
        assert!(!err.to_string().contains("s3cr3t"), "{err}");

        let scope = Scope::Regex("https://charts\\.example\\.com".into());
        assert!(scope.allows("https://charts.example.com/x").unwrap());
        assert!(
            !scope
                .allows("https://evil.example/?https://charts.example.com")
                .unwrap()
        );
        assert!(!Scope::Regex(String::new()).allows("https://a").unwrap());
        assert!(Scope::Regex("a|(".into()).allows("a").is_err());
    }
}
