//! The built-in resource types the server serves (core, apps, batch, networking, RBAC, coordination, events,
//! apiextensions and the review kinds), with kubectl's usual printer columns.

use crate::kinds::registry::{ALL_VERBS, PrinterColumn, ResourceType};

struct Def {
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    kind: &'static str,
    namespaced: bool,
    short: &'static [&'static str],
    status: bool,
    columns: &'static [(&'static str, &'static str, &'static str)],
}

#[allow(clippy::too_many_arguments)] // a table row; named fields would triple the table
const fn def(
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    kind: &'static str,
    namespaced: bool,
    short: &'static [&'static str],
    status: bool,
    columns: &'static [(&'static str, &'static str, &'static str)],
) -> Def {
    Def {
        group,
        version,
        plural,
        kind,
        namespaced,
        short,
        status,
        columns,
    }
}

/// (name, type, jsonPath); type `count` prints the number of entries at the path.
const DEFS: &[Def] = &[
    def(
        "",
        "v1",
        "namespaces",
        "Namespace",
        false,
        &["ns"],
        true,
        &[("Status", "string", ".status.phase")],
    ),
    def(
        "",
        "v1",
        "configmaps",
        "ConfigMap",
        true,
        &["cm"],
        false,
        &[("Data", "count", ".data")],
    ),
    def(
        "",
        "v1",
        "secrets",
        "Secret",
        true,
        &[],
        false,
        &[("Type", "string", ".type"), ("Data", "count", ".data")],
    ),
    def(
        "",
        "v1",
        "serviceaccounts",
        "ServiceAccount",
        true,
        &["sa"],
        false,
        &[],
    ),
    def(
        "",
        "v1",
        "services",
        "Service",
        true,
        &["svc"],
        true,
        &[
            ("Type", "string", ".spec.type"),
            ("Cluster-IP", "string", ".spec.clusterIP"),
        ],
    ),
    def(
        "",
        "v1",
        "endpoints",
        "Endpoints",
        true,
        &["ep"],
        false,
        &[],
    ),
    def(
        "",
        "v1",
        "pods",
        "Pod",
        true,
        &["po"],
        true,
        &[
            ("Status", "string", ".status.phase"),
            ("IP", "string", ".status.podIP"),
        ],
    ),
    def(
        "",
        "v1",
        "events",
        "Event",
        true,
        &["ev"],
        false,
        &[
            ("Type", "string", ".type"),
            ("Reason", "string", ".reason"),
            ("Message", "string", ".message"),
        ],
    ),
    def(
        "",
        "v1",
        "persistentvolumeclaims",
        "PersistentVolumeClaim",
        true,
        &["pvc"],
        true,
        &[
            ("Status", "string", ".status.phase"),
            ("Volume", "string", ".spec.volumeName"),
        ],
    ),
    def(
        "",
        "v1",
        "persistentvolumes",
        "PersistentVolume",
        false,
        &["pv"],
        true,
        &[("Status", "string", ".status.phase")],
    ),
    def("", "v1", "nodes", "Node", false, &["no"], true, &[]),
    def(
        "",
        "v1",
        "resourcequotas",
        "ResourceQuota",
        true,
        &["quota"],
        true,
        &[],
    ),
    def(
        "",
        "v1",
        "limitranges",
        "LimitRange",
        true,
        &["limits"],
        false,
        &[],
    ),
    def(
        "apps",
        "v1",
        "deployments",
        "Deployment",
        true,
        &["deploy"],
        true,
        &[
            ("Ready", "ratio", ".status.readyReplicas/.spec.replicas"),
            ("Up-to-date", "integer", ".status.updatedReplicas"),
            ("Available", "integer", ".status.availableReplicas"),
        ],
    ),
    def(
        "apps",
        "v1",
        "replicasets",
        "ReplicaSet",
        true,
        &["rs"],
        true,
        &[
            ("Desired", "integer", ".spec.replicas"),
            ("Current", "integer", ".status.replicas"),
            ("Ready", "integer", ".status.readyReplicas"),
        ],
    ),
    def(
        "apps",
        "v1",
        "statefulsets",
        "StatefulSet",
        true,
        &["sts"],
        true,
        &[("Ready", "ratio", ".status.readyReplicas/.spec.replicas")],
    ),
    def(
        "apps",
        "v1",
        "daemonsets",
        "DaemonSet",
        true,
        &["ds"],
        true,
        &[
            ("Desired", "integer", ".status.desiredNumberScheduled"),
            ("Ready", "integer", ".status.numberReady"),
        ],
    ),
    def(
        "apps",
        "v1",
        "controllerrevisions",
        "ControllerRevision",
        true,
        &[],
        false,
        &[],
    ),
    def(
        "batch",
        "v1",
        "jobs",
        "Job",
        true,
        &[],
        true,
        &[("Succeeded", "integer", ".status.succeeded")],
    ),
    def(
        "batch",
        "v1",
        "cronjobs",
        "CronJob",
        true,
        &["cj"],
        true,
        &[
            ("Schedule", "string", ".spec.schedule"),
            ("Suspend", "boolean", ".spec.suspend"),
        ],
    ),
    def(
        "networking.k8s.io",
        "v1",
        "ingresses",
        "Ingress",
        true,
        &["ing"],
        true,
        &[("Class", "string", ".spec.ingressClassName")],
    ),
    def(
        "networking.k8s.io",
        "v1",
        "ingressclasses",
        "IngressClass",
        false,
        &[],
        false,
        &[],
    ),
    def(
        "networking.k8s.io",
        "v1",
        "networkpolicies",
        "NetworkPolicy",
        true,
        &["netpol"],
        false,
        &[],
    ),
    def(
        "discovery.k8s.io",
        "v1",
        "endpointslices",
        "EndpointSlice",
        true,
        &[],
        false,
        &[],
    ),
    def(
        "policy",
        "v1",
        "poddisruptionbudgets",
        "PodDisruptionBudget",
        true,
        &["pdb"],
        true,
        &[],
    ),
    def(
        "autoscaling",
        "v2",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        true,
        &["hpa"],
        true,
        &[],
    ),
    def(
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        "PriorityClass",
        false,
        &["pc"],
        false,
        &[("Value", "integer", ".value")],
    ),
    def(
        "storage.k8s.io",
        "v1",
        "storageclasses",
        "StorageClass",
        false,
        &["sc"],
        false,
        &[("Provisioner", "string", ".provisioner")],
    ),
    def(
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        false,
        &[],
        false,
        &[],
    ),
    def(
        "admissionregistration.k8s.io",
        "v1",
        "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
        false,
        &[],
        false,
        &[],
    ),
    def(
        "rbac.authorization.k8s.io",
        "v1",
        "roles",
        "Role",
        true,
        &[],
        false,
        &[],
    ),
    def(
        "rbac.authorization.k8s.io",
        "v1",
        "rolebindings",
        "RoleBinding",
        true,
        &[],
        false,
        &[("Role", "string", ".roleRef.name")],
    ),
    def(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterroles",
        "ClusterRole",
        false,
        &[],
        false,
        &[],
    ),
    def(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterrolebindings",
        "ClusterRoleBinding",
        false,
        &[],
        false,
        &[("Role", "string", ".roleRef.name")],
    ),
    def(
        "coordination.k8s.io",
        "v1",
        "leases",
        "Lease",
        true,
        &[],
        false,
        &[("Holder", "string", ".spec.holderIdentity")],
    ),
    def(
        "events.k8s.io",
        "v1",
        "events",
        "Event",
        true,
        &["ev"],
        false,
        &[
            ("Type", "string", ".type"),
            ("Reason", "string", ".reason"),
            ("Note", "string", ".note"),
        ],
    ),
    def(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        false,
        &["crd", "crds"],
        true,
        &[("Created At", "date", ".metadata.creationTimestamp")],
    ),
];

/// Resources in the `all` category (`kubectl get all`).
const IN_ALL: &[&str] = &[
    "pods",
    "services",
    "deployments",
    "replicasets",
    "statefulsets",
    "daemonsets",
    "jobs",
    "cronjobs",
];

/// Kinds that are requests answered on create and never stored.
const REVIEWS: &[(&str, &str, &str, bool)] = &[
    (
        "authorization.k8s.io",
        "selfsubjectaccessreviews",
        "SelfSubjectAccessReview",
        false,
    ),
    (
        "authorization.k8s.io",
        "subjectaccessreviews",
        "SubjectAccessReview",
        false,
    ),
    (
        "authorization.k8s.io",
        "selfsubjectrulesreviews",
        "SelfSubjectRulesReview",
        false,
    ),
    (
        "authentication.k8s.io",
        "tokenreviews",
        "TokenReview",
        false,
    ),
    (
        "authentication.k8s.io",
        "selfsubjectreviews",
        "SelfSubjectReview",
        false,
    ),
];

/// Every built-in resource type.
pub fn resource_types() -> Vec<ResourceType> {
    let mut out: Vec<ResourceType> = DEFS
        .iter()
        .map(|d| ResourceType {
            group: d.group.into(),
            version: d.version.into(),
            plural: d.plural.into(),
            singular: d.kind.to_ascii_lowercase(),
            kind: d.kind.into(),
            namespaced: d.namespaced,
            short_names: d.short.iter().map(|s| s.to_string()).collect(),
            categories: if IN_ALL.contains(&d.plural) {
                vec!["all".into()]
            } else {
                vec![]
            },
            verbs: ALL_VERBS.to_vec(),
            status_subresource: d.status,
            other_subresources: if d.plural == "serviceaccounts" {
                vec!["token"]
            } else if is_scalable(d.group, d.plural) {
                vec!["scale"]
            } else {
                vec![]
            },
            printer_columns: d
                .columns
                .iter()
                .map(|(name, type_, path)| PrinterColumn {
                    name: name.to_string(),
                    type_: type_.to_string(),
                    json_path: path.to_string(),
                    description: String::new(),
                    priority: 0,
                    format: String::new(),
                })
                .collect(),
            schema: None,
            virtual_only: false,
            crd: None,
        })
        .collect();
    for (group, plural, kind, namespaced) in REVIEWS {
        out.push(ResourceType {
            group: group.to_string(),
            version: "v1".into(),
            plural: plural.to_string(),
            singular: kind.to_ascii_lowercase(),
            kind: kind.to_string(),
            namespaced: *namespaced,
            short_names: vec![],
            categories: vec![],
            verbs: vec!["create"],
            status_subresource: false,
            other_subresources: vec![],
            printer_columns: vec![],
            schema: None,
            virtual_only: true,
            crd: None,
        });
    }
    out
}

/// The apps resources that have a `scale` subresource.
pub const SCALABLE: [&str; 3] = ["deployments", "replicasets", "statefulsets"];

/// Whether `group`/`plural` serves `scale`.
pub fn is_scalable(group: &str, plural: &str) -> bool {
    group == "apps" && SCALABLE.contains(&plural)
}
