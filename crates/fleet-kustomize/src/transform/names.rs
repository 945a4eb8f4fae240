//! `namespace` and `namePrefix`/`nameSuffix`: rewriting identities, recording each previous id so that name
//! references can be fixed afterwards.

use serde_json::Value;

use crate::fieldspec::{TransformerConfig, visit};
use crate::resource::Resource;

/// Sets `namespace` on every namespaced resource and on the fields configured for it (Namespace objects are
/// renamed; RoleBinding subjects named `default` get the namespace).
pub fn set_namespace(resources: &mut [Resource], namespace: &str, cfg: &TransformerConfig) {
    for r in resources.iter_mut() {
        let gvk = r.gvk();
        if !gvk.is_cluster_scoped() {
            r.set_namespace(namespace);
        }
        let is_binding = gvk.kind == "RoleBinding" || gvk.kind == "ClusterRoleBinding";
        if is_binding && let Some(Value::Array(subjects)) = r.obj.get_mut("subjects") {
            for s in subjects.iter_mut().filter_map(Value::as_object_mut) {
                if s.get("name").and_then(Value::as_str) == Some("default") {
                    s.insert("namespace".into(), Value::String(namespace.into()));
                }
            }
        }
        for fs in cfg.namespace.iter().filter(|fs| fs.applies_to(&gvk)) {
            if fs.path == ["metadata", "name"] {
                r.set_name(namespace);
                continue;
            }
            let _ = visit::<()>(&mut r.obj, &fs.path, fs.create, &mut |v| {
                *v = Value::String(namespace.into());
                Ok(())
            });
        }
    }
}

/// Kinds that `namePrefix`/`nameSuffix` leave alone.
fn skips_prefix(r: &Resource) -> bool {
    let gvk = r.gvk();
    gvk.kind == "CustomResourceDefinition"
        || gvk.kind == "Namespace"
        || (gvk.kind == "APIService" && gvk.group == "apiregistration.k8s.io")
}

/// Adds `prefix` and `suffix` to names.
pub fn add_prefix_suffix(
    resources: &mut [Resource],
    prefix: &str,
    suffix: &str,
    cfg: &TransformerConfig,
) {
    if prefix.is_empty() && suffix.is_empty() {
        return;
    }
    for r in resources.iter_mut().filter(|r| !skips_prefix(r)) {
        let gvk = r.gvk();
        for fs in cfg.name_prefix.iter().filter(|fs| fs.applies_to(&gvk)) {
            if fs.path == ["metadata", "name"] {
                let name = format!("{prefix}{}{suffix}", r.name());
                r.set_name(&name);
                continue;
            }
            let _ = visit::<()>(&mut r.obj, &fs.path, fs.create, &mut |v| {
                if let Value::String(s) = v {
                    *s = format!("{prefix}{s}{suffix}");
                }
                Ok(())
            });
        }
    }
}
