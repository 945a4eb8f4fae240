//! Container image repositories for Fleet's image scans: an image name read as go-containerregistry (which
//! Fleet uses) reads it — `docker.io` implied, `library/` for official images, plain HTTP for `localhost`,
//! loopback and private-network registries — and the repository's tags (every page of the tag list) and a
//! tag's manifest digest, through the same registry client and auth challenges as OCI charts.

use serde::Deserialize;

use crate::auth::Auth;
use crate::error::SourceError;
use crate::http::Clients;
use crate::oci::{Reference, Registry};

/// The registry go-containerregistry substitutes for names without one (and for `docker.io`).
pub const DEFAULT_REGISTRY: &str = "index.docker.io";

/// An image repository: `registry/repository`, any tag or digest of the name dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageName {
    /// Host and port, e.g. `index.docker.io`, `localhost:5000`.
    pub registry: String,
    /// The path within the registry, e.g. `library/nginx`.
    pub repository: String,
}

impl ImageName {
    /// Reads `image` (`nginx`, `ghcr.io/org/app:1.0`, `localhost:5000/app@sha256:…`).
    pub fn parse(image: &str) -> Result<Self, SourceError> {
        let error = |message: &str| SourceError::Oci {
            reference: image.to_string(),
            message: message.to_string(),
        };
        let trimmed = image.trim();
        let without_digest = trimmed.split_once('@').map_or(trimmed, |(name, _)| name);
        let name = match without_digest.rsplit_once(':') {
            Some((name, tag)) if !tag.contains('/') => name,
            _ => without_digest,
        };
        if name.is_empty() {
            return Err(error("an empty image name"));
        }
        let (registry, repository) = match name.split_once('/') {
            Some((first, rest))
                if first.contains('.') || first.contains(':') || first == "localhost" =>
            {
                (first.to_string(), rest.to_string())
            }
            _ => (DEFAULT_REGISTRY.to_string(), name.to_string()),
        };
        let registry = if registry == "docker.io" {
            DEFAULT_REGISTRY.to_string()
        } else {
            registry
        };
        let repository = if registry == DEFAULT_REGISTRY && !repository.contains('/') {
            format!("library/{repository}")
        } else {
            repository
        };
        let valid = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-/".contains(c);
        if repository.is_empty()
            || !repository.chars().all(valid)
            || repository.split('/').any(str::is_empty)
        {
            return Err(error(
                "the repository path must be lowercase letters, digits and . _ - / separators",
            ));
        }
        Ok(Self {
            registry,
            repository,
        })
    }

    /// `registry/repository`, Fleet's `canonicalImageName`.
    pub fn canonical(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }

    /// Whether go-containerregistry talks plain HTTP to this registry: `localhost`, loopback and private
    /// (RFC 1918) addresses.
    pub fn plain_http(&self) -> bool {
        let host = match self.registry.rsplit_once(':') {
            Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
            _ => self.registry.as_str(),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host == "localhost" {
            return true;
        }
        match host.parse::<std::net::IpAddr>() {
            Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private(),
            Ok(std::net::IpAddr::V6(ip)) => ip.is_loopback(),
            Err(_) => false,
        }
    }
}

/// Lists tags and reads digests; one HTTP client per trust setting, shared.
#[derive(Default)]
pub struct ImageRegistry {
    clients: Clients,
}

const MANIFEST_ACCEPT: &str = "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.list.v2+json";

#[derive(Deserialize)]
struct Index {
    #[serde(default)]
    manifests: Vec<IndexEntry>,
}

#[derive(Deserialize)]
struct IndexEntry {
    #[serde(default)]
    digest: String,
    #[serde(default)]
    platform: Option<Platform>,
}

#[derive(Deserialize)]
struct Platform {
    #[serde(default)]
    architecture: String,
    #[serde(default)]
    os: String,
}

impl ImageRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every tag of `image`'s repository. `auth.basic_http` is set from [`ImageName::plain_http`].
    pub async fn tags(&self, image: &ImageName, auth: &Auth) -> Result<Vec<String>, SourceError> {
        let (reference, original, auth) = session(image, auth);
        let client = self.clients.get(&auth)?;
        Registry::new(client, &reference, &original, &auth)
            .all_tags()
            .await
    }

    /// The digest (`sha256:…`) of the image `tag` names. A multi-platform index resolves to its linux/amd64
    /// image, as go-containerregistry's default platform does.
    pub async fn digest(
        &self,
        image: &ImageName,
        tag: &str,
        auth: &Auth,
    ) -> Result<String, SourceError> {
        let (reference, original, auth) = session(image, auth);
        let client = self.clients.get(&auth)?;
        let mut registry = Registry::new(client, &reference, &original, &auth);
        let (body, headers) = registry.manifest(tag, MANIFEST_ACCEPT).await?;
        let media_type = headers
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_string();
        if media_type.contains("index") || media_type.contains("manifest.list") {
            let index: Index = serde_json::from_slice(&body).map_err(|err| SourceError::Oci {
                reference: original.clone(),
                message: format!("the image index is not valid JSON: {err}"),
            })?;
            if let Some(entry) = index.manifests.iter().find(|entry| {
                entry
                    .platform
                    .as_ref()
                    .is_some_and(|p| p.os == "linux" && p.architecture == "amd64")
            }) {
                return Ok(entry.digest.clone());
            }
        }
        Ok(format!("sha256:{}", crate::archive::sha256_hex(&body)))
    }
}

fn session(image: &ImageName, auth: &Auth) -> (Reference, String, Auth) {
    let reference = Reference {
        host: image.registry.clone(),
        name: image.repository.clone(),
        tag: None,
        digest: None,
    };
    let mut auth = auth.clone();
    auth.basic_http = image.plain_http();
    (reference, image.canonical(), auth)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(image: &str) -> (String, bool) {
        let name = ImageName::parse(image).unwrap();
        (name.canonical(), name.plain_http())
    }

    #[test]
    fn names_as_go_containerregistry_reads_them() {
        assert_eq!(
            parsed("nginx"),
            ("index.docker.io/library/nginx".into(), false)
        );
        assert_eq!(
            parsed("docker.io/rancher/fleet:v0.13"),
            ("index.docker.io/rancher/fleet".into(), false)
        );
        assert_eq!(
            parsed("ghcr.io/org/app:1.0"),
            ("ghcr.io/org/app".into(), false)
        );
        assert_eq!(
            parsed("localhost:5000/app"),
            ("localhost:5000/app".into(), true)
        );
        assert_eq!(
            parsed("127.0.0.1:5000/team/app@sha256:abc"),
            ("127.0.0.1:5000/team/app".into(), true)
        );
        assert_eq!(parsed("192.168.1.5/app"), ("192.168.1.5/app".into(), true));
        assert_eq!(
            parsed("registry.example.com:8443/a/b"),
            ("registry.example.com:8443/a/b".into(), false)
        );
        assert!(ImageName::parse("Upper/Case").is_err());
        assert!(ImageName::parse("").is_err());
    }
}
