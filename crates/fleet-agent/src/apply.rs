//! Applying rendered objects to the downstream cluster with server-side apply: namespaces first (created
//! unless `createNamespace: false`, with `namespaceLabels`/`namespaceAnnotations` on the release
//! namespace), then every object in install order, skipping those whose applied configuration is unchanged
//! since the last apply. An apply conflict with an object of another agent's set is reported, never forced;
//! a conflict with anyone else (a user's edit, an object that existed before) is forced, because the
//! BundleDeployment declares these fields. Per-object failures are collected, never fatal.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use fleet_api::{BundleDeploymentOptions, ObjectRef};
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::downstream::Downstream;
use crate::error::{Error, is_conflict, is_not_found};
use crate::inventory::object_key;
use crate::order::sort_for_install;
use crate::render::Desired;
use crate::scope::SET_ID_ANNOTATION;

/// What applying a set of objects did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Objects now matching their desired configuration, with its hash.
    pub applied: BTreeMap<String, String>,
    /// Objects actually sent to the API server in this run.
    pub patched: Vec<ObjectRef>,
    /// Objects that could not be applied, with the reason.
    pub failed: Vec<(ObjectRef, ObjectError)>,
    /// Namespaces created in this run.
    pub created_namespaces: Vec<String>,
}

/// Why one object could not be applied, read or deleted. The BundleDeployment's status shows it after the
/// object's name; the errors are shared (not copied) by the objects of one missing namespace.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ObjectError {
    /// The object's kind or namespace could not be resolved against the downstream API.
    #[error("{0}")]
    Unresolved(Arc<Error>),
    /// The API server refused a request for the object: shown with the API's own message.
    #[error("{}", api_message(.0))]
    Refused(Arc<kube::Error>),
    /// The live object carries another object set's ID, so it is not taken over.
    #[error(
        "conflict: the object belongs to object set {}; not taking it over",
        Value::from(owner.as_str())
    )]
    OtherSet { owner: String },
    /// The object's namespace could not be read or created.
    #[error("namespace {namespace}: {}", api_message(error))]
    Namespace {
        namespace: String,
        error: Arc<kube::Error>,
    },
    /// The object's namespace does not exist and `createNamespace: false` forbids creating it.
    #[error("namespace {namespace} does not exist and createNamespace is false")]
    NoNamespace { namespace: String },
    /// Deleting an object the BundleDeployment no longer deploys failed.
    #[error("pruning: {0}")]
    Pruning(Box<ObjectError>),
}

impl ObjectError {
    pub(crate) fn refused(err: kube::Error) -> Self {
        ObjectError::Refused(Arc::new(err))
    }

    pub(crate) fn unresolved(err: Error) -> Self {
        ObjectError::Unresolved(Arc::new(err))
    }

    fn namespace(namespace: &str, err: kube::Error) -> Self {
        ObjectError::Namespace {
            namespace: namespace.to_string(),
            error: Arc::new(err),
        }
    }
}

/// The hash of an applied configuration.
pub fn config_hash(object: &Value) -> String {
    hex::encode(Sha256::digest(object.to_string().as_bytes()))
}

/// The namespace the bundle deploys into: the target namespace, else the default namespace, else `default`.
pub use fleet_render::namespace::release_namespace;

/// Applies objects whose hash differs from `previous` (or all with `force_all`).
pub async fn apply_all(
    downstream: &Downstream,
    client: &kube::Client,
    manager: &str,
    objects: &[Desired],
    previous: &BTreeMap<String, &str>,
    options: &BundleDeploymentOptions,
) -> Outcome {
    let mut outcome = Outcome::default();
    let missing_namespaces =
        ensure_namespaces(downstream, manager, objects, options, &mut outcome).await;
    let mut ordered: Vec<&Desired> = objects.iter().collect();
    sort_for_install(&mut ordered, |desired| desired.object_ref.kind.as_str());
    for desired in ordered {
        let hash = config_hash(&desired.object);
        if let Some(reason) = missing_namespaces.get(&desired.object_ref.namespace) {
            outcome
                .failed
                .push((desired.object_ref.clone(), reason.clone()));
            continue;
        }
        let key = object_key(&desired.object_ref);
        if previous.get(&key) == Some(&hash.as_str()) {
            outcome.applied.insert(key, hash);
            continue;
        }
        match apply_one(downstream, client, manager, desired, false).await {
            Ok(()) => {
                outcome.patched.push(desired.object_ref.clone());
                outcome.applied.insert(key, hash);
            }
            Err(reason) => outcome.failed.push((desired.object_ref.clone(), reason)),
        }
    }
    outcome
}

/// Applies one object. Without `force`, a conflict is forced only when the live object is not another
/// set's; with `force` it is forced regardless of whose fields they are (still never another set's object).
pub async fn apply_one(
    downstream: &Downstream,
    client: &kube::Client,
    manager: &str,
    desired: &Desired,
    force: bool,
) -> Result<(), ObjectError> {
    let object_ref = &desired.object_ref;
    let api = downstream
        .api_for(client, object_ref)
        .await
        .map_err(ObjectError::unresolved)?;
    let params = PatchParams::apply(manager);
    let first = if force {
        Err(None)
    } else {
        api.patch(&object_ref.name, &params, &Patch::Apply(&desired.object))
            .await
            .map_err(Some)
    };
    match first {
        Ok(_) => Ok(()),
        Err(Some(err)) if !is_conflict(&err) => Err(ObjectError::refused(err)),
        Err(_) => {
            let live = api
                .get_opt(&object_ref.name)
                .await
                .map_err(ObjectError::refused)?;
            let ours = desired
                .object
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(SET_ID_ANNOTATION));
            let theirs = live
                .as_ref()
                .and_then(|live| live.metadata.annotations.as_ref())
                .and_then(|a| a.get(SET_ID_ANNOTATION));
            if let (Some(theirs), Some(ours)) = (theirs, ours)
                && ours.as_str() != Some(theirs.as_str())
            {
                return Err(ObjectError::OtherSet {
                    owner: theirs.clone(),
                });
            }
            api.patch(
                &object_ref.name,
                &params.clone().force(),
                &Patch::Apply(&desired.object),
            )
            .await
            .map(|_| ())
            .map_err(ObjectError::refused)
        }
    }
}

/// The API server's message of an error, without the client's wrapping.
pub fn api_message(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) => status.message.clone(),
        other => other.to_string(),
    }
}

/// Makes sure every namespace the objects live in exists; returns namespaces that do not, with the reason.
pub async fn ensure_namespaces(
    downstream: &Downstream,
    manager: &str,
    objects: &[Desired],
    options: &BundleDeploymentOptions,
    outcome: &mut Outcome,
) -> BTreeMap<String, ObjectError> {
    let mut missing = BTreeMap::new();
    let in_bundle: BTreeSet<&str> = objects
        .iter()
        .filter(|d| d.object_ref.kind == "Namespace" && d.object_ref.api_version == "v1")
        .map(|d| d.object_ref.name.as_str())
        .collect();
    let release = release_namespace(options);
    let mut needed: BTreeSet<String> = objects
        .iter()
        .map(|d| d.object_ref.namespace.clone())
        .filter(|ns| !ns.is_empty())
        .collect();
    needed.insert(release.clone());
    let create = options.create_namespace.unwrap_or(true);
    for namespace in needed {
        let labelled = namespace == release
            && (options.namespace_labels.is_some() || options.namespace_annotations.is_some());
        if in_bundle.contains(namespace.as_str()) && !labelled {
            continue;
        }
        let exists = match namespace_exists(downstream, &namespace).await {
            Ok(exists) => exists,
            Err(reason) => {
                missing.insert(namespace, reason);
                continue;
            }
        };
        if !exists && !create && !in_bundle.contains(namespace.as_str()) {
            missing.insert(
                namespace.clone(),
                ObjectError::NoNamespace {
                    namespace: namespace.clone(),
                },
            );
            continue;
        }
        if exists && !labelled {
            continue;
        }
        let mut metadata = json!({ "name": namespace });
        if labelled {
            if let Some(labels) = &options.namespace_labels {
                metadata["labels"] = json!(labels);
            }
            if let Some(annotations) = &options.namespace_annotations {
                metadata["annotations"] = json!(annotations);
            }
        }
        let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": metadata});
        let api: kube::Api<k8s_openapi::api::core::v1::Namespace> =
            kube::Api::all(downstream.client().clone());
        // A separate manager, so that labelling never drops fields the bundle's own Namespace object sets.
        match api
            .patch(
                &namespace,
                &PatchParams::apply(&format!("{manager}-namespace")),
                &Patch::Apply(body),
            )
            .await
        {
            Ok(_) if !exists => outcome.created_namespaces.push(namespace),
            Ok(_) => {}
            Err(err) => {
                missing.insert(namespace.clone(), ObjectError::namespace(&namespace, err));
            }
        }
    }
    missing
}

async fn namespace_exists(downstream: &Downstream, namespace: &str) -> Result<bool, ObjectError> {
    let api: kube::Api<k8s_openapi::api::core::v1::Namespace> =
        kube::Api::all(downstream.client().clone());
    match api.get_metadata(namespace).await {
        Ok(_) => Ok(true),
        Err(err) if is_not_found(&err) => Ok(false),
        Err(err) => Err(ObjectError::namespace(namespace, err)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_errors_read_as_the_status_shows_them() {
        let refused = ObjectError::refused(kube::Error::Api(Box::new(
            serde_json::from_value(json!({
                "status": "Failure", "code": 422, "message": "spec.replicas: Invalid value", "reason": "Invalid",
            }))
            .unwrap(),
        )));
        assert_eq!(refused.to_string(), "spec.replicas: Invalid value");
        assert_eq!(
            ObjectError::OtherSet {
                owner: "s-1".into()
            }
            .to_string(),
            r#"conflict: the object belongs to object set "s-1"; not taking it over"#
        );
        assert_eq!(
            ObjectError::Pruning(Box::new(ObjectError::NoNamespace {
                namespace: "apps".into()
            }))
            .to_string(),
            "pruning: namespace apps does not exist and createNamespace is false"
        );
    }
}
