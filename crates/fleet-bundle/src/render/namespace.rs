//! Namespaces of rendered objects: `defaultNamespace` fills in namespaced objects that set none; `namespace`
//! (the target namespace) overrides every namespaced object and is an error on cluster-scoped kinds.

use serde_json::Value;

use super::RenderError;

/// Built-in kinds that are not namespaced. Other kinds (including custom resources) are treated as namespaced.
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

pub fn is_cluster_scoped(kind: &str) -> bool {
    CLUSTER_SCOPED.contains(&kind)
}

fn describe(object: &Value) -> String {
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("?");
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("?");
    format!("{kind}/{name}")
}

pub fn apply(
    objects: &mut [Value],
    default_namespace: &str,
    target_namespace: &str,
) -> Result<(), RenderError> {
    for object in objects {
        let kind = object
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if is_cluster_scoped(kind) {
            if !target_namespace.is_empty() {
                return Err(RenderError::Namespace {
                    object: describe(object),
                    message: format!(
                        "is cluster-scoped and cannot be deployed with a target namespace ({target_namespace:?})"
                    ),
                });
            }
            continue;
        }
        let current = object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let wanted = if !target_namespace.is_empty() {
            target_namespace
        } else if current.is_empty() {
            default_namespace
        } else {
            continue;
        };
        if wanted.is_empty() {
            continue;
        }
        if let Some(map) = object.as_object_mut() {
            let metadata = map
                .entry("metadata")
                .or_insert_with(|| Value::Object(Default::default()));
            if let Some(metadata) = metadata.as_object_mut() {
                metadata.insert("namespace".to_string(), Value::String(wanted.to_string()));
            }
        }
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
}
