//! Field specs: "in resources of this kind, the field at this path" — the tables that tell each transformer where
//! names, namespaces, labels, annotations, images and replica counts live — and the walker that visits them.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::resource::Gvk;

/// A field spec as written in kustomize configuration (`labels[].fields`, `configurations`).
#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct FieldSpecArgs {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub kind: String,
    pub path: String,
    #[serde(default)]
    pub create: bool,
}

/// A compiled field spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSpec {
    /// Group selector (empty: any).
    pub group: String,
    /// Version selector (empty: any).
    pub version: String,
    /// Kind selector (empty: any).
    pub kind: String,
    /// Path segments (`[]` suffixes removed; `\/` unescaped).
    pub path: Vec<String>,
    /// Create missing fields along the path.
    pub create: bool,
}

impl FieldSpec {
    /// Parses `kind:path[:create]`-style table rows: `(group, version, kind, path, create)`.
    pub fn new(group: &str, version: &str, kind: &str, path: &str, create: bool) -> Self {
        FieldSpec {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            path: split_path(path),
            create,
        }
    }

    /// Whether the spec applies to resources of `gvk`.
    pub fn applies_to(&self, gvk: &Gvk) -> bool {
        gvk.selected_by(&self.group, &self.version, &self.kind)
    }
}

impl From<&FieldSpecArgs> for FieldSpec {
    fn from(a: &FieldSpecArgs) -> Self {
        FieldSpec::new(&a.group, &a.version, &a.kind, &a.path, a.create)
    }
}

/// Splits a slash path, honouring `\/` escapes and dropping `[]` suffixes.
pub fn split_path(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'/') => {
                cur.push('/');
                chars.next();
            }
            '/' => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|s| s.strip_suffix("[]").map(str::to_string).unwrap_or(s))
        .filter(|s| !s.is_empty())
        .collect()
}

/// Calls `f` on every value the path reaches in `v`. Sequences met along the way are entered element by element.
/// With `create`, missing mappings along the path are created and `f` receives `Null` for a missing last field.
pub fn visit<E>(
    v: &mut Value,
    path: &[String],
    create: bool,
    f: &mut dyn FnMut(&mut Value) -> Result<(), E>,
) -> Result<(), E> {
    if let Value::Array(items) = v {
        for item in items {
            visit(item, path, create, f)?;
        }
        return Ok(());
    }
    let Some((first, rest)) = path.split_first() else {
        return f(v);
    };
    let Value::Object(map) = v else {
        return Ok(());
    };
    match map.get_mut(first.as_str()) {
        Some(child) if !child.is_null() || rest.is_empty() => visit(child, rest, create, f),
        _ if create => {
            let child = map.entry(first.clone()).or_insert(Value::Null);
            if !rest.is_empty() {
                *child = Value::Object(Map::new());
            }
            visit(child, rest, create, f)
        }
        _ => Ok(()),
    }
}

/// The field specs each built-in transformer uses, after merging `configurations` and `crds`.
#[derive(Debug, Clone)]
pub struct TransformerConfig {
    /// Where `namePrefix`/`nameSuffix` apply.
    pub name_prefix: Vec<FieldSpec>,
    /// Where `namespace` applies beyond `metadata.namespace`.
    pub namespace: Vec<FieldSpec>,
    /// Where `commonLabels` (and `labels` with selectors) apply.
    pub common_labels: Vec<FieldSpec>,
    /// Where `labels` with `includeTemplates` apply.
    pub template_labels: Vec<FieldSpec>,
    /// Where `commonAnnotations` apply.
    pub common_annotations: Vec<FieldSpec>,
    /// Where `images` apply (besides every `containers`/`initContainers` list).
    pub images: Vec<FieldSpec>,
    /// Where `replicas` apply.
    pub replicas: Vec<FieldSpec>,
    /// Name references: referred-to GVK selector and the fields that refer to it.
    pub name_reference: Vec<NameReference>,
    /// Where `$(VAR)` references of `vars` are expanded.
    pub var_reference: Vec<FieldSpec>,
}

/// One row of the name-reference table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameReference {
    /// GVK selector of the referred-to resource.
    pub group: String,
    /// Version selector.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Fields in referrers.
    pub field_specs: Vec<FieldSpec>,
}

/// `(group, version, kind, path, create)` rows.
type Row = (&'static str, &'static str, &'static str, &'static str, bool);

fn rows(rows: &[Row]) -> Vec<FieldSpec> {
    rows.iter()
        .map(|(g, v, k, p, c)| FieldSpec::new(g, v, k, p, *c))
        .collect()
}

const TEMPLATE_LABELS: &[Row] = &[
    (
        "",
        "v1",
        "ReplicationController",
        "spec/template/metadata/labels",
        true,
    ),
    ("", "", "Deployment", "spec/template/metadata/labels", true),
    ("", "", "ReplicaSet", "spec/template/metadata/labels", true),
    ("", "", "DaemonSet", "spec/template/metadata/labels", true),
    (
        "apps",
        "",
        "StatefulSet",
        "spec/template/metadata/labels",
        true,
    ),
    (
        "apps",
        "",
        "StatefulSet",
        "spec/volumeClaimTemplates[]/metadata/labels",
        true,
    ),
    ("batch", "", "Job", "spec/template/metadata/labels", true),
    (
        "batch",
        "",
        "CronJob",
        "spec/jobTemplate/metadata/labels",
        true,
    ),
    (
        "batch",
        "",
        "CronJob",
        "spec/jobTemplate/spec/template/metadata/labels",
        true,
    ),
];

const SELECTOR_LABELS: &[Row] = &[
    ("", "v1", "Service", "spec/selector", true),
    ("", "v1", "ReplicationController", "spec/selector", true),
    ("", "", "Deployment", "spec/selector/matchLabels", true),
    ("apps", "", "Deployment", AFF1, false),
    ("apps", "", "Deployment", AFF2, false),
    ("apps", "", "Deployment", AFF3, false),
    ("apps", "", "Deployment", AFF4, false),
    ("apps", "", "Deployment", TSC, false),
    ("", "", "ReplicaSet", "spec/selector/matchLabels", true),
    ("", "", "DaemonSet", "spec/selector/matchLabels", true),
    ("apps", "", "StatefulSet", "spec/selector/matchLabels", true),
    (
        "apps",
        "",
        "StatefulSet",
        "spec/volumeClaimTemplates[]/metadata/labels",
        true,
    ),
    ("apps", "", "StatefulSet", AFF1, false),
    ("apps", "", "StatefulSet", AFF2, false),
    ("apps", "", "StatefulSet", AFF3, false),
    ("apps", "", "StatefulSet", AFF4, false),
    ("apps", "", "StatefulSet", TSC, false),
    ("batch", "", "Job", "spec/selector/matchLabels", false),
    (
        "batch",
        "",
        "CronJob",
        "spec/jobTemplate/spec/selector/matchLabels",
        false,
    ),
    (
        "policy",
        "",
        "PodDisruptionBudget",
        "spec/selector/matchLabels",
        false,
    ),
    (
        "networking.k8s.io",
        "",
        "NetworkPolicy",
        "spec/podSelector/matchLabels",
        false,
    ),
    (
        "networking.k8s.io",
        "",
        "NetworkPolicy",
        "spec/ingress/from/podSelector/matchLabels",
        false,
    ),
    (
        "networking.k8s.io",
        "",
        "NetworkPolicy",
        "spec/egress/to/podSelector/matchLabels",
        false,
    ),
];

const AFF1: &str = "spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels";
const AFF2: &str = "spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels";
const AFF3: &str = "spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels";
const AFF4: &str = "spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels";
const TSC: &str = "spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels";

const ANNOTATIONS: &[Row] = &[
    ("", "", "", "metadata/annotations", true),
    (
        "",
        "v1",
        "ReplicationController",
        "spec/template/metadata/annotations",
        true,
    ),
    (
        "",
        "",
        "Deployment",
        "spec/template/metadata/annotations",
        true,
    ),
    (
        "",
        "",
        "ReplicaSet",
        "spec/template/metadata/annotations",
        true,
    ),
    (
        "",
        "",
        "DaemonSet",
        "spec/template/metadata/annotations",
        true,
    ),
    (
        "",
        "",
        "StatefulSet",
        "spec/template/metadata/annotations",
        true,
    ),
    (
        "batch",
        "",
        "Job",
        "spec/template/metadata/annotations",
        true,
    ),
    (
        "batch",
        "",
        "CronJob",
        "spec/jobTemplate/metadata/annotations",
        true,
    ),
    (
        "batch",
        "",
        "CronJob",
        "spec/jobTemplate/spec/template/metadata/annotations",
        true,
    ),
];

/// kustomize's table also lists `subjects[]/namespace` of (Cluster)RoleBindings, but its namespace filter drops
/// those rows and only sets the namespace of subjects named `default` (see `transform::names`).
const NAMESPACE: &[Row] = &[
    ("", "", "Namespace", "metadata/name", true),
    (
        "apiregistration.k8s.io",
        "",
        "APIService",
        "spec/service/namespace",
        true,
    ),
    (
        "apiextensions.k8s.io",
        "",
        "CustomResourceDefinition",
        "spec/conversion/webhook/clientConfig/service/namespace",
        true,
    ),
];

const IMAGES: &[Row] = &[
    ("", "", "", "spec/volumes[]/image/reference", true),
    (
        "",
        "",
        "",
        "spec/template/spec/volumes[]/image/reference",
        true,
    ),
];

const REPLICAS: &[Row] = &[
    ("", "", "Deployment", "spec/replicas", true),
    ("", "", "ReplicationController", "spec/replicas", true),
    ("", "", "ReplicaSet", "spec/replicas", true),
    ("", "", "StatefulSet", "spec/replicas", true),
];

/// Pod-spec paths of workload kinds, relative to the pod spec.
const WORKLOADS: &[(&str, &str, &str)] = &[
    ("v1", "Pod", "spec"),
    ("", "PodTemplate", "template/spec"),
    ("", "Deployment", "spec/template/spec"),
    ("", "ReplicaSet", "spec/template/spec"),
    ("", "DaemonSet", "spec/template/spec"),
    ("", "StatefulSet", "spec/template/spec"),
    ("", "Job", "spec/template/spec"),
    ("", "CronJob", "spec/jobTemplate/spec/template/spec"),
];

fn pod_refs(suffixes: &[&str]) -> Vec<FieldSpec> {
    let mut out = Vec::new();
    for (version, kind, base) in WORKLOADS {
        for s in suffixes {
            out.push(FieldSpec::new(
                "",
                version,
                kind,
                &format!("{base}/{s}"),
                false,
            ));
        }
    }
    out
}

fn name_references() -> Vec<NameReference> {
    let nr = |group: &str, version: &str, kind: &str, field_specs: Vec<FieldSpec>| NameReference {
        group: group.into(),
        version: version.into(),
        kind: kind.into(),
        field_specs,
    };
    let hpa = || {
        rows(&[(
            "",
            "",
            "HorizontalPodAutoscaler",
            "spec/scaleTargetRef/name",
            false,
        )])
    };
    let mut config_map = pod_refs(&[
        "volumes/configMap/name",
        "containers/env/valueFrom/configMapKeyRef/name",
        "initContainers/env/valueFrom/configMapKeyRef/name",
        "containers/envFrom/configMapRef/name",
        "initContainers/envFrom/configMapRef/name",
        "volumes/projected/sources/configMap/name",
    ]);
    config_map.extend(rows(&[
        ("", "", "Node", "spec/configSource/configMap", false),
        ("", "", "Role", "rules/resourceNames", false),
        ("", "", "ClusterRole", "rules/resourceNames", false),
        (
            "",
            "",
            "Ingress",
            "metadata/annotations/nginx.ingress.kubernetes.io\\/fastcgi-params-configmap",
            false,
        ),
    ]));
    let mut secret = pod_refs(&[
        "volumes/secret/secretName",
        "containers/env/valueFrom/secretKeyRef/name",
        "initContainers/env/valueFrom/secretKeyRef/name",
        "containers/envFrom/secretRef/name",
        "initContainers/envFrom/secretRef/name",
        "imagePullSecrets/name",
        "volumes/projected/sources/secret/name",
    ]);
    secret.extend(rows(&[
        ("", "", "Ingress", "spec/tls/secretName", false),
        (
            "",
            "",
            "Ingress",
            "metadata/annotations/ingress.kubernetes.io\\/auth-secret",
            false,
        ),
        (
            "",
            "",
            "Ingress",
            "metadata/annotations/nginx.ingress.kubernetes.io\\/auth-secret",
            false,
        ),
        (
            "",
            "",
            "Ingress",
            "metadata/annotations/nginx.ingress.kubernetes.io\\/auth-tls-secret",
            false,
        ),
        ("", "", "ServiceAccount", "imagePullSecrets/name", false),
        ("", "", "StorageClass", "parameters/secretName", false),
        ("", "", "StorageClass", "parameters/adminSecretName", false),
        ("", "", "StorageClass", "parameters/userSecretName", false),
        ("", "", "StorageClass", "parameters/secretRef", false),
        ("", "", "Role", "rules/resourceNames", false),
        ("", "", "ClusterRole", "rules/resourceNames", false),
        (
            "serving.knative.dev",
            "v1",
            "Service",
            "spec/template/spec/containers/env/valueFrom/secretKeyRef/name",
            false,
        ),
        (
            "",
            "",
            "PersistentVolume",
            "spec/azureFile/secretName",
            false,
        ),
    ]));
    let service = rows(&[
        ("apps", "", "StatefulSet", "spec/serviceName", false),
        (
            "",
            "",
            "Ingress",
            "spec/rules/http/paths/backend/serviceName",
            false,
        ),
        ("", "", "Ingress", "spec/backend/serviceName", false),
        (
            "",
            "",
            "Ingress",
            "spec/rules/http/paths/backend/service/name",
            false,
        ),
        ("", "", "Ingress", "spec/defaultBackend/service/name", false),
        (
            "apiregistration.k8s.io",
            "",
            "APIService",
            "spec/service/name",
            false,
        ),
        (
            "admissionregistration.k8s.io",
            "",
            "ValidatingWebhookConfiguration",
            "webhooks/clientConfig/service",
            false,
        ),
        (
            "admissionregistration.k8s.io",
            "",
            "MutatingWebhookConfiguration",
            "webhooks/clientConfig/service",
            false,
        ),
        ("", "", "HTTPRoute", "spec/rules/backendRefs/name", false),
    ]);
    let rbac = "rbac.authorization.k8s.io";
    let mut service_account = rows(&[
        (rbac, "", "RoleBinding", "subjects", false),
        (rbac, "", "ClusterRoleBinding", "subjects", false),
        ("", "", "Pod", "spec/serviceAccountName", false),
        (
            "",
            "",
            "ReplicationController",
            "spec/template/spec/serviceAccountName",
            false,
        ),
    ]);
    service_account.extend(
        pod_refs(&["serviceAccountName"])
            .into_iter()
            .filter(|f| f.kind != "Pod" && f.kind != "PodTemplate"),
    );
    let mut pvc = rows(&[
        (
            "",
            "",
            "Pod",
            "spec/volumes/persistentVolumeClaim/claimName",
            false,
        ),
        (
            "",
            "",
            "ReplicationController",
            "spec/template/spec/volumes/persistentVolumeClaim/claimName",
            false,
        ),
    ]);
    pvc.extend(
        pod_refs(&["volumes/persistentVolumeClaim/claimName"])
            .into_iter()
            .filter(|f| f.kind != "Pod" && f.kind != "PodTemplate"),
    );
    let mut priority = rows(&[
        ("", "", "Pod", "spec/priorityClassName", false),
        (
            "",
            "",
            "ReplicationController",
            "spec/template/spec/priorityClassName",
            false,
        ),
    ]);
    priority.extend(
        pod_refs(&["priorityClassName"])
            .into_iter()
            .filter(|f| f.kind != "Pod" && f.kind != "PodTemplate"),
    );
    vec![
        nr("", "", "Deployment", hpa()),
        nr("", "", "ReplicationController", hpa()),
        nr("", "", "ReplicaSet", hpa()),
        nr("", "", "StatefulSet", hpa()),
        nr("", "v1", "ConfigMap", config_map),
        nr("", "v1", "Secret", secret),
        nr("", "v1", "Service", service),
        nr(
            rbac,
            "",
            "Role",
            rows(&[(rbac, "", "RoleBinding", "roleRef/name", false)]),
        ),
        nr(
            rbac,
            "",
            "ClusterRole",
            rows(&[
                (rbac, "", "RoleBinding", "roleRef/name", false),
                (rbac, "", "ClusterRoleBinding", "roleRef/name", false),
            ]),
        ),
        nr("", "v1", "ServiceAccount", service_account),
        nr("", "v1", "PersistentVolumeClaim", pvc),
        nr(
            "",
            "v1",
            "PersistentVolume",
            rows(&[
                ("", "", "PersistentVolumeClaim", "spec/volumeName", false),
                ("", "", "ClusterRole", "rules/resourceNames", false),
            ]),
        ),
        nr(
            "storage.k8s.io",
            "v1",
            "StorageClass",
            rows(&[
                ("", "", "PersistentVolume", "spec/storageClassName", false),
                (
                    "",
                    "",
                    "PersistentVolumeClaim",
                    "spec/storageClassName",
                    false,
                ),
                (
                    "",
                    "",
                    "StatefulSet",
                    "spec/volumeClaimTemplates/spec/storageClassName",
                    false,
                ),
            ]),
        ),
        nr("scheduling.k8s.io", "v1", "PriorityClass", priority),
        // kustomize's table spells this group "networking.k8s.io/v1", so the row never matches and
        // ingressClassName is not rewritten; kept as is for identical output.
        nr(
            "networking.k8s.io/v1",
            "v1",
            "IngressClass",
            rows(&[("", "", "Ingress", "spec/ingressClassName", false)]),
        ),
    ]
}

fn var_references() -> Vec<FieldSpec> {
    let mut out = Vec::new();
    for (_, kind, base) in WORKLOADS.iter().filter(|(_, k, _)| *k != "PodTemplate") {
        for c in ["containers", "initContainers"] {
            for f in ["args", "command", "env/value", "volumeMounts/mountPath"] {
                out.push(FieldSpec::new(
                    "",
                    "",
                    kind,
                    &format!("{base}/{c}/{f}"),
                    false,
                ));
            }
        }
        if *kind == "StatefulSet" {
            out.push(FieldSpec::new(
                "",
                "",
                kind,
                "spec/volumeClaimTemplates/spec/nfs/server",
                false,
            ));
        } else {
            out.push(FieldSpec::new(
                "",
                "",
                kind,
                &format!("{base}/volumes/nfs/server"),
                false,
            ));
        }
    }
    out.extend(rows(&[
        ("", "", "Ingress", "spec/rules/host", false),
        ("", "", "Ingress", "spec/tls/hosts", false),
        ("", "", "Ingress", "spec/tls/secretName", false),
        ("", "", "Service", "spec/ports/port", false),
        ("", "", "Service", "spec/ports/targetPort", false),
        ("", "", "PersistentVolume", "spec/nfs/server", false),
        ("", "", "", "metadata/labels", false),
        ("", "", "", "metadata/annotations", false),
    ]));
    out
}

impl Default for TransformerConfig {
    fn default() -> Self {
        let mut common_labels = rows(SELECTOR_LABELS);
        common_labels.push(FieldSpec::new("", "", "", "metadata/labels", true));
        common_labels.extend(rows(TEMPLATE_LABELS));
        TransformerConfig {
            name_prefix: vec![FieldSpec::new("", "", "", "metadata/name", false)],
            namespace: rows(NAMESPACE),
            common_labels,
            template_labels: rows(TEMPLATE_LABELS),
            common_annotations: rows(ANNOTATIONS),
            images: rows(IMAGES),
            replicas: rows(REPLICAS),
            name_reference: name_references(),
            var_reference: var_references(),
        }
    }
}

/// Adds the specs of `extra` not already in `base`.
pub fn merge_specs(base: &mut Vec<FieldSpec>, extra: &[FieldSpec]) {
    for fs in extra {
        if !base.contains(fs) {
            base.push(fs.clone());
        }
    }
}

impl TransformerConfig {
    /// kustomize's built-in tables, built once.
    pub fn builtin() -> &'static TransformerConfig {
        static BUILTIN: std::sync::OnceLock<TransformerConfig> = std::sync::OnceLock::new();
        BUILTIN.get_or_init(TransformerConfig::default)
    }

    /// Adds name references, merging rows for the same referred-to kind.
    pub fn add_name_reference(&mut self, row: NameReference) {
        if let Some(existing) = self
            .name_reference
            .iter_mut()
            .find(|r| r.group == row.group && r.version == row.version && r.kind == row.kind)
        {
            merge_specs(&mut existing.field_specs, &row.field_specs);
        } else {
            self.name_reference.push(row);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn visit_enters_sequences_and_creates() {
        let mut v = json!({"spec":{"containers":[{"image":"a"},{"image":"b"}]}});
        let mut seen = Vec::new();
        visit::<()>(
            &mut v,
            &split_path("spec/containers[]/image"),
            false,
            &mut |x| {
                seen.push(x.as_str().unwrap_or_default().to_string());
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(seen, ["a", "b"]);
        visit::<()>(
            &mut v,
            &split_path("spec/selector/matchLabels"),
            true,
            &mut |x| {
                *x = json!({"a":"b"});
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(v["spec"]["selector"]["matchLabels"]["a"], "b");
        assert_eq!(
            split_path("metadata/annotations/a\\/b"),
            ["metadata", "annotations", "a/b"]
        );
    }
}
