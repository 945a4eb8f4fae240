//! Drift: which fields of what we applied now differ live. Only fields present in the applied configuration
//! are compared (what the cluster defaults or other managers own is not ours to report); `metadata` is
//! compared for labels and annotations only, `status` never. `diff.comparePatches` (JSON pointers, and
//! `remove`/`ignore` operations) and replicas managed by a HorizontalPodAutoscaler in the same bundle are
//! ignored. The result is the JSON merge patch that would restore the applied values.

use fleet_api::{BundleDeploymentOptions, ObjectRef};
use serde_json::{Map, Value};

use crate::render::Desired;

/// JSON pointers to ignore when comparing one object.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Ignored(pub Vec<String>);

/// The pointers ignored for `object` under `options`, given every object of the bundle (for HPAs).
pub fn ignored_for(
    object: &ObjectRef,
    options: &BundleDeploymentOptions,
    bundle: &[Desired],
) -> Ignored {
    let mut pointers = Vec::new();
    if let Some(diff) = &options.diff {
        for patch in &diff.compare_patches {
            let matches = (patch.kind.is_empty() || patch.kind == object.kind)
                && (patch.api_version.is_empty() || patch.api_version == object.api_version)
                && (patch.name.is_empty() || patch.name == object.name)
                && (patch.namespace.is_empty() || patch.namespace == object.namespace);
            if !matches {
                continue;
            }
            pointers.extend(patch.json_pointers.iter().cloned());
            pointers.extend(
                patch
                    .operations
                    .iter()
                    .filter(|op| op.op == "remove" || op.op == "ignore")
                    .map(|op| op.path.clone()),
            );
        }
    }
    let scaled = bundle.iter().any(|hpa| {
        hpa.object_ref.kind == "HorizontalPodAutoscaler"
            && hpa.object_ref.namespace == object.namespace
            && hpa
                .object
                .pointer("/spec/scaleTargetRef/kind")
                .and_then(Value::as_str)
                == Some(&object.kind)
            && hpa
                .object
                .pointer("/spec/scaleTargetRef/name")
                .and_then(Value::as_str)
                == Some(&object.name)
    });
    if scaled {
        pointers.push("/spec/replicas".to_string());
    }
    Ignored(pointers)
}

/// The merge patch restoring `desired` over `live`, or `None` when nothing we applied has changed.
pub fn diff(desired: &Value, live: &Value, ignored: &Ignored) -> Option<Value> {
    let desired = desired.as_object()?;
    let mut patch = Map::new();
    for (key, value) in desired {
        match key.as_str() {
            "apiVersion" | "kind" | "status" => {}
            "metadata" => {
                let mut meta = Map::new();
                for field in ["labels", "annotations"] {
                    if let Some(wanted) = value.get(field) {
                        let pointer = format!("/metadata/{field}");
                        let found = live.pointer(&pointer).unwrap_or(&Value::Null);
                        if let Some(change) = walk(wanted, found, &pointer, ignored) {
                            meta.insert(field.to_string(), change);
                        }
                    }
                }
                if !meta.is_empty() {
                    patch.insert(key.clone(), Value::Object(meta));
                }
            }
            _ => {
                let pointer = format!("/{}", escape(key));
                let found = live.get(key).unwrap_or(&Value::Null);
                if let Some(change) = walk(value, found, &pointer, ignored) {
                    patch.insert(key.clone(), change);
                }
            }
        }
    }
    (!patch.is_empty()).then_some(Value::Object(patch))
}

fn walk(desired: &Value, live: &Value, pointer: &str, ignored: &Ignored) -> Option<Value> {
    if ignored.0.iter().any(|p| p == pointer) {
        return None;
    }
    match (desired, live) {
        (Value::Object(want), Value::Object(have)) => {
            let mut patch = Map::new();
            for (key, value) in want {
                let child = format!("{pointer}/{}", escape(key));
                let found = have.get(key).unwrap_or(&Value::Null);
                if let Some(change) = walk(value, found, &child, ignored) {
                    patch.insert(key.clone(), change);
                }
            }
            (!patch.is_empty()).then_some(Value::Object(patch))
        }
        (Value::Array(want), Value::Array(have)) if want.len() == have.len() => want
            .iter()
            .zip(have)
            .enumerate()
            .any(|(i, (w, h))| walk(w, h, &format!("{pointer}/{i}"), ignored).is_some())
            .then(|| desired.clone()),
        (Value::Number(want), Value::Number(have)) if want.as_f64() == have.as_f64() => None,
        // An empty map or list we applied may be dropped by the server.
        (Value::Object(want), Value::Null) if want.is_empty() => None,
        (Value::Array(want), Value::Null) if want.is_empty() => None,
        _ if desired == live => None,
        _ => Some(desired.clone()),
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_api::{ComparePatch, DiffOptions};
    use serde_json::json;

    fn deployment() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "web", "namespace": "apps", "labels": {"app": "web"}},
               "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}})
    }

    #[test]
    fn defaults_and_foreign_fields_are_not_drift() {
        let mut live = deployment();
        live["metadata"]["uid"] = json!("u");
        live["metadata"]["labels"]["other"] = json!("x");
        live["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] =
            json!("IfNotPresent");
        live["spec"]["strategy"] = json!({"type": "RollingUpdate"});
        live["status"] = json!({"replicas": 2});
        assert_eq!(diff(&deployment(), &live, &Ignored::default()), None);
    }

    #[test]
    fn changed_owned_fields_are_reported_exactly() {
        let mut live = deployment();
        live["spec"]["replicas"] = json!(5);
        live["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
        let patch = diff(&deployment(), &live, &Ignored::default()).unwrap();
        assert_eq!(
            patch,
            json!({"spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}})
        );
    }

    #[test]
    fn compare_patches_and_hpa_replicas_are_ignored() {
        let desired = Desired {
            object_ref: ObjectRef {
                kind: "Deployment".into(),
                api_version: "apps/v1".into(),
                namespace: "apps".into(),
                name: "web".into(),
            },
            object: deployment(),
        };
        let hpa = Desired {
            object_ref: ObjectRef {
                kind: "HorizontalPodAutoscaler".into(),
                api_version: "autoscaling/v2".into(),
                namespace: "apps".into(),
                name: "web".into(),
            },
            object: json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}}}),
        };
        let mut live = deployment();
        live["spec"]["replicas"] = json!(7);
        let ignored = ignored_for(
            &desired.object_ref,
            &Default::default(),
            &[desired.clone(), hpa],
        );
        assert_eq!(diff(&deployment(), &live, &ignored), None);
        let options = BundleDeploymentOptions {
            diff: Some(DiffOptions {
                compare_patches: vec![ComparePatch {
                    kind: "Deployment".into(),
                    name: "web".into(),
                    json_pointers: vec!["/spec/replicas".into()],
                    ..Default::default()
                }],
            }),
            ..Default::default()
        };
        let ignored = ignored_for(
            &desired.object_ref,
            &options,
            std::slice::from_ref(&desired),
        );
        assert_eq!(diff(&deployment(), &live, &ignored), None);
        assert!(diff(&deployment(), &live, &Ignored::default()).is_some());
    }
}
