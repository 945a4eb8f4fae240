//! Helm values out of BundleDeployments, as Fleet stores them: a BundleDeployment whose options or staged
//! options carry `helm.values` is written without them, with `spec.valuesHash`, and the values go into its
//! options Secret — same name, same (cluster) namespace, type `fleet.cattle.io/bundle-deployment/v1alpha1`,
//! keys `values` and `stagedValues` (JSON), owned by the BundleDeployment so that deleting it removes the
//! Secret. The agent reads `values` from there when `valuesHash` is set. The deploymentID is computed
//! before the move, from the full options, so it is the same as Fleet's.
//!
//! The index keeps BundleDeployments with their values put back ([`restore`]) while it knows them (they
//! were written by this process), so planning compares what it wants with what exists, values included.

use std::collections::BTreeMap;

use fleet_api::{BundleDeployment, BundleDeploymentOptions, GenericMap, labels};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::ObjectMeta;
use kube::{Resource, ResourceExt};
use sha2::{Digest, Sha256};

/// The values taken out of one BundleDeployment.
#[derive(Debug, Clone, PartialEq)]
pub struct MovedValues {
    /// `spec.valuesHash`: sha256 of the `values` JSON followed by the `stagedValues` JSON.
    pub hash: String,
    pub values: Option<GenericMap>,
    pub staged: Option<GenericMap>,
}

/// Takes the Helm values out of `bd`'s options and staged options and sets `valuesHash`; `None` (and
/// `bd` untouched) when neither has any.
pub fn extract(bd: &mut BundleDeployment) -> Option<MovedValues> {
    if !has_values(&bd.spec.options) && !has_values(&bd.spec.staged_options) {
        return None;
    }
    let values = take(&mut bd.spec.options);
    let staged = take(&mut bd.spec.staged_options);
    let mut digest = Sha256::new();
    digest.update(json(values.as_ref()));
    digest.update(json(staged.as_ref()));
    let hash = hex(&digest.finalize());
    bd.spec.values_hash = hash.clone();
    Some(MovedValues {
        hash,
        values,
        staged,
    })
}

/// Puts `moved` back into `bd` when its `valuesHash` says they belong to it (the inverse of [`extract`]).
pub fn restore(bd: &mut BundleDeployment, moved: &MovedValues) -> bool {
    if bd.spec.values_hash.is_empty() || bd.spec.values_hash != moved.hash {
        return false;
    }
    put(&mut bd.spec.options, moved.values.clone());
    put(&mut bd.spec.staged_options, moved.staged.clone());
    bd.spec.values_hash = String::new();
    true
}

/// The options Secret of `bd` (as the API server returned it, so with its uid) holding `moved`.
pub fn secret(bd: &BundleDeployment, moved: &MovedValues) -> Secret {
    let data = BTreeMap::from([
        (
            "values".to_string(),
            ByteString(json(moved.values.as_ref())),
        ),
        (
            "stagedValues".to_string(),
            ByteString(json(moved.staged.as_ref())),
        ),
    ]);
    Secret {
        metadata: ObjectMeta {
            name: Some(bd.name_any()),
            namespace: bd.namespace(),
            labels: Some(BTreeMap::from([(
                labels::MANAGED.to_string(),
                "true".to_string(),
            )])),
            owner_references: bd.controller_owner_ref(&()).map(|owner| {
                vec![OwnerReference {
                    block_owner_deletion: Some(true),
                    ..owner
                }]
            }),
            ..ObjectMeta::default()
        },
        type_: Some(labels::SECRET_TYPE_BUNDLE_DEPLOYMENT_OPTIONS.to_string()),
        data: Some(data),
        ..Secret::default()
    }
}

fn has_values(options: &BundleDeploymentOptions) -> bool {
    options
        .helm
        .as_ref()
        .and_then(|helm| helm.values.as_ref())
        .is_some_and(|values| !values.0.is_empty())
}

fn take(options: &mut BundleDeploymentOptions) -> Option<GenericMap> {
    if !has_values(options) {
        return None;
    }
    options.helm.as_mut().and_then(|helm| helm.values.take())
}

fn put(options: &mut BundleDeploymentOptions, values: Option<GenericMap>) {
    if let (Some(values), Some(helm)) = (values, options.helm.as_mut()) {
        helm.values = Some(values);
    }
}

/// The JSON of a values map; `{}` for none (Fleet treats `{}` and `null` alike).
fn json(values: Option<&GenericMap>) -> Vec<u8> {
    values
        .and_then(|v| serde_json::to_vec(v).ok())
        .unwrap_or_else(|| b"{}".to_vec())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_api::{BundleDeploymentSpec, HelmOptions};
    use serde_json::json;

    fn with_values(values: serde_json::Value) -> BundleDeploymentOptions {
        BundleDeploymentOptions {
            helm: Some(HelmOptions {
                values: Some(serde_json::from_value(values).unwrap()),
                ..HelmOptions::default()
            }),
            ..BundleDeploymentOptions::default()
        }
    }

    #[test]
    fn values_move_out_and_back() {
        let mut bd = BundleDeployment::new(
            "b",
            BundleDeploymentSpec {
                options: with_values(json!({"replicas": 2, "password": "s3cret"})),
                staged_options: with_values(json!({"replicas": 3, "password": "s3cret"})),
                ..BundleDeploymentSpec::default()
            },
        );
        bd.metadata.namespace = Some("cluster-ns".into());
        bd.metadata.uid = Some("uid-1".into());
        let original = bd.clone();
        let moved = extract(&mut bd).expect("values to move");
        assert_eq!(bd.spec.values_hash, moved.hash);
        let written = serde_json::to_string(&bd.spec).unwrap();
        assert!(!written.contains("s3cret"), "{written}");
        let secret = secret(&bd, &moved);
        assert_eq!(
            secret.type_.as_deref(),
            Some("fleet.cattle.io/bundle-deployment/v1alpha1")
        );
        let data = secret.data.as_ref().unwrap();
        let values: serde_json::Value = serde_json::from_slice(&data["values"].0).unwrap();
        assert_eq!(values, json!({"replicas": 2, "password": "s3cret"}));
        let staged: serde_json::Value = serde_json::from_slice(&data["stagedValues"].0).unwrap();
        assert_eq!(staged["replicas"], 3);
        assert_eq!(secret.metadata.owner_references.unwrap()[0].uid, "uid-1");
        assert!(restore(&mut bd, &moved));
        assert_eq!(bd.spec, original.spec);
    }

    #[test]
    fn nothing_moves_without_values_and_hashes_must_match() {
        let mut bd = BundleDeployment::new("b", BundleDeploymentSpec::default());
        assert_eq!(extract(&mut bd), None);
        assert!(bd.spec.values_hash.is_empty());
        let mut other = BundleDeployment::new(
            "b",
            BundleDeploymentSpec {
                options: with_values(json!({"a": 1})),
                ..BundleDeploymentSpec::default()
            },
        );
        let moved = extract(&mut other).unwrap();
        let mut changed = other.clone();
        changed.spec.values_hash = "another".into();
        assert!(!restore(&mut changed, &moved));
        // Same values, same hash: the hash is stable.
        let mut again = BundleDeployment::new(
            "b",
            BundleDeploymentSpec {
                options: with_values(json!({"a": 1})),
                ..BundleDeploymentSpec::default()
            },
        );
        assert_eq!(extract(&mut again).unwrap().hash, moved.hash);
    }
}
