//! Namespaces of rendered objects, as Fleet's Helm deployment sets them: the release namespace is the target
//! namespace, else `defaultNamespace`, else `default` (Fleet's agent default; its `GetDeploymentNS`), and every
//! namespaced object that sets no namespace gets it; `namespace` (the target namespace) overrides every
//! namespaced object and is an error on cluster-scoped kinds.
//!
//! Whether a kind is namespaced is decided as kube clients decide it, from the cluster's discovery: the agent
//! passes what its downstream cluster reports ([`apply_with`]). Kinds discovery does not know yet (and every
//! kind offline, where there is no cluster) fall back to the CustomResourceDefinitions among the rendered
//! objects themselves, then to the built-in kinds below; anything else is taken as namespaced.

use std::collections::BTreeMap;

use fleet_api::BundleDeploymentOptions;
use serde_json::Value;

use super::RenderError;

/// The namespace of an object's cluster when neither a target nor a default namespace is set.
pub const FALLBACK_NAMESPACE: &str = "default";

/// Built-in kinds that are not namespaced, for when the cluster's discovery is not at hand.
const CLUSTER_SCOPED: &[&str] = &[
    "APIService",
    "CertificateSigningRequest",
    "ClusterRole",
    "ClusterRoleBinding",
    "ComponentStatus",
    "CSIDriver",
    "CSINode",
    "CustomResourceDefinition",
    "FlowSchema",
    "IngressClass",
    "MutatingWebhookConfiguration",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PodSecurityPolicy",
    "PriorityClass",
    "PriorityLevelConfiguration",
    "RuntimeClass",
    "StorageClass",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
    "VolumeAttachment",
];

/// Whether a built-in kind is cluster-scoped.
pub fn is_cluster_scoped(kind: &str) -> bool {
    CLUSTER_SCOPED.contains(&kind)
}

/// The namespace a bundle deploys into (Helm's release namespace): the target namespace, else the default
/// namespace, else `default`.
pub fn release_namespace(options: &BundleDeploymentOptions) -> String {
    [&options.target_namespace, &options.default_namespace]
        .into_iter()
        .find(|ns| !ns.is_empty())
        .cloned()
        .unwrap_or_else(|| FALLBACK_NAMESPACE.to_string())
}

fn describe(object: &Value) -> String {
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("?");
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("?");
    format!("{kind}/{name}")
}

fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `(group, kind)` → namespaced, for the CustomResourceDefinitions among `objects`.
fn scopes_of_bundled_crds(objects: &[Value]) -> BTreeMap<(String, String), bool> {
    objects
        .iter()
        .filter(|object| {
            text(object, "/kind") == "CustomResourceDefinition"
                && text(object, "/apiVersion").starts_with("apiextensions.k8s.io/")
        })
        .map(|crd| {
            let key = (
                text(crd, "/spec/group").to_string(),
                text(crd, "/spec/names/kind").to_string(),
            );
            (key, text(crd, "/spec/scope") != "Cluster")
        })
        .collect()
}

fn group_of(api_version: &str) -> &str {
    api_version.split_once('/').map_or("", |(group, _)| group)
}

/// Sets namespaces without the cluster's discovery (offline rendering).
pub fn apply(
    objects: &mut [Value],
    default_namespace: &str,
    target_namespace: &str,
) -> Result<(), RenderError> {
    apply_with(objects, default_namespace, target_namespace, &|_, _| None)
}

/// Sets namespaces; `discovered(apiVersion, kind)` is the cluster's answer to whether a kind is namespaced
/// (`None` when it does not know the kind). Cluster-scoped objects lose any namespace they set, as the API
/// server drops it.
pub fn apply_with(
    objects: &mut [Value],
    default_namespace: &str,
    target_namespace: &str,
    discovered: &dyn Fn(&str, &str) -> Option<bool>,
) -> Result<(), RenderError> {
    let bundled = scopes_of_bundled_crds(objects);
    let release = if default_namespace.is_empty() {
        FALLBACK_NAMESPACE
    } else {
        default_namespace
    };
    for object in objects {
        let api_version = text(object, "/apiVersion");
        let kind = text(object, "/kind");
        let namespaced = discovered(api_version, kind)
            .or_else(|| {
                bundled
                    .get(&(group_of(api_version).to_string(), kind.to_string()))
                    .copied()
            })
            .unwrap_or_else(|| !is_cluster_scoped(kind));
        let Some(metadata) = object
            .as_object_mut()
            .map(|map| {
                map.entry("metadata")
                    .or_insert_with(|| Value::Object(Default::default()))
            })
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        if !namespaced {
            if !target_namespace.is_empty() {
                return Err(RenderError::Namespace {
                    object: describe(object),
                    message: format!(
                        "is cluster-scoped and cannot be deployed with a target namespace ({target_namespace:?})"
                    ),
                });
            }
            metadata.remove("namespace");
            continue;
        }
        let current = metadata
            .get("namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let wanted = if !target_namespace.is_empty() {
            target_namespace
        } else if current.is_empty() {
            release
        } else {
            continue;
        };
        metadata.insert("namespace".to_string(), Value::String(wanted.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn default_fills_and_target_forces() {
        let mut objects = vec![
            json!({"kind": "ConfigMap", "metadata": {"name": "a"}}),
            json!({"kind": "ConfigMap", "metadata": {"name": "b", "namespace": "own"}}),
            json!({"kind": "ClusterRole", "metadata": {"name": "c"}}),
        ];
        apply(&mut objects, "dflt", "").unwrap();
        assert_eq!(objects[0]["metadata"]["namespace"], "dflt");
        assert_eq!(objects[1]["metadata"]["namespace"], "own");
        assert!(objects[2]["metadata"].get("namespace").is_none());
        let err = apply(&mut objects, "", "forced").unwrap_err();
        assert_eq!(
            err.to_string(),
            "ClusterRole/c: is cluster-scoped and cannot be deployed with a target namespace (\"forced\")"
        );
        apply(&mut objects[..2], "", "forced").unwrap();
        assert_eq!(objects[1]["metadata"]["namespace"], "forced");
    }

    #[test]
    fn without_a_default_namespace_objects_land_in_default() {
        let mut objects = vec![
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "frontend"}}),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}),
        ];
        apply(&mut objects, "", "").unwrap();
        assert_eq!(objects[0]["metadata"]["namespace"], "default");
        assert!(objects[1]["metadata"].get("namespace").is_none());
        assert_eq!(
            release_namespace(&BundleDeploymentOptions::default()),
            "default"
        );
    }

    #[test]
    fn discovery_decides_scope_then_bundled_crds_then_built_in_kinds() {
        let crd = |kind: &str, scope: &str| {
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": format!("{}s.example.com", kind.to_lowercase())},
                "spec": {"group": "example.com", "scope": scope, "names": {"kind": kind}}})
        };
        let object = |api_version: &str, kind: &str| {
            json!({"apiVersion": api_version, "kind": kind,
                "metadata": {"name": "x", "namespace": "set-by-user"}})
        };
        let bare = |api_version: &str, kind: &str| json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}});
        let mut objects = vec![
            crd("Global", "Cluster"),
            crd("Local", "Namespaced"),
            object("example.com/v1", "Global"),
            bare("example.com/v1", "Local"),
            bare("other.io/v1", "Remote"),
            bare("other.io/v1", "Unknown"),
        ];
        let discovered = |api_version: &str, kind: &str| {
            (api_version == "other.io/v1" && kind == "Remote").then_some(false)
        };
        apply_with(&mut objects, "", "", &discovered).unwrap();
        let namespace = |i: usize| objects[i]["metadata"].get("namespace").cloned();
        assert_eq!(namespace(0), None, "CRDs are cluster-scoped");
        assert_eq!(namespace(2), None, "a bundled CRD says Cluster");
        assert_eq!(
            namespace(3),
            Some(json!("default")),
            "a bundled CRD says Namespaced"
        );
        assert_eq!(namespace(4), None, "discovery says cluster-scoped");
        assert_eq!(
            namespace(5),
            Some(json!("default")),
            "unknown kinds are namespaced"
        );
        // Discovery wins over a bundled CRD.
        let mut objects = vec![crd("Global", "Cluster"), bare("example.com/v1", "Global")];
        apply_with(&mut objects, "apps", "", &|_, kind: &str| {
            (kind == "Global").then_some(true)
        })
        .unwrap();
        assert_eq!(objects[1]["metadata"]["namespace"], "apps");
        let err = apply_with(&mut objects, "", "t", &|_, _| Some(false)).unwrap_err();
        assert!(err.to_string().contains("cluster-scoped"), "{err}");
    }
}
