//! OpenAPI v3 schemas of the built-in kinds, generated once from k8s-openapi's types: the named definitions
//! (`io.k8s.api.apps.v1.Deployment`, ...) served in `/openapi/v3` documents for `kubectl explain`, and one
//! inlined copy per kind (descriptions dropped, each object marked with its Go type name) that the write path
//! validates built-in objects against.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, LazyLock};

use k8s_openapi::api::{
    admissionregistration, apps, autoscaling, batch, coordination, core, discovery, events,
    networking, policy, rbac, scheduling, storage,
};
use k8s_openapi::schemars::generate::SchemaSettings;
use k8s_openapi::schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

/// The Go type name of an inlined object schema, for kube-apiserver's decoding errors.
pub const GO_TYPE: &str = "x-fleet-go-type";
const REF_PREFIX: &str = "#/components/schemas/";

struct Schemas {
    definitions: Map<String, Value>,
    roots: HashMap<(&'static str, &'static str), String>,
    inlined: HashMap<(&'static str, &'static str), Arc<Value>>,
}

macro_rules! kinds {
    ($($api_version:literal $kind:literal => $ty:ty),* $(,)?) => {
        fn roots(generator: &mut SchemaGenerator) -> Vec<(&'static str, &'static str, String)> {
            vec![$({
                generator.subschema_for::<$ty>();
                ($api_version, $kind, <$ty as JsonSchema>::schema_name().into_owned())
            }),*]
        }
    };
}

kinds! {
    "v1" "Namespace" => core::v1::Namespace,
    "v1" "ConfigMap" => core::v1::ConfigMap,
    "v1" "Secret" => core::v1::Secret,
    "v1" "ServiceAccount" => core::v1::ServiceAccount,
    "v1" "Service" => core::v1::Service,
    "v1" "Endpoints" => core::v1::Endpoints,
    "v1" "Pod" => core::v1::Pod,
    "v1" "Event" => core::v1::Event,
    "v1" "PersistentVolumeClaim" => core::v1::PersistentVolumeClaim,
    "v1" "PersistentVolume" => core::v1::PersistentVolume,
    "v1" "Node" => core::v1::Node,
    "v1" "ResourceQuota" => core::v1::ResourceQuota,
    "v1" "LimitRange" => core::v1::LimitRange,
    "apps/v1" "Deployment" => apps::v1::Deployment,
    "apps/v1" "ReplicaSet" => apps::v1::ReplicaSet,
    "apps/v1" "StatefulSet" => apps::v1::StatefulSet,
    "apps/v1" "DaemonSet" => apps::v1::DaemonSet,
    "apps/v1" "ControllerRevision" => apps::v1::ControllerRevision,
    "batch/v1" "Job" => batch::v1::Job,
    "batch/v1" "CronJob" => batch::v1::CronJob,
    "networking.k8s.io/v1" "Ingress" => networking::v1::Ingress,
    "networking.k8s.io/v1" "IngressClass" => networking::v1::IngressClass,
    "networking.k8s.io/v1" "NetworkPolicy" => networking::v1::NetworkPolicy,
    "discovery.k8s.io/v1" "EndpointSlice" => discovery::v1::EndpointSlice,
    "policy/v1" "PodDisruptionBudget" => policy::v1::PodDisruptionBudget,
    "autoscaling/v2" "HorizontalPodAutoscaler" => autoscaling::v2::HorizontalPodAutoscaler,
    "scheduling.k8s.io/v1" "PriorityClass" => scheduling::v1::PriorityClass,
    "storage.k8s.io/v1" "StorageClass" => storage::v1::StorageClass,
    "admissionregistration.k8s.io/v1" "ValidatingWebhookConfiguration" =>
        admissionregistration::v1::ValidatingWebhookConfiguration,
    "admissionregistration.k8s.io/v1" "MutatingWebhookConfiguration" =>
        admissionregistration::v1::MutatingWebhookConfiguration,
    "rbac.authorization.k8s.io/v1" "Role" => rbac::v1::Role,
    "rbac.authorization.k8s.io/v1" "RoleBinding" => rbac::v1::RoleBinding,
    "rbac.authorization.k8s.io/v1" "ClusterRole" => rbac::v1::ClusterRole,
    "rbac.authorization.k8s.io/v1" "ClusterRoleBinding" => rbac::v1::ClusterRoleBinding,
    "coordination.k8s.io/v1" "Lease" => coordination::v1::Lease,
    "events.k8s.io/v1" "Event" => events::v1::Event,
}

static SCHEMAS: LazyLock<Schemas> = LazyLock::new(|| {
    let mut generator = SchemaSettings::openapi3().into_generator();
    let roots = roots(&mut generator);
    let definitions: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    let mut by_kind = HashMap::new();
    let mut inlined = HashMap::new();
    for (api_version, kind, name) in roots {
        let mut stack = Vec::new();
        let schema = inline(
            &definitions,
            &json!({"$ref": format!("{REF_PREFIX}{name}")}),
            &mut stack,
        );
        inlined.insert((api_version, kind), Arc::new(schema));
        by_kind.insert((api_version, kind), name);
    }
    Schemas {
        definitions,
        roots: by_kind,
        inlined,
    }
});

/// A self-contained copy of `schema` with every `$ref` replaced by its definition; a type that contains
/// itself keeps its fields unchecked below the first level.
fn inline(definitions: &Map<String, Value>, schema: &Value, stack: &mut Vec<String>) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    if let Some(name) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix(REF_PREFIX))
    {
        if stack.iter().any(|s| s == name) {
            return json!({"x-kubernetes-preserve-unknown-fields": true});
        }
        let Some(definition) = definitions.get(name) else {
            return json!({"x-kubernetes-preserve-unknown-fields": true});
        };
        stack.push(name.to_string());
        let mut out = inline(definitions, definition, stack);
        stack.pop();
        if let Some(object) = out.as_object_mut()
            && object.get("type").and_then(Value::as_str) == Some("object")
        {
            let go_name = name.rsplit('.').take(2).collect::<Vec<_>>();
            object.insert(
                GO_TYPE.into(),
                json!(format!("{}.{}", go_name[1], go_name[0])),
            );
        }
        return out;
    }
    let mut out = Map::new();
    for (key, value) in map {
        match key.as_str() {
            "description" => {}
            "properties" => {
                let props = value.as_object().into_iter().flatten();
                let props = props.map(|(k, v)| (k.clone(), inline(definitions, v, stack)));
                out.insert(key.clone(), Value::Object(props.collect()));
            }
            "items" | "additionalProperties" if value.is_object() => {
                out.insert(key.clone(), inline(definitions, value, stack));
            }
            "allOf" => {
                // `{"allOf": [{"$ref": ...}]}` with siblings: the referenced schema stands for the whole.
                if let Some(first) = value.as_array().and_then(|a| a.first()) {
                    for (k, v) in inline(definitions, first, stack)
                        .as_object()
                        .into_iter()
                        .flatten()
                    {
                        out.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    let open_object = out.get("type").and_then(Value::as_str) == Some("object")
        && !out.contains_key("properties")
        && !out.contains_key("additionalProperties");
    if open_object {
        // RawExtension and the like: arbitrary embedded JSON.
        out.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
    }
    Value::Object(out)
}

/// Builds the schemas on a background thread, so that the first write does not wait for them.
pub fn prepare_in_background() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new()
            .name("apiserver-schemas".into())
            .spawn(|| LazyLock::force(&SCHEMAS).roots.len());
    });
}

/// The inlined schema that objects of a built-in kind are validated against.
pub fn inlined(api_version: &str, kind: &str) -> Option<Arc<Value>> {
    SCHEMAS
        .inlined
        .iter()
        .find_map(|((v, k), schema)| (*v == api_version && *k == kind).then(|| schema.clone()))
}

/// The definition name of a built-in kind (`io.k8s.api.apps.v1.Deployment`).
pub fn definition_name(api_version: &str, kind: &str) -> Option<&'static str> {
    SCHEMAS
        .roots
        .iter()
        .find_map(|((v, k), name)| (*v == api_version && *k == kind).then_some(name.as_str()))
}

/// The named definitions reachable from `names`, keyed by name, for an OpenAPI document.
pub fn definitions_closure<'a>(names: impl IntoIterator<Item = &'a str>) -> Map<String, Value> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<String> = names.into_iter().map(str::to_string).collect();
    while let Some(name) = todo.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(definition) = SCHEMAS.definitions.get(&name) {
            collect_refs(definition, &mut todo);
        }
    }
    seen.into_iter()
        .filter_map(|name| {
            let definition = SCHEMAS.definitions.get(&name)?.clone();
            Some((name, definition))
        })
        .collect()
}

fn collect_refs(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(name) = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix(REF_PREFIX))
            {
                out.push(name.to_string());
            }
            map.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deployment_schema_is_inlined_with_go_type_names() {
        let schema = inlined("apps/v1", "Deployment").unwrap();
        let replicas = schema
            .pointer("/properties/spec/properties/replicas")
            .unwrap();
        assert_eq!(replicas["type"], "integer");
        assert_eq!(replicas["format"], "int32");
        assert_eq!(
            schema.pointer("/properties/spec").unwrap()[GO_TYPE],
            "v1.DeploymentSpec"
        );
        let containers = schema
            .pointer(
                "/properties/spec/properties/template/properties/spec/properties/containers/items",
            )
            .unwrap();
        assert_eq!(containers[GO_TYPE], "v1.Container");
        assert!(containers.get("description").is_none());
    }

    #[test]
    fn closure_holds_every_referenced_definition() {
        let name = definition_name("apps/v1", "Deployment").unwrap();
        assert_eq!(name, "io.k8s.api.apps.v1.Deployment");
        let defs = definitions_closure([name]);
        assert!(defs.contains_key("io.k8s.api.core.v1.PodSpec"));
        assert!(defs.contains_key("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"));
        assert!(!defs.contains_key("io.k8s.api.rbac.v1.Role"));
    }
}
