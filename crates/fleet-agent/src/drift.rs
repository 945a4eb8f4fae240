//! Drift: which fields of what we applied now differ live. Only fields present in the applied configuration
//! are compared (what the cluster defaults or other managers own is not ours to report); `metadata` is
//! compared for labels and annotations only, `status` never. `diff.comparePatches` (JSON pointers and
//! `remove` operations) and replicas managed by a HorizontalPodAutoscaler in the same bundle are ignored.
//! The result is the JSON merge patch that would restore the applied values.
//!
//! A comparePatch with an `ignore` operation takes the whole object out of the drift check: it is never
//! reported as modified or missing (Fleet's documented use: a Job deleted once it completed). It matches as
//! Fleet's agent matches it (its desiredset diff): the same `apiVersion` and `kind`, the same namespace, and a
//! name that is empty, equal, or a regular expression found in the object's name.

use fleet_api::{BundleDeploymentOptions, ObjectRef};
use serde_json::{Map, Value};

use crate::render::Desired;

/// What to ignore when comparing one object.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Ignored {
    /// JSON pointers not compared.
    pub pointers: Vec<String>,
    /// The object is not checked for drift at all (a comparePatch's `ignore` operation).
    pub whole_object: bool,
}

impl Ignored {
    /// Whether the object is not checked for drift at all.
    pub fn whole_object(&self) -> bool {
        self.whole_object
    }
}

/// Whether an `ignore` comparePatch names `object` (Fleet's agent: exact apiVersion, kind and namespace; the
/// name empty, equal, or a regular expression matching part of it; an invalid expression matches nothing).
fn ignores_whole(patch: &fleet_api::ComparePatch, object: &ObjectRef) -> bool {
    if patch.api_version != object.api_version
        || patch.kind != object.kind
        || patch.namespace != object.namespace
    {
        return false;
    }
    patch.name.is_empty()
        || patch.name == object.name
        || regex::Regex::new(&patch.name).is_ok_and(|re| re.is_match(&object.name))
}

/// The pointers ignored for `object` under `options`, given every object of the bundle (for HPAs).
pub fn ignored_for(
    object: &ObjectRef,
    options: &BundleDeploymentOptions,
    bundle: &[Desired],
) -> Ignored {
    let mut pointers = Vec::new();
    let mut whole = false;
    if let Some(diff) = &options.diff {
        for patch in &diff.compare_patches {
            if patch.operations.iter().any(|op| op.op == "ignore") && ignores_whole(patch, object) {
                whole = true;
            }
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
                    .filter(|op| op.op == "remove")
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
    Ignored {
        pointers,
        whole_object: whole,
    }
}

/// The merge patch restoring `desired` over `live`, or `None` when nothing we applied has changed.
pub fn diff(desired: &Value, live: &Value, ignored: &Ignored) -> Option<Value> {
    if ignored.whole_object() {
        return None;
    }
    let folded = fold_string_data(desired);
    let desired = folded.as_ref().unwrap_or(desired).as_object()?;
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

/// A Secret's `stringData` folded into `data` (base64), as kube-apiserver stores it: the live object has no
/// `stringData`, so comparing it as applied would report every such Secret as modified. `None` for other
/// objects.
fn fold_string_data(desired: &Value) -> Option<Value> {
    use base64::Engine;

    if desired.get("kind").and_then(Value::as_str) != Some("Secret")
        || desired.get("apiVersion").and_then(Value::as_str) != Some("v1")
    {
        return None;
    }
    let strings = desired.get("stringData")?.as_object()?;
    let mut folded = desired.clone();
    let object = folded.as_object_mut()?;
    object.remove("stringData");
    let data = object
        .entry("data")
        .or_insert_with(|| Value::Object(Map::new()));
    if !data.is_object() {
        *data = Value::Object(Map::new());
    }
    let data = data.as_object_mut()?;
    for (key, value) in strings {
        let text = value.as_str().unwrap_or_default();
        data.insert(
            key.clone(),
            Value::String(base64::engine::general_purpose::STANDARD.encode(text)),
        );
    }
    Some(folded)
}

fn walk(desired: &Value, live: &Value, pointer: &str, ignored: &Ignored) -> Option<Value> {
    if ignored.pointers.iter().any(|p| p == pointer) {
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
    fn a_secrets_string_data_is_compared_as_the_server_stores_it() {
        let desired = json!({"apiVersion": "v1", "kind": "Secret",
                             "metadata": {"name": "token", "namespace": "app"},
                             "data": {"a": "YQ=="}, "stringData": {"token": "t0k"}});
        let live = json!({"apiVersion": "v1", "kind": "Secret",
                          "metadata": {"name": "token", "namespace": "app", "uid": "u"},
                          "data": {"a": "YQ==", "token": "dDBr"}, "type": "Opaque"});
        assert_eq!(diff(&desired, &live, &Ignored::default()), None);
        let mut changed = live.clone();
        changed["data"]["token"] = json!("b3RoZXI=");
        assert_eq!(
            diff(&desired, &changed, &Ignored::default()),
            Some(json!({"data": {"token": "dDBr"}}))
        );
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

    /// Fleet's bundle-diffs example: a Job deleted once it completed is ignored as a whole.
    #[test]
    fn an_ignore_operation_ignores_the_whole_object_as_fleet_matches_it() {
        let job = ObjectRef {
            kind: "Job".into(),
            api_version: "batch/v1".into(),
            namespace: "default".into(),
            name: "consul-tls-init".into(),
        };
        let options = |name: &str, namespace: &str| BundleDeploymentOptions {
            diff: Some(DiffOptions {
                compare_patches: vec![ComparePatch {
                    kind: "Job".into(),
                    api_version: "batch/v1".into(),
                    name: name.into(),
                    namespace: namespace.into(),
                    operations: vec![serde_json::from_value(json!({"op": "ignore"})).unwrap()],
                    ..Default::default()
                }],
            }),
            ..Default::default()
        };
        let whole =
            |options: &BundleDeploymentOptions| ignored_for(&job, options, &[]).whole_object();
        assert!(whole(&options("consul-tls-init", "default")));
        assert!(whole(&options("", "default")));
        assert!(whole(&options("tls-.*", "default")), "a regular expression");
        assert!(
            !whole(&options("consul-tls-init", "")),
            "the namespace must match"
        );
        assert!(!whole(&options("other", "default")));
        assert!(!whole(&options("(", "default")), "an invalid expression");
        let ignored = ignored_for(&job, &options("consul-tls-init", "default"), &[]);
        assert_eq!(
            diff(
                &json!({"spec": {"a": 1}}),
                &json!({"spec": {"a": 2}}),
                &ignored
            ),
            None
        );
    }
}
