//! Fetching what a BundleDeployment deploys from the hub: the Content named by the manifest ID (the part of
//! the deploymentID before `:`), decoded as Fleet encodes it (gzip of the manifest JSON, checked against
//! `sha256sum`), and the Helm values the controller moved into the options Secret, once it holds the values
//! the BundleDeployment's `valuesHash` names.

use std::collections::BTreeMap;
use std::io::Read;

use fleet_api::{
    BundleDeployment, BundleDeploymentOptions, BundleResource, Content,
    OPTIONS_SECRET_STAGED_VALUES, OPTIONS_SECRET_VALUES,
};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// Fleet's manifest: `{"resources":[...]}`.
#[derive(Debug, Default, Deserialize)]
struct Manifest {
    #[serde(default)]
    resources: Vec<BundleResource>,
}

/// The manifest ID of a deploymentID (`<manifestID>:<options hash>`).
pub fn manifest_id(deployment_id: &str) -> &str {
    deployment_id
        .split_once(':')
        .map_or(deployment_id, |(id, _)| id)
}

/// Decodes a Content object's bytes into bundle resources, verifying the checksum when one is given.
pub fn decode_content(
    name: &str,
    compressed: &[u8],
    sha256sum: &str,
) -> Result<Vec<BundleResource>> {
    let content_error = |message: String| Error::Content {
        name: name.to_string(),
        message,
    };
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(compressed)
        .read_to_end(&mut json)
        .map_err(|err| content_error(format!("not gzip data: {err}")))?;
    if !sha256sum.is_empty() {
        let actual = hex::encode(Sha256::digest(&json));
        if actual != sha256sum {
            return Err(content_error(format!(
                "checksum mismatch: sha256sum is {sha256sum}, the content hashes to {actual}"
            )));
        }
    }
    let manifest: Manifest = serde_json::from_slice(&json)
        .map_err(|err| content_error(format!("manifest JSON: {err}")))?;
    Ok(manifest.resources)
}

/// Reads the Content of a deploymentID from the hub.
pub async fn content(hub: &kube::Client, deployment_id: &str) -> Result<Vec<BundleResource>> {
    let name = manifest_id(deployment_id);
    let api: Api<Content> = Api::all(hub.clone());
    let content = api
        .get(name)
        .await
        .map_err(|err| Error::kube(format!("reading content {name}"), err))?;
    let bytes = content
        .spec
        .content
        .as_ref()
        .map(|bytes| bytes.0.as_slice())
        .unwrap_or_default();
    decode_content(name, bytes, &content.spec.sha256sum)
}

/// The options to render with: the BundleDeployment's options with the Helm values from its options Secret
/// (when the controller moved them there, signalled by `valuesHash`). The controller writes that Secret just
/// after the BundleDeployment, so until the Secret holds the values `valuesHash` names (it is missing, or
/// still holds the previous version's) this is [`Error::OptionsSecretPending`], as Fleet's agent retries on a
/// hash mismatch: rendering with the previous values would deploy them under the new deploymentID.
pub async fn options(hub: &kube::Client, bd: &BundleDeployment) -> Result<BundleDeploymentOptions> {
    let mut options = bd.spec.options.clone();
    if bd.spec.values_hash.is_empty() {
        return Ok(options);
    }
    let namespace = bd.metadata.namespace.as_deref().unwrap_or_default();
    let name = bd.metadata.name.as_deref().unwrap_or_default();
    let pending = |problem| Error::OptionsSecretPending {
        namespace: namespace.to_string(),
        name: name.to_string(),
        problem,
    };
    let secrets: Api<Secret> = Api::namespaced(hub.clone(), namespace);
    let secret = secrets
        .get_opt(name)
        .await
        .map_err(|err| {
            Error::kube(
                format!("reading the options secret {namespace}/{name}"),
                err,
            )
        })?
        .ok_or_else(|| pending("does not exist"))?;
    if options_secret_hash(secret.data.as_ref()) != bd.spec.values_hash {
        return Err(pending("does not hold the values of valuesHash"));
    }
    let values = fleet_api::options_secret_values(secret.data.as_ref(), OPTIONS_SECRET_VALUES)
        .map_err(|_| Error::Content {
            name: format!("secret {namespace}/{name}"),
            message: "key `values` is not a JSON object".to_string(),
        })?;
    if let Some(values) = values {
        options.helm.get_or_insert_with(Default::default).values = Some(values);
    }
    Ok(options)
}

/// Fleet's `HashOptions` of an options Secret: sha256 of its `values` followed by its `stagedValues` (an
/// absent key counts as empty), lowercase hex; what the controller puts in `spec.valuesHash`.
pub fn options_secret_hash(data: Option<&BTreeMap<String, ByteString>>) -> String {
    let bytes = |key: &str| {
        data.and_then(|data| data.get(key))
            .map(|bytes| bytes.0.as_slice())
            .unwrap_or_default()
    };
    fleet_api::options_values_hash(
        bytes(OPTIONS_SECRET_VALUES),
        bytes(OPTIONS_SECRET_STAGED_VALUES),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn content_round_trips_and_is_checked() {
        let json = br#"{"resources":[{"name":"cm.yaml","content":"kind: ConfigMap\n"}]}"#;
        let sum = hex::encode(Sha256::digest(json));
        let resources = decode_content("s-1", &gzip(json), &sum).unwrap();
        assert_eq!(resources.len(), 1);
        assert_eq!(resources[0].name, "cm.yaml");
        let err = decode_content("s-1", &gzip(json), "00").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("content s-1: checksum mismatch"),
            "{err}"
        );
        let err = decode_content("s-1", json, "").unwrap_err();
        assert!(err.to_string().contains("not gzip data"), "{err}");
    }

    #[test]
    fn manifest_id_is_the_part_before_the_colon() {
        assert_eq!(manifest_id("s-abc:123"), "s-abc");
        assert_eq!(manifest_id("s-abc"), "s-abc");
    }
}
