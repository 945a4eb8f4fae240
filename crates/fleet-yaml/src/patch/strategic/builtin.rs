//! Strategic-merge metadata of the built-in Kubernetes kinds: the `patchStrategy` / `patchMergeKey` tags of
//! k8s.io/api (checked against the struct tags compiled into kubectl v1.34), laid out along the paths where they
//! occur. Only the paths leading to tagged fields are listed; every other field behaves as untagged (maps merge,
//! lists are replaced), which is what the tags say for them too. [`schema_for_object`] picks an object's table,
//! or [`Schemaless`] for kinds not built in.

use serde_json::Value;

use super::schema::{Field, MergeSchema, PatchMeta, Schemaless, Strategy};

/// One object type of the built-in tables.
#[derive(Debug)]
pub struct BuiltinSchema {
    fields: &'static [BuiltinField],
}

#[derive(Debug)]
struct BuiltinField {
    name: &'static str,
    strategy: Strategy,
    merge_key: Option<&'static str>,
    retain_keys: bool,
    value: &'static BuiltinSchema,
}

impl MergeSchema for BuiltinSchema {
    fn field(&self, name: &str) -> Option<Field<'_>> {
        let field = self.fields.iter().find(|field| field.name == name)?;
        Some(Field {
            meta: PatchMeta {
                strategy: field.strategy,
                merge_key: field.merge_key,
                retain_keys: field.retain_keys,
            },
            schema: field.value,
        })
    }
}

/// A struct-typed field without a tag of its own, listed because tagged fields lie beneath it.
const fn nested(name: &'static str, value: &'static BuiltinSchema) -> BuiltinField {
    BuiltinField {
        name,
        strategy: Strategy::Default,
        merge_key: None,
        retain_keys: false,
        value,
    }
}

/// `patchStrategy:"merge" patchMergeKey:"<key>"`: a list of objects merged by `key`.
const fn merge_by(
    name: &'static str,
    key: &'static str,
    items: &'static BuiltinSchema,
) -> BuiltinField {
    BuiltinField {
        name,
        strategy: Strategy::Merge,
        merge_key: Some(key),
        retain_keys: false,
        value: items,
    }
}

/// `patchStrategy:"merge,retainKeys" patchMergeKey:"<key>"`.
const fn merge_retaining_keys_by(name: &'static str, key: &'static str) -> BuiltinField {
    BuiltinField {
        retain_keys: true,
        ..merge_by(name, key, &LEAF)
    }
}

/// `patchStrategy:"merge"` on a list of primitives: merged as a set.
const fn merge_set(name: &'static str) -> BuiltinField {
    BuiltinField {
        name,
        strategy: Strategy::Merge,
        merge_key: None,
        retain_keys: false,
        value: &LEAF,
    }
}

/// `patchStrategy:"retainKeys"` on a union struct.
const fn retain_keys(name: &'static str) -> BuiltinField {
    BuiltinField {
        retain_keys: true,
        ..nested(name, &LEAF)
    }
}

/// `patchStrategy:"replace"`.
const fn replace(name: &'static str) -> BuiltinField {
    BuiltinField {
        strategy: Strategy::Replace,
        ..nested(name, &LEAF)
    }
}

static LEAF: BuiltinSchema = BuiltinSchema { fields: &[] };

static OBJECT_META: BuiltinSchema = BuiltinSchema {
    fields: &[
        merge_set("finalizers"),
        merge_by("ownerReferences", "uid", &LEAF),
    ],
};

static CONTAINER: BuiltinSchema = BuiltinSchema {
    fields: &[
        merge_by("ports", "containerPort", &LEAF),
        merge_by("env", "name", &LEAF),
        merge_by("volumeMounts", "mountPath", &LEAF),
        merge_by("volumeDevices", "devicePath", &LEAF),
    ],
};

static POD_SPEC: BuiltinSchema = BuiltinSchema {
    fields: &[
        merge_retaining_keys_by("volumes", "name"),
        merge_by("initContainers", "name", &CONTAINER),
        merge_by("containers", "name", &CONTAINER),
        merge_by("ephemeralContainers", "name", &CONTAINER),
        merge_by("imagePullSecrets", "name", &LEAF),
        merge_by("hostAliases", "ip", &LEAF),
        merge_by("topologySpreadConstraints", "topologyKey", &LEAF),
        merge_by("schedulingGates", "name", &LEAF),
        merge_retaining_keys_by("resourceClaims", "name"),
    ],
};

static POD_STATUS: BuiltinSchema = BuiltinSchema {
    fields: &[
        merge_by("conditions", "type", &LEAF),
        merge_by("podIPs", "ip", &LEAF),
        merge_by("hostIPs", "ip", &LEAF),
        merge_retaining_keys_by("resourceClaimStatuses", "name"),
    ],
};

static POD_TEMPLATE_SPEC: BuiltinSchema = BuiltinSchema {
    fields: &[nested("metadata", &OBJECT_META), nested("spec", &POD_SPEC)],
};

/// The `status` of kinds whose only tagged status field is `conditions`, merged by `type`.
static CONDITIONS_STATUS: BuiltinSchema = BuiltinSchema {
    fields: &[merge_by("conditions", "type", &LEAF)],
};

/// Any kind whose only tagged fields are in `metadata`.
static METADATA_ONLY: BuiltinSchema = BuiltinSchema {
    fields: &[nested("metadata", &OBJECT_META)],
};

static POD: BuiltinSchema = BuiltinSchema {
    fields: &[
        nested("metadata", &OBJECT_META),
        nested("spec", &POD_SPEC),
        nested("status", &POD_STATUS),
    ],
};

static POD_TEMPLATE: BuiltinSchema = BuiltinSchema {
    fields: &[
        nested("metadata", &OBJECT_META),
        nested("template", &POD_TEMPLATE_SPEC),
    ],
};

/// ReplicaSet, StatefulSet, DaemonSet, ReplicationController and Job: a pod template under `spec`.
static POD_CONTROLLER: BuiltinSchema = BuiltinSchema {
    fields: &[
        nested("metadata", &OBJECT_META),
        nested("spec", &POD_CONTROLLER_SPEC),
        nested("status", &CONDITIONS_STATUS),
    ],
};

static POD_CONTROLLER_SPEC: BuiltinSchema = BuiltinSchema {
    fields: &[nested("template", &POD_TEMPLATE_SPEC)],
};

static DEPLOYMENT: BuiltinSchema = BuiltinSchema {
    fields: &[
        nested("metadata", &OBJECT_META),
        nested("spec", &DEPLOYMENT_SPEC),
        nested("status", &CONDITIONS_STATUS),
    ],
};

static DEPLOYMENT_SPEC: BuiltinSchema = BuiltinSchema {
    fields: &[
        nested("template", &POD_TEMPLATE_SPEC),
        retain_keys("strategy"),
    ],
};

static CRON_JOB: BuiltinSchema = BuiltinSchema {
    fields: &[
        nested("metadata", &OBJECT_META),
        nested("spec", &CRON_JOB_SPEC),
    ],
};

static CRON_JOB_SPEC: BuiltinSchema = BuiltinSchema {
    fields: &[nested("jobTemplate", &JOB_TEMPLATE_SPEC)],
};

static JOB_TEMPLATE_SPEC: BuiltinSchema = BuiltinSchema {
    fields: &[
        nested("metadata", &OBJECT_META),
        nested("spec", &POD_CONTROLLER_SPEC),
    ],
};

static SERVICE: BuiltinSchema = BuiltinSchema {
    fields: &[
        nested("metadata", &OBJECT_META),
        nested("spec", &SERVICE_SPEC),
        nested("status", &CONDITIONS_STATUS),
    ],
};

static SERVICE_SPEC: BuiltinSchema = BuiltinSchema {
    fields: &[merge_by("ports", "port", &LEAF)],
};

static SERVICE_ACCOUNT: BuiltinSchema = BuiltinSchema {
    fields: &[
        nested("metadata", &OBJECT_META),
        merge_by("secrets", "name", &LEAF),
    ],
};

static NODE: BuiltinSchema = BuiltinSchema {
    fields: &[
        nested("metadata", &OBJECT_META),
        nested("spec", &NODE_SPEC),
        nested("status", &NODE_STATUS),
    ],
};

static NODE_SPEC: BuiltinSchema = BuiltinSchema {
    fields: &[merge_set("podCIDRs")],
};

static NODE_STATUS: BuiltinSchema = BuiltinSchema {
    fields: &[
        merge_by("conditions", "type", &LEAF),
        merge_by("addresses", "type", &LEAF),
    ],
};

/// Namespace, PersistentVolumeClaim and HorizontalPodAutoscaler: conditions in `status`.
static WITH_STATUS_CONDITIONS: BuiltinSchema = BuiltinSchema {
    fields: &[
        nested("metadata", &OBJECT_META),
        nested("status", &CONDITIONS_STATUS),
    ],
};

static POD_DISRUPTION_BUDGET: BuiltinSchema = BuiltinSchema {
    fields: &[
        nested("metadata", &OBJECT_META),
        nested("spec", &POD_DISRUPTION_BUDGET_SPEC),
        nested("status", &CONDITIONS_STATUS),
    ],
};

static POD_DISRUPTION_BUDGET_SPEC: BuiltinSchema = BuiltinSchema {
    fields: &[replace("selector")],
};

static WEBHOOK_CONFIGURATION: BuiltinSchema = BuiltinSchema {
    fields: &[
        nested("metadata", &OBJECT_META),
        merge_by("webhooks", "name", &WEBHOOK),
    ],
};

static WEBHOOK: BuiltinSchema = BuiltinSchema {
    fields: &[merge_by("matchConditions", "name", &LEAF)],
};

static VALIDATING_ADMISSION_POLICY: BuiltinSchema = BuiltinSchema {
    fields: &[
        nested("metadata", &OBJECT_META),
        nested("spec", &VALIDATING_ADMISSION_POLICY_SPEC),
        nested("status", &CONDITIONS_STATUS),
    ],
};

static VALIDATING_ADMISSION_POLICY_SPEC: BuiltinSchema = BuiltinSchema {
    fields: &[
        merge_by("matchConditions", "name", &LEAF),
        merge_by("variables", "name", &LEAF),
    ],
};

static CSI_NODE: BuiltinSchema = BuiltinSchema {
    fields: &[
        nested("metadata", &OBJECT_META),
        nested("spec", &CSI_NODE_SPEC),
    ],
};

static CSI_NODE_SPEC: BuiltinSchema = BuiltinSchema {
    fields: &[merge_by("drivers", "name", &LEAF)],
};

/// `(API group, kind, schema)` of every built-in kind we know.
static KINDS: &[(&str, &str, &BuiltinSchema)] = &[
    ("", "Pod", &POD),
    ("", "PodTemplate", &POD_TEMPLATE),
    ("", "ReplicationController", &POD_CONTROLLER),
    ("", "Service", &SERVICE),
    ("", "ServiceAccount", &SERVICE_ACCOUNT),
    ("", "Node", &NODE),
    ("", "Namespace", &WITH_STATUS_CONDITIONS),
    ("", "PersistentVolumeClaim", &WITH_STATUS_CONDITIONS),
    ("", "ConfigMap", &METADATA_ONLY),
    ("", "Secret", &METADATA_ONLY),
    ("", "Endpoints", &METADATA_ONLY),
    ("", "Event", &METADATA_ONLY),
    ("", "LimitRange", &METADATA_ONLY),
    ("", "ResourceQuota", &METADATA_ONLY),
    ("", "PersistentVolume", &METADATA_ONLY),
    ("apps", "Deployment", &DEPLOYMENT),
    ("apps", "ReplicaSet", &POD_CONTROLLER),
    ("apps", "StatefulSet", &POD_CONTROLLER),
    ("apps", "DaemonSet", &POD_CONTROLLER),
    ("apps", "ControllerRevision", &METADATA_ONLY),
    ("batch", "Job", &POD_CONTROLLER),
    ("batch", "CronJob", &CRON_JOB),
    ("policy", "PodDisruptionBudget", &POD_DISRUPTION_BUDGET),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        &WEBHOOK_CONFIGURATION,
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
        &WEBHOOK_CONFIGURATION,
    ),
    ("rbac.authorization.k8s.io", "Role", &METADATA_ONLY),
    ("rbac.authorization.k8s.io", "ClusterRole", &METADATA_ONLY),
    ("rbac.authorization.k8s.io", "RoleBinding", &METADATA_ONLY),
    (
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        &METADATA_ONLY,
    ),
    ("networking.k8s.io", "Ingress", &METADATA_ONLY),
    ("networking.k8s.io", "IngressClass", &METADATA_ONLY),
    ("networking.k8s.io", "NetworkPolicy", &METADATA_ONLY),
    (
        "autoscaling",
        "HorizontalPodAutoscaler",
        &WITH_STATUS_CONDITIONS,
    ),
    ("coordination.k8s.io", "Lease", &METADATA_ONLY),
    ("discovery.k8s.io", "EndpointSlice", &METADATA_ONLY),
    ("events.k8s.io", "Event", &METADATA_ONLY),
    ("scheduling.k8s.io", "PriorityClass", &METADATA_ONLY),
    ("storage.k8s.io", "StorageClass", &METADATA_ONLY),
    ("storage.k8s.io", "CSINode", &CSI_NODE),
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicy",
        &VALIDATING_ADMISSION_POLICY,
    ),
    (
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        &METADATA_ONLY,
    ),
    ("apiregistration.k8s.io", "APIService", &METADATA_ONLY),
];

/// The strategic-merge schema of a built-in kind, by `apiVersion` (`v1`, `apps/v1`, ...; any version of the group)
/// and `kind`. `None` for kinds Kubernetes does not build in (custom resources): kubectl refuses strategic merge
/// for those, and kustomize patches them like a JSON merge patch, which [`super::Schemaless`] gives.
pub fn builtin_schema_for(api_version: &str, kind: &str) -> Option<&'static BuiltinSchema> {
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    KINDS
        .iter()
        .find(|(known_group, known_kind, _)| *known_group == group && *known_kind == kind)
        .map(|(_, _, schema)| *schema)
}

/// The schema of a Kubernetes object's kind, from its `apiVersion` and `kind`: the built-in table for built-in
/// kinds, [`Schemaless`] (lists replaced, as kustomize does for custom resources) for anything else.
pub fn schema_for_object(object: &Value) -> &'static dyn MergeSchema {
    let text = |name: &str| object.get(name).and_then(Value::as_str).unwrap_or_default();
    match builtin_schema_for(text("apiVersion"), text("kind")) {
        Some(schema) => schema,
        None => &Schemaless,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(strategy, merge key, retainKeys)` of the field at `path`.
    fn meta_at(schema: &dyn MergeSchema, path: &[&str]) -> (Strategy, Option<String>, bool) {
        let (last, parents) = path.split_last().unwrap();
        let parent = parents.iter().fold(schema, |schema, name| {
            schema
                .field(name)
                .map_or(&LEAF as &dyn MergeSchema, |f| f.schema)
        });
        let meta = parent.field(last).map(|f| f.meta).unwrap_or_default();
        (
            meta.strategy,
            meta.merge_key.map(str::to_owned),
            meta.retain_keys,
        )
    }

    fn merged_by(key: &str) -> (Strategy, Option<String>, bool) {
        (Strategy::Merge, Some(key.to_owned()), false)
    }

    #[test]
    fn pod_templates_are_found_in_every_workload() {
        let cases: [(&str, &str, &[&str]); 7] = [
            ("v1", "Pod", &["spec", "containers"]),
            (
                "apps/v1",
                "Deployment",
                &["spec", "template", "spec", "containers"],
            ),
            (
                "apps/v1",
                "StatefulSet",
                &["spec", "template", "spec", "initContainers"],
            ),
            (
                "apps/v1",
                "DaemonSet",
                &["spec", "template", "spec", "containers"],
            ),
            (
                "apps/v1",
                "ReplicaSet",
                &["spec", "template", "spec", "containers"],
            ),
            (
                "batch/v1",
                "Job",
                &["spec", "template", "spec", "ephemeralContainers"],
            ),
            (
                "batch/v1",
                "CronJob",
                &[
                    "spec",
                    "jobTemplate",
                    "spec",
                    "template",
                    "spec",
                    "containers",
                ],
            ),
        ];
        for (api_version, kind, path) in cases {
            let schema = builtin_schema_for(api_version, kind).unwrap();
            assert_eq!(meta_at(schema, path), merged_by("name"), "{kind} {path:?}");
        }
    }

    #[test]
    fn container_lists_have_their_merge_keys() {
        let pod = builtin_schema_for("v1", "Pod").unwrap();
        assert_eq!(
            meta_at(pod, &["spec", "containers", "env"]),
            merged_by("name")
        );
        assert_eq!(
            meta_at(pod, &["spec", "containers", "ports"]),
            merged_by("containerPort")
        );
        assert_eq!(
            meta_at(pod, &["spec", "containers", "volumeMounts"]),
            merged_by("mountPath")
        );
        assert_eq!(
            meta_at(pod, &["metadata", "ownerReferences"]),
            merged_by("uid")
        );
        assert_eq!(meta_at(pod, &["status", "conditions"]), merged_by("type"));
        let service = builtin_schema_for("v1", "Service").unwrap();
        assert_eq!(meta_at(service, &["spec", "ports"]), merged_by("port"));
    }

    const UNTAGGED: (Strategy, Option<String>, bool) = (Strategy::Default, None, false);

    #[test]
    fn untagged_lists_have_no_strategy() {
        let pod = builtin_schema_for("v1", "Pod").unwrap();
        assert_eq!(meta_at(pod, &["spec", "tolerations"]), UNTAGGED);
        assert_eq!(meta_at(pod, &["spec", "containers", "args"]), UNTAGGED);
        assert_eq!(meta_at(pod, &["spec", "containers", "envFrom"]), UNTAGGED);
    }

    #[test]
    fn version_is_ignored_and_unknown_kinds_have_no_schema() {
        assert!(builtin_schema_for("apps/v1beta2", "Deployment").is_some());
        assert!(builtin_schema_for("v1", "ConfigMap").is_some());
        assert!(builtin_schema_for("example.com/v1", "Deployment").is_none());
        assert!(builtin_schema_for("fleet.cattle.io/v1alpha1", "Bundle").is_none());
        assert!(builtin_schema_for("apps/v1", "Pod").is_none());
    }
}
