//! Rendering at the agent: the bundle's resources and the BundleDeployment's options go through
//! [`fleet_render::render_bundle`] (the code `fleet test` uses; a BundleDeployment is named after its
//! bundle, which is Helm's default release name), then every object is checked to be a
//! Kubernetes object and marked as ours: the object-set ID annotation and hash label of this agent's
//! scope, the scope label, and `helm.sh/resource-policy: keep` on CRDs unless `deleteCRDResources`.

use std::collections::{BTreeMap, BTreeSet};

use fleet_api::{BundleDeploymentOptions, BundleResource, ObjectRef};
use serde_json::{Map, Value};

use crate::downstream::Downstream;
use crate::error::{Error, Result};
use crate::scope::{SCOPE_LABEL, SET_HASH_LABEL, SET_ID_ANNOTATION, Scope};

/// Annotation that keeps an object on uninstall (Helm's).
pub const RESOURCE_POLICY: &str = "helm.sh/resource-policy";

/// One rendered object and its reference.
#[derive(Debug, Clone, PartialEq)]
pub struct Desired {
    pub object_ref: ObjectRef,
    pub object: Value,
}

impl Desired {
    /// Whether the object must survive uninstall and pruning.
    pub fn keep(&self) -> bool {
        self.object
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(RESOURCE_POLICY))
            .and_then(Value::as_str)
            == Some("keep")
    }
}

/// A BundleDeployment's objects as this agent applies them.
#[derive(Debug)]
pub struct Placed {
    pub objects: Vec<Desired>,
    /// How the bundle rendered: hooks exist only in Helm charts; raw manifests with hook annotations are plain
    /// objects, as in Fleet.
    pub style: fleet_render::Style,
}

/// Renders and marks the objects of a bundle for one BundleDeployment; namespaces are set by what the
/// downstream cluster's discovery says of each kind (see [`fleet_render::namespace`]).
pub async fn render(
    resources: &[BundleResource],
    options: &BundleDeploymentOptions,
    scope: &Scope,
    bundle_deployment: &str,
    downstream: &Downstream,
) -> Result<Placed> {
    let fleet_render::Rendered { objects, style, .. } =
        fleet_render::render_without_namespaces(resources, options, bundle_deployment)?;
    let kinds: BTreeSet<(String, String)> = objects
        .iter()
        .map(|object| {
            let field = |name: &str| object.get(name).and_then(Value::as_str).unwrap_or("");
            (field("apiVersion").to_string(), field("kind").to_string())
        })
        .filter(|(api_version, kind)| !api_version.is_empty() && !kind.is_empty())
        .collect();
    let mut namespaced = BTreeMap::new();
    for (api_version, kind) in kinds {
        // A kind the cluster does not serve yet (its CRD is in this bundle) is decided offline.
        if let Ok((_, is_namespaced)) = downstream.resolve(&api_version, &kind).await {
            namespaced.insert((api_version, kind), is_namespaced);
        }
    }
    let objects = place_and_mark(
        objects,
        options,
        scope,
        bundle_deployment,
        &|api_version, kind| {
            namespaced
                .get(&(api_version.to_string(), kind.to_string()))
                .copied()
        },
    )?;
    Ok(Placed { objects, style })
}

/// Sets the namespaces of rendered objects (`discovered` says which kinds the cluster namespaces) and marks
/// them.
pub fn place_and_mark(
    mut objects: Vec<Value>,
    options: &BundleDeploymentOptions,
    scope: &Scope,
    bundle_deployment: &str,
    discovered: &dyn Fn(&str, &str) -> Option<bool>,
) -> Result<Vec<Desired>> {
    fleet_render::namespace::apply_with(
        &mut objects,
        &options.default_namespace,
        &options.target_namespace,
        discovered,
    )?;
    mark(objects, options, scope, bundle_deployment)
}

/// Checks objects and marks them as this scope's objects of a BundleDeployment.
pub fn mark(
    objects: Vec<Value>,
    options: &BundleDeploymentOptions,
    scope: &Scope,
    bundle_deployment: &str,
) -> Result<Vec<Desired>> {
    let set_id = scope.set_id(bundle_deployment);
    let set_hash = Scope::set_hash(&set_id);
    objects
        .into_iter()
        .enumerate()
        .map(|(index, mut object)| {
            let object_ref = object_ref(index, &object)?;
            let metadata = object
                .get_mut("metadata")
                .and_then(Value::as_object_mut)
                .expect("checked by object_ref");
            string_map(metadata, "annotations")
                .insert(SET_ID_ANNOTATION.to_string(), Value::String(set_id.clone()));
            let labels = string_map(metadata, "labels");
            labels.insert(SET_HASH_LABEL.to_string(), Value::String(set_hash.clone()));
            labels.insert(
                SCOPE_LABEL.to_string(),
                Value::String(scope.label_value().to_string()),
            );
            if object_ref.kind == "CustomResourceDefinition" && !options.delete_crd_resources {
                string_map(metadata, "annotations")
                    .entry(RESOURCE_POLICY)
                    .or_insert_with(|| Value::String("keep".to_string()));
            }
            Ok(Desired { object_ref, object })
        })
        .collect()
}

fn string_map<'a>(metadata: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let entry = metadata
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    entry.as_object_mut().expect("just made an object")
}

/// The reference of a rendered object, or an error naming what is wrong with it.
pub fn object_ref(index: usize, object: &Value) -> Result<ObjectRef> {
    let field = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let name = field("/metadata/name");
    let invalid = |message: &str| Error::InvalidObject {
        index,
        name: if name.is_empty() {
            "<unnamed>".to_string()
        } else {
            name.to_string()
        },
        message: message.to_string(),
    };
    if !object.is_object() {
        return Err(invalid("not a mapping"));
    }
    if field("/apiVersion").is_empty() {
        return Err(invalid("apiVersion is missing"));
    }
    if field("/kind").is_empty() {
        return Err(invalid("kind is missing"));
    }
    if name.is_empty() {
        return Err(invalid("metadata.name is missing"));
    }
    Ok(ObjectRef {
        kind: field("/kind").to_string(),
        api_version: field("/apiVersion").to_string(),
        namespace: field("/metadata/namespace").to_string(),
        name: name.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(
        resources: &[BundleResource],
        options: &BundleDeploymentOptions,
        scope: &Scope,
        bundle_deployment: &str,
    ) -> Result<Vec<Desired>> {
        let objects =
            fleet_render::render_without_namespaces(resources, options, bundle_deployment)?.objects;
        place_and_mark(objects, options, scope, bundle_deployment, &|_, _| None)
    }

    fn resource(name: &str, content: &str) -> BundleResource {
        BundleResource {
            name: name.into(),
            content: content.into(),
            encoding: String::new(),
        }
    }

    #[test]
    fn objects_are_marked_with_the_scope_set() {
        let resources = [resource(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n",
        )];
        let options = BundleDeploymentOptions {
            default_namespace: "apps".into(),
            ..Default::default()
        };
        let scope = Scope::new("cattle-fleet-local-system", "local");
        let desired = render(&resources, &options, &scope, "app").unwrap();
        assert_eq!(desired.len(), 1);
        assert_eq!(desired[0].object_ref.namespace, "apps");
        assert_eq!(
            desired[0].object["metadata"]["annotations"][SET_ID_ANNOTATION],
            "default-app-local"
        );
        assert_eq!(
            desired[0].object["metadata"]["labels"][SET_HASH_LABEL],
            Scope::set_hash("default-app-local").as_str()
        );
    }

    #[test]
    fn crds_are_kept_unless_asked_and_objects_without_names_are_refused() {
        let crd = resource(
            "crd.yaml",
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n",
        );
        let scope = Scope::new("cattle-fleet-system", "");
        let desired = render(std::slice::from_ref(&crd), &Default::default(), &scope, "b").unwrap();
        assert!(desired[0].keep());
        let options = BundleDeploymentOptions {
            delete_crd_resources: true,
            ..Default::default()
        };
        assert!(!render(&[crd], &options, &scope, "b").unwrap()[0].keep());
        let nameless = resource("x.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n");
        let err = render(&[nameless], &Default::default(), &scope, "b").unwrap_err();
        assert_eq!(
            err.to_string(),
            "object 0 (<unnamed>): metadata.name is missing"
        );
    }
}
