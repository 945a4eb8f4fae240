//! Helm values out of Bundles and BundleDeployments, as Fleet stores them.
//!
//! **Bundles** (what `fleet apply` does in Fleet's git job, [`extract_bundle`]): the root `helm.values` (key
//! `values.yaml`) and each target's `helm.values` (key: the target's name) go into a Secret named after the
//! Bundle, in its namespace, of type `fleet.cattle.io/bundle-values/v1alpha1`, labelled like the Bundle and
//! owned by it; the Bundle is written without values or `valuesFiles` and with `spec.valuesHash` = sha256 of
//! Go's `json.Marshal` of that `map[string][]byte` (sorted keys, base64 values). The Bundle reconciler puts
//! them back before targeting ([`super::read_values::with_bundle_values`]), and retries while the Secret is missing or does not
//! match the hash, unless it holds the values of a newer version on its way ([`super::cache::WrittenAhead`]).
//!
//! **BundleDeployments** ([`extract`]): a BundleDeployment whose options or staged options carry `helm.values`
//! is written without them, with `spec.valuesHash`, and the values go into its options Secret — same name,
//! same (cluster) namespace, type `fleet.cattle.io/bundle-deployment/v1alpha1`, keys `values` and
//! `stagedValues` (Go JSON, empty when there are none), owned by the BundleDeployment so that deleting it
//! removes the Secret; `valuesHash` = sha256(`values` ‖ `stagedValues`), Fleet's `HashOptions`. The agent
//! reads `values` from there when `valuesHash` is set. The deploymentID is computed before the move, from the
//! full options, so it is the same as Fleet's.
//!
//! The index keeps BundleDeployments with their values put back ([`restore`]) while it knows them (they
//! were written by this process), so planning compares what it wants with what exists, values included.

use std::collections::BTreeMap;

use base64::Engine as _;
use fleet_api::{
    Bundle, BundleDeployment, BundleDeploymentOptions, GenericMap, OPTIONS_SECRET_STAGED_VALUES,
    OPTIONS_SECRET_VALUES, labels,
};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::ObjectMeta;
use kube::{Resource, ResourceExt};
use sha2::{Digest, Sha256};

/// The values taken out of one BundleDeployment.
#[derive(Debug, Clone, PartialEq)]
pub struct MovedValues {
    /// `spec.valuesHash`: sha256 of the `values` JSON followed by the `stagedValues` JSON (empty for none).
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
    let hash = fleet_api::options_values_hash(&json(values.as_ref()), &json(staged.as_ref()));
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
    put_values(&mut bd.spec.options, moved.values.clone());
    put_values(&mut bd.spec.staged_options, moved.staged.clone());
    bd.spec.values_hash = String::new();
    true
}

/// The options Secret of `bd` (as the API server returned it, so with its uid) holding `moved`.
pub fn secret(bd: &BundleDeployment, moved: &MovedValues) -> Secret {
    let data = BTreeMap::from([
        (
            OPTIONS_SECRET_VALUES.to_string(),
            ByteString(json(moved.values.as_ref())),
        ),
        (
            OPTIONS_SECRET_STAGED_VALUES.to_string(),
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

/// The Secret key of a Bundle's root values (Fleet's `helmvalues.ValuesKey` for Bundles).
pub const BUNDLE_VALUES_KEY: &str = "values.yaml";

/// The values taken out of one Bundle: Secret data (key → values JSON) and its hash.
#[derive(Debug, Clone, PartialEq)]
pub struct BundleValues {
    /// `spec.valuesHash` of the Bundle.
    pub hash: String,
    pub data: BTreeMap<String, Vec<u8>>,
}

/// Takes the Helm values out of `bundle` (root and every target) as `fleet apply` does, clearing them and
/// `valuesFiles` and setting `valuesHash`; `None` (with `valuesHash` cleared and nothing else touched) when
/// there are none.
pub fn extract_bundle(bundle: &mut Bundle) -> Option<BundleValues> {
    let mut data = BTreeMap::new();
    if has_values(&bundle.spec.options) {
        data.insert(
            BUNDLE_VALUES_KEY.to_string(),
            json(helm_values(&bundle.spec.options)),
        );
    }
    for target in &bundle.spec.targets {
        if has_values(&target.options) {
            data.insert(target.name.clone(), json(helm_values(&target.options)));
        }
    }
    if data.is_empty() {
        bundle.spec.values_hash = String::new();
        return None;
    }
    let options = std::iter::once(&mut bundle.spec.options)
        .chain(bundle.spec.targets.iter_mut().map(|t| &mut t.options));
    for options in options {
        if let Some(helm) = options.helm.as_mut() {
            helm.values = None;
            helm.values_files = Vec::new();
        }
    }
    let hash = bundle_values_hash(&data);
    bundle.spec.values_hash = hash.clone();
    Some(BundleValues { hash, data })
}

/// Fleet's `HashValuesSecret`: sha256 of Go's `json.Marshal(map[string][]byte)` (keys sorted, values base64).
pub fn bundle_values_hash(data: &BTreeMap<String, Vec<u8>>) -> String {
    let encoded: BTreeMap<&str, String> = data
        .iter()
        .map(|(key, value)| {
            (
                key.as_str(),
                base64::engine::general_purpose::STANDARD.encode(value),
            )
        })
        .collect();
    let text = fleet_api::go_json::to_string(&encoded).unwrap_or_default();
    hex(&Sha256::digest(text.as_bytes()))
}

/// Puts a values Secret's `data` back into `bundle` (Fleet's `SetValues`): `values.yaml` as the root values,
/// every other key as the values of the target of that name. Fails, naming the key, on a value that is not
/// a JSON object.
pub fn restore_bundle(bundle: &mut Bundle, data: &BTreeMap<String, Vec<u8>>) -> Result<(), String> {
    let parse = |key: &str, bytes: &[u8]| -> Result<Option<GenericMap>, String> {
        if bytes.is_empty() {
            return Ok(None);
        }
        // Never echo the values: they may hold secrets.
        serde_json::from_slice(bytes)
            .map(Some)
            .map_err(|_| format!("key {key:?} of the values secret is not a JSON object"))
    };
    if let Some(bytes) = data.get(BUNDLE_VALUES_KEY) {
        put_values(&mut bundle.spec.options, parse(BUNDLE_VALUES_KEY, bytes)?);
    }
    for target in &mut bundle.spec.targets {
        if let Some(bytes) = data.get(&target.name) {
            put_values(&mut target.options, parse(&target.name, bytes)?);
        }
    }
    Ok(())
}

/// The Bundle's values Secret (`bundle` as the API server returned it, so with its uid; without one the
/// Secret has no owner yet).
pub fn bundle_secret(bundle: &Bundle, values: &BundleValues) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(bundle.name_any()),
            namespace: bundle.namespace(),
            labels: Some(bundle.labels().clone()).filter(|l| !l.is_empty()),
            owner_references: bundle
                .meta()
                .uid
                .as_ref()
                .and_then(|_| bundle.controller_owner_ref(&()))
                .map(|owner| {
                    vec![OwnerReference {
                        block_owner_deletion: Some(true),
                        ..owner
                    }]
                }),
            ..ObjectMeta::default()
        },
        type_: Some(labels::SECRET_TYPE_BUNDLE_VALUES.to_string()),
        data: Some(
            values
                .data
                .iter()
                .map(|(key, value)| (key.clone(), ByteString(value.clone())))
                .collect(),
        ),
        ..Secret::default()
    }
}

fn helm_values(options: &BundleDeploymentOptions) -> Option<&GenericMap> {
    options.helm.as_ref().and_then(|helm| helm.values.as_ref())
}

pub fn put_values(options: &mut BundleDeploymentOptions, values: Option<GenericMap>) {
    if let Some(values) = values {
        options.helm.get_or_insert_with(Default::default).values = Some(values);
    }
}

fn has_values(options: &BundleDeploymentOptions) -> bool {
    helm_values(options).is_some_and(|values| !values.0.is_empty())
}

fn take(options: &mut BundleDeploymentOptions) -> Option<GenericMap> {
    if !has_values(options) {
        return None;
    }
    options.helm.as_mut().and_then(|helm| helm.values.take())
}

/// The JSON of a values map as Go's `json.Marshal` writes it (keys sorted, `<>&` escaped); empty for none, as
/// Fleet writes and hashes it.
fn json(values: Option<&GenericMap>) -> Vec<u8> {
    values
        .filter(|v| !v.is_empty())
        .and_then(|v| fleet_api::go_json::to_string(v).ok())
        .map(String::into_bytes)
        .unwrap_or_default()
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
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

    /// The examples of Fleet's `helmvalues` tests (`TestExtractOptions`, `TestExtractValues`).
    #[test]
    fn hashes_are_fleets() {
        let mut bd = BundleDeployment::new(
            "b",
            BundleDeploymentSpec {
                options: with_values(json!({"key": "value"})),
                ..BundleDeploymentSpec::default()
            },
        );
        let moved = extract(&mut bd).unwrap();
        assert_eq!(
            moved.hash,
            "e43abcf3375244839c012f9633f95862d232a95b00d5bc7348b3098b9fed7f32"
        );
        let secret = secret(&bd, &moved);
        let data = secret.data.unwrap();
        assert_eq!(data["values"].0, br#"{"key":"value"}"#);
        assert!(data["stagedValues"].0.is_empty());
        let mut bd = BundleDeployment::new(
            "b",
            BundleDeploymentSpec {
                options: with_values(json!({"key": "value"})),
                staged_options: with_values(json!({"newkey": "value"})),
                ..BundleDeploymentSpec::default()
            },
        );
        assert_eq!(
            extract(&mut bd).unwrap().hash,
            "01c44d8a446abccb870503db292e07cb2b8da135b6fec52b21048bdab8c84a7c"
        );

        let mut bundle = Bundle::new("app", Default::default());
        bundle.spec.options = with_values(json!({"key": "value"}));
        bundle.spec.targets = vec![fleet_api::BundleTarget {
            name: "target".into(),
            options: with_values(json!({"newkey": "value"})),
            ..Default::default()
        }];
        let values = extract_bundle(&mut bundle).unwrap();
        assert_eq!(
            values.hash,
            "17e05a97acde825d03ca37c2b8fc1aecf3f8f9fde28c21702492c56d4d4a68f1"
        );
        assert_eq!(bundle.spec.values_hash, values.hash);
        assert_eq!(values.data["values.yaml"], br#"{"key":"value"}"#);
        assert_eq!(values.data["target"], br#"{"newkey":"value"}"#);
    }

    #[test]
    fn values_json_sorts_keys_and_escapes_as_go_does() {
        let mut bd = BundleDeployment::new(
            "b",
            BundleDeploymentSpec {
                options: with_values(json!({"zeta": "<b>&", "alpha": {"y": 1.0, "x": [2]}})),
                ..BundleDeploymentSpec::default()
            },
        );
        let moved = extract(&mut bd).unwrap();
        let data = secret(&bd, &moved).data.unwrap();
        assert_eq!(
            String::from_utf8(data["values"].0.clone()).unwrap(),
            r#"{"alpha":{"x":[2],"y":1},"zeta":"\u003cb\u003e\u0026"}"#
        );
    }

    #[test]
    fn bundle_values_move_out_and_back() {
        let mut bundle = Bundle::new("app", Default::default());
        bundle.metadata.namespace = Some("fleet-default".into());
        bundle.metadata.uid = Some("uid-b".into());
        bundle.metadata.labels =
            Some([("fleet.cattle.io/repo-name".to_string(), "r".to_string())].into());
        let mut root = with_values(json!({"password": "s3cret"}));
        root.helm.as_mut().unwrap().values_files = vec!["values.yaml".into()];
        bundle.spec.options = root;
        bundle.spec.targets = vec![
            fleet_api::BundleTarget {
                name: "prod".into(),
                options: with_values(json!({"replicas": 3})),
                ..Default::default()
            },
            fleet_api::BundleTarget {
                name: "dev".into(),
                ..Default::default()
            },
        ];
        let original = bundle.clone();
        let values = extract_bundle(&mut bundle).unwrap();
        let written = serde_json::to_string(&bundle.spec).unwrap();
        assert!(
            !written.contains("s3cret") && !written.contains("replicas"),
            "{written}"
        );
        assert!(!written.contains("valuesFiles"), "{written}");
        assert_eq!(
            values.data.keys().collect::<Vec<_>>(),
            ["prod", "values.yaml"]
        );
        let secret = bundle_secret(&bundle, &values);
        assert_eq!(
            secret.type_.as_deref(),
            Some("fleet.cattle.io/bundle-values/v1alpha1")
        );
        assert_eq!(secret.metadata.labels, original.metadata.labels);
        let owner = &secret.metadata.owner_references.unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.uid.as_str()),
            ("Bundle", "uid-b")
        );
        assert_eq!(owner.controller, Some(true));
        let data: BTreeMap<String, Vec<u8>> = secret
            .data
            .unwrap()
            .into_iter()
            .map(|(k, v)| (k, v.0))
            .collect();
        assert_eq!(bundle_values_hash(&data), bundle.spec.values_hash);
        restore_bundle(&mut bundle, &data).unwrap();
        assert_eq!(
            bundle.spec.options.helm.as_ref().unwrap().values,
            original.spec.options.helm.as_ref().unwrap().values
        );
        assert_eq!(
            bundle.spec.targets[0].options.helm.as_ref().unwrap().values,
            original.spec.targets[0]
                .options
                .helm
                .as_ref()
                .unwrap()
                .values
        );
        assert!(bundle.spec.targets[1].options.helm.is_none());
        let err = restore_bundle(
            &mut bundle,
            &BTreeMap::from([("prod".to_string(), b"[1]".to_vec())]),
        )
        .unwrap_err();
        assert_eq!(
            err,
            "key \"prod\" of the values secret is not a JSON object"
        );

        let mut plain = Bundle::new("plain", Default::default());
        plain.spec.values_hash = "stale".into();
        assert_eq!(extract_bundle(&mut plain), None);
        assert!(plain.spec.values_hash.is_empty());
    }
}
