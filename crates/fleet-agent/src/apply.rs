//! Applying rendered objects to the downstream cluster with server-side apply: namespaces first (created
//! unless `createNamespace: false`, with `namespaceLabels`/`namespaceAnnotations` on the release
//! namespace), then every object in install order, skipping those whose applied configuration is unchanged
//! since the last apply. An apply conflict with an object of another agent's set is reported, never forced;
//! a conflict with anyone else (a user's edit, an object that existed before) is forced, because the
//! BundleDeployment declares these fields. Per-object failures are collected, never fatal.

use std::collections::{BTreeMap, BTreeSet};

use fleet_api::{BundleDeploymentOptions, ObjectRef};
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::downstream::Downstream;
use crate::error::{is_conflict, is_not_found};
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
    pub failed: Vec<(ObjectRef, String)>,
    /// Namespaces created in this run.
    pub created_namespaces: Vec<String>,
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
) -> Result<(), String> {
    let object_ref = &desired.object_ref;
    let api = downstream
        .api_for(client, object_ref)
        .await
        .map_err(|err| err.to_string())?;
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
        Err(Some(err)) if !is_conflict(&err) => Err(api_message(&err)),
        Err(_) => {
            let live = api
                .get_opt(&object_ref.name)
                .await
                .map_err(|err| api_message(&err))?;
            let ours = desired
                .object
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(SET_ID_ANNOTATION));
            let theirs = live
                .as_ref()
                .and_then(|live| live.metadata.annotations.as_ref())
                .and_then(|a| a.get(SET_ID_ANNOTATION))
                .map(|id| Value::String(id.clone()));
            if let (Some(theirs), Some(ours)) = (&theirs, ours)
                && theirs != ours
            {
                return Err(format!(
                    "conflict: the object belongs to object set {theirs}; not taking it over"
                ));
            }
            api.patch(
                &object_ref.name,
                &params.clone().force(),
                &Patch::Apply(&desired.object),
            )
            .await
            .map(|_| ())
            .map_err(|err| api_message(&err))
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
) -> BTreeMap<String, String> {
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
                format!("namespace {namespace} does not exist and createNamespace is false"),
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
                missing.insert(
                    namespace.clone(),
                    format!("namespace {namespace}: {}", api_message(&err)),
                );
            }
        }
    }
    missing
}

async fn namespace_exists(downstream: &Downstream, namespace: &str) -> Result<bool, String> {
    let api: kube::Api<k8s_openapi::api::core::v1::Namespace> =
        kube::Api::all(downstream.client().clone());
    match api.get_metadata(namespace).await {
        Ok(_) => Ok(true),
        Err(err) if is_not_found(&err) => Ok(false),
        Err(err) => Err(format!("namespace {namespace}: {}", api_message(&err))),
    }
}
