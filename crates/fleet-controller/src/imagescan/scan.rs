//! One tag scan, as Fleet's tag scan job runs it: the image name read, the registry credentials taken from the
//! `secretRef` Secret (`kubernetes.io/dockerconfigjson`, the entry of the image's registry), every tag
//! listed, the newest chosen by the policy, and its digest read. The result (or the error) becomes the
//! ImageScan's status: `latestTag`, `latestImage`, `latestDigest`, `canonicalImageName`, `lastScanTime` and the
//! `ImageScanned` condition. Errors name the registry and the Secret, never a credential.

use std::collections::BTreeMap;

use base64::Engine;
use fleet_api::{IMAGESCAN_SCANNED, ImageScan, ImageScanStatus};
use fleet_chart_source::{Auth, ImageName, ImageRegistry, SourceError};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, Patch, PatchParams};
use kube::{Resource, ResourceExt};
use serde::Deserialize;

use crate::context::Context;
use crate::imagescan::policy::{PolicyError, latest_tag};
use crate::status::conditions;

/// Why a scan failed.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error("{0}")]
    Registry(#[from] SourceError),
    #[error("{0}")]
    Policy(#[from] PolicyError),
    #[error("secretRef: secret {name:?}: {reason}")]
    Secret { name: String, reason: String },
    #[error("secretRef: secret {name:?}: .dockerconfigjson is not valid: {source}")]
    SecretJson {
        name: String,
        source: serde_json::Error,
    },
    #[error(transparent)]
    Kube(#[from] kube::Error),
}

/// The ImageScan's status after a scan of it.
pub async fn scan(ctx: &Context, registry: &ImageRegistry, scan: &ImageScan) -> ImageScanStatus {
    let mut status = scan.status.clone().unwrap_or_default();
    let now = conditions::now();
    match found(ctx, registry, scan).await {
        Ok(found) => {
            status.canonical_image_name = found.canonical;
            status.latest_image = format!("{}:{}", status.canonical_image_name, found.tag);
            status.latest_tag = found.tag;
            status.latest_digest = found.digest;
            status.last_scan_time = Some(Time(jiff_now()));
            conditions::set(
                &mut status.conditions,
                IMAGESCAN_SCANNED,
                true,
                "",
                "",
                &now,
            );
        }
        Err(err) => {
            tracing::info!(namespace = %scan.namespace().unwrap_or_default(), name = %scan.name_any(), error = %err, "image scan failed");
            conditions::set(
                &mut status.conditions,
                IMAGESCAN_SCANNED,
                false,
                "Error",
                &err.to_string(),
                &now,
            );
        }
    }
    status.observed_generation = scan.meta().generation.unwrap_or_default();
    status
}

fn jiff_now() -> k8s_openapi::jiff::Timestamp {
    k8s_openapi::jiff::Timestamp::now()
}

struct Found {
    canonical: String,
    tag: String,
    digest: String,
}

async fn found(
    ctx: &Context,
    registry: &ImageRegistry,
    scan: &ImageScan,
) -> Result<Found, ScanError> {
    let image = ImageName::parse(&scan.spec.image)?;
    let auth = match &scan.spec.secret_ref {
        Some(reference) if !reference.name.is_empty() => {
            registry_auth(ctx, scan, &reference.name, &image.registry).await?
        }
        _ => Auth::default(),
    };
    let tags = registry.tags(&image, &auth).await?;
    let tag = latest_tag(&scan.spec.policy, &tags)?;
    let digest = registry.digest(&image, &tag, &auth).await?;
    Ok(Found {
        canonical: image.canonical(),
        tag,
        digest,
    })
}

#[derive(Deserialize)]
struct DockerConfig {
    #[serde(default)]
    auths: BTreeMap<String, AuthEntry>,
}

#[derive(Deserialize)]
struct AuthEntry {
    #[serde(default)]
    username: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    auth: String,
}

/// The credentials for `registry` in the scan's Secret, read as Fleet reads it: only
/// `kubernetes.io/dockerconfigjson`, and its `auths` entry named exactly like the registry.
async fn registry_auth(
    ctx: &Context,
    scan: &ImageScan,
    name: &str,
    registry: &str,
) -> Result<Auth, ScanError> {
    let failed = |reason: String| ScanError::Secret {
        name: name.to_string(),
        reason,
    };
    let secrets: Api<Secret> =
        Api::namespaced(ctx.client.clone(), &scan.namespace().unwrap_or_default());
    let secret = secrets
        .get_opt(name)
        .await?
        .ok_or_else(|| failed("not found".to_string()))?;
    let type_ = secret.type_.clone().unwrap_or_default();
    if type_ != "kubernetes.io/dockerconfigjson" {
        return Err(failed(format!("unknown secret type {type_:?}")));
    }
    let data = secret
        .data
        .and_then(|mut data| data.remove(".dockerconfigjson"))
        .ok_or_else(|| failed("no .dockerconfigjson key".to_string()))?;
    let config: DockerConfig =
        serde_json::from_slice(&data.0).map_err(|source| ScanError::SecretJson {
            name: name.to_string(),
            source,
        })?;
    let entry = config
        .auths
        .get(registry)
        .ok_or_else(|| failed(format!("auth for {registry:?} not found")))?;
    let (mut username, mut password) = (entry.username.clone(), entry.password.clone());
    if username.is_empty() && !entry.auth.is_empty() {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(entry.auth.trim())
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .ok_or_else(|| {
                failed(format!(
                    "the auth of {registry:?} is not base64 of user:password"
                ))
            })?;
        let (user, pass) = decoded.split_once(':').unwrap_or((decoded.as_str(), ""));
        (username, password) = (user.to_string(), pass.to_string());
    }
    Ok(Auth {
        username,
        password,
        ..Auth::default()
    })
}

/// Writes the scan's status (the controller owns it whole).
pub async fn write_status(
    ctx: &Context,
    scan: &ImageScan,
    status: &ImageScanStatus,
) -> Result<(), kube::Error> {
    let api: Api<ImageScan> =
        Api::namespaced(ctx.client.clone(), &scan.namespace().unwrap_or_default());
    let patch = serde_json::json!({ "status": status });
    api.patch_status(
        &scan.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map(|_| ())
}
