//! Defaults kube-apiserver fills in when objects are created: namespace phase and finalizer, Secret type,
//! Service type and cluster IP, Pod phase, CRD status.

use serde_json::{Value, json};

use crate::kinds::registry::ResourceType;
use crate::storage::object;

pub fn on_create(rt: &ResourceType, obj: &mut Value) {
    match (rt.group.as_str(), rt.plural.as_str()) {
        ("", "namespaces") => {
            let name = object::name(obj).to_string();
            let labels = object::metadata_mut(obj)
                .entry("labels")
                .or_insert_with(|| json!({}));
            if let Some(labels) = labels.as_object_mut() {
                labels.insert("kubernetes.io/metadata.name".into(), json!(name));
            }
            obj["spec"] = json!({"finalizers": ["kubernetes"]});
            obj["status"] = json!({"phase": "Active"});
        }
        ("", "secrets") if obj.get("type").is_none_or(Value::is_null) => {
            obj["type"] = json!("Opaque");
        }
        ("", "services") => {
            let spec = obj.as_object_mut().and_then(|m| {
                m.entry("spec").or_insert_with(|| json!({}));
                m.get_mut("spec")?.as_object_mut()
            });
            if let Some(spec) = spec {
                let type_ = spec
                    .entry("type")
                    .or_insert_with(|| json!("ClusterIP"))
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                if type_ != "ExternalName"
                    && spec
                        .get("clusterIP")
                        .is_none_or(|v| v.as_str().is_none_or(str::is_empty))
                {
                    let ip = cluster_ip();
                    spec.insert("clusterIP".into(), json!(ip));
                    spec.insert("clusterIPs".into(), json!([ip]));
                }
            }
        }
        ("", "pods") => {
            obj["status"] = json!({"phase": "Pending"});
        }
        ("apiextensions.k8s.io", "customresourcedefinitions") => {
            let names = obj
                .pointer("/spec/names")
                .cloned()
                .unwrap_or_else(|| json!({}));
            let storage: Vec<Value> = obj
                .pointer("/spec/versions")
                .and_then(Value::as_array)
                .map(|vs| {
                    vs.iter()
                        .filter(|v| v.get("storage") == Some(&json!(true)))
                        .filter_map(|v| v.get("name").cloned())
                        .collect()
                })
                .unwrap_or_default();
            let now = object::now_rfc3339();
            obj["status"] = json!({
                "conditions": [
                    {"type": "NamesAccepted", "status": "True", "lastTransitionTime": now, "reason": "NoConflicts", "message": "no conflicts found"},
                    {"type": "Established", "status": "True", "lastTransitionTime": now, "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}
                ],
                "acceptedNames": names,
                "storedVersions": storage,
            });
        }
        _ => {}
    }
}

/// A cluster IP in 10.96.0.0/12 (random; collisions are harmless here: nothing routes them).
fn cluster_ip() -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    format!(
        "10.96.{}.{}",
        rng.random_range(0..=255),
        rng.random_range(1..=254)
    )
}
