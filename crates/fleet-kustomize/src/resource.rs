//! One resource being built: its object, its original identity and the identities it had before each rename
//! (kustomize's "previous ids", which name-reference fixing and patch targeting look at), and generator state.

use serde_json::{Map, Value};

/// Group, version and kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gvk {
    /// API group, `""` for the core group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

impl Gvk {
    /// Parses `apiVersion` and `kind`.
    pub fn new(api_version: &str, kind: &str) -> Self {
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), api_version.to_string()),
        };
        Gvk {
            group,
            version,
            kind: kind.to_string(),
        }
    }

    /// Whether `self` (a concrete GVK) is selected by `sel`, whose empty fields match anything.
    pub fn selected_by(&self, group: &str, version: &str, kind: &str) -> bool {
        (group.is_empty() || group == self.group)
            && (version.is_empty() || version == self.version)
            && (kind.is_empty() || kind == self.kind)
    }

    /// kustomize's `group_version_kind` string with `~G`/`~V`/`~K` for empty parts (used by legacy ordering).
    pub fn sort_string(&self) -> String {
        let or = |s: &str, d: &str| {
            if s.is_empty() {
                d.to_string()
            } else {
                s.to_string()
            }
        };
        format!(
            "{}_{}_{}",
            or(&self.group, "~G"),
            or(&self.version, "~V"),
            or(&self.kind, "~K")
        )
    }

    /// Whether objects of this group/version/kind are cluster-scoped, by the Kubernetes 1.21 schema built into
    /// kustomize: kinds and versions it does not know (custom resources, but also newer built-ins such as
    /// `ValidatingAdmissionPolicy` or `flowcontrol.apiserver.k8s.io/v1`) are treated as namespaced, as
    /// `kubectl kustomize` does.
    pub fn is_cluster_scoped(&self) -> bool {
        CLUSTER_SCOPED.iter().any(|(g, k, versions)| {
            *g == self.group && *k == self.kind && versions.contains(&self.version.as_str())
        })
    }
}

const V1: &[&str] = &["v1"];
const V1_BETA: &[&str] = &["v1", "v1beta1"];
const V1_BETA_ALPHA: &[&str] = &["v1", "v1beta1", "v1alpha1"];

/// Cluster-scoped kinds of kustomize's built-in schema: (group, kind, versions).
const CLUSTER_SCOPED: &[(&str, &str, &[&str])] = &[
    ("", "ComponentStatus", V1),
    ("", "Namespace", V1),
    ("", "Node", V1),
    ("", "PersistentVolume", V1),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        V1_BETA,
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
        V1_BETA,
    ),
    ("apiextensions.k8s.io", "CustomResourceDefinition", V1_BETA),
    ("apiregistration.k8s.io", "APIService", V1_BETA),
    ("authentication.k8s.io", "TokenReview", V1_BETA),
    ("authorization.k8s.io", "SelfSubjectAccessReview", V1_BETA),
    ("authorization.k8s.io", "SelfSubjectRulesReview", V1_BETA),
    ("authorization.k8s.io", "SubjectAccessReview", V1_BETA),
    ("certificates.k8s.io", "CertificateSigningRequest", V1_BETA),
    (
        "flowcontrol.apiserver.k8s.io",
        "FlowSchema",
        &["v1beta1", "v1alpha1"],
    ),
    (
        "flowcontrol.apiserver.k8s.io",
        "PriorityLevelConfiguration",
        &["v1beta1", "v1alpha1"],
    ),
    ("networking.k8s.io", "IngressClass", V1_BETA),
    ("node.k8s.io", "RuntimeClass", V1_BETA_ALPHA),
    ("policy", "PodSecurityPolicy", &["v1beta1"]),
    ("rbac.authorization.k8s.io", "ClusterRole", V1_BETA_ALPHA),
    (
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        V1_BETA_ALPHA,
    ),
    ("scheduling.k8s.io", "PriorityClass", V1_BETA_ALPHA),
    ("storage.k8s.io", "CSIDriver", V1_BETA),
    ("storage.k8s.io", "CSINode", V1_BETA),
    ("storage.k8s.io", "StorageClass", V1_BETA),
    ("storage.k8s.io", "VolumeAttachment", V1_BETA_ALPHA),
];

/// A resource identity: GVK, name and namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ResId {
    /// Group, version, kind.
    pub gvk: Gvk,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace` as written (may be empty).
    pub namespace: String,
}

impl ResId {
    /// The namespace used for comparisons: cluster-scoped kinds have none, empty means `default`.
    pub fn effective_namespace(&self) -> &str {
        if self.gvk.is_cluster_scoped() {
            "_non_namespaceable_"
        } else if self.namespace.is_empty() {
            "default"
        } else {
            &self.namespace
        }
    }

    /// kustomize's `ResId.Equals`: same GVK and name, namespaces equal with `""` meaning `default`.
    pub fn equals(&self, other: &ResId) -> bool {
        self.gvk == other.gvk && self.name == other.name && self.ns_equals(other)
    }

    /// Namespaces equal, `""` meaning `default`.
    pub fn ns_equals(&self, other: &ResId) -> bool {
        let n = |s: &str| {
            if s.is_empty() {
                "default".to_string()
            } else {
                s.to_string()
            }
        };
        n(&self.namespace) == n(&other.namespace)
    }

    /// How kustomize prints an id in messages: `Kind.version.group/name.namespace`.
    pub fn describe(&self) -> String {
        let mut s = self.gvk.kind.clone();
        if !self.gvk.version.is_empty() {
            s.push('.');
            s.push_str(&self.gvk.version);
        }
        if !self.gvk.group.is_empty() {
            s.push('.');
            s.push_str(&self.gvk.group);
        }
        s.push('/');
        s.push_str(&self.name);
        if !self.namespace.is_empty() {
            s.push('.');
            s.push_str(&self.namespace);
        }
        s
    }
}

/// How a generated ConfigMap or Secret combines with an existing one of the same id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behavior {
    /// A new resource; an existing one with the same id is an error.
    Create,
    /// Merge data, labels and annotations into the existing resource.
    Merge,
    /// Replace the existing resource's data.
    Replace,
}

/// A resource in the build.
#[derive(Debug, Clone)]
pub struct Resource {
    /// The object (a JSON object).
    pub obj: Value,
    /// The id the resource had when it was read or generated.
    pub original: ResId,
    /// Ids it had before each rename or re-namespacing, oldest first.
    pub previous: Vec<ResId>,
    /// For generated resources: whether the content-hash suffix is still to be added.
    pub needs_hash: bool,
    /// For generated resources: how to combine with an existing one.
    pub behavior: Option<Behavior>,
    /// The file the resource came from (for messages).
    pub origin: String,
}

impl Resource {
    /// A resource read from `origin`.
    pub fn new(obj: Value, origin: &str) -> Self {
        let mut r = Resource {
            obj,
            original: ResId::default(),
            previous: Vec::new(),
            needs_hash: false,
            behavior: None,
            origin: origin.to_string(),
        };
        r.original = r.id();
        r
    }

    /// The current id.
    pub fn id(&self) -> ResId {
        ResId {
            gvk: self.gvk(),
            name: self.name().to_string(),
            namespace: self.namespace().to_string(),
        }
    }

    /// Whether the current id equals `id` (as [`ResId::equals`]), without building the current id.
    pub fn has_id(&self, id: &ResId) -> bool {
        fn ns(s: &str) -> &str {
            if s.is_empty() { "default" } else { s }
        }
        self.name() == id.name
            && self.kind() == id.gvk.kind
            && ns(self.namespace()) == ns(&id.namespace)
            && self.gvk() == id.gvk
    }

    /// Current GVK.
    pub fn gvk(&self) -> Gvk {
        Gvk::new(
            str_at(&self.obj, &["apiVersion"]),
            str_at(&self.obj, &["kind"]),
        )
    }

    /// Current kind.
    pub fn kind(&self) -> &str {
        str_at(&self.obj, &["kind"])
    }

    /// Current `metadata.name`.
    pub fn name(&self) -> &str {
        str_at(&self.obj, &["metadata", "name"])
    }

    /// Current `metadata.namespace`.
    pub fn namespace(&self) -> &str {
        str_at(&self.obj, &["metadata", "namespace"])
    }

    /// The original id and every previous id, oldest first.
    pub fn history(&self) -> impl Iterator<Item = &ResId> {
        std::iter::once(&self.original).chain(self.previous.iter())
    }

    /// Sets `metadata.name`, remembering the id before the change.
    pub fn set_name(&mut self, name: &str) {
        if self.name() == name {
            return;
        }
        self.remember();
        metadata_mut(&mut self.obj).insert("name".into(), Value::String(name.to_string()));
    }

    /// Sets `metadata.namespace`, remembering the id before the change.
    pub fn set_namespace(&mut self, namespace: &str) {
        if self.namespace() == namespace
            && metadata(&self.obj).is_some_and(|m| m.contains_key("namespace"))
        {
            return;
        }
        if self.namespace() != namespace {
            self.remember();
        }
        metadata_mut(&mut self.obj)
            .insert("namespace".into(), Value::String(namespace.to_string()));
    }

    /// Records the current id as a previous id.
    pub fn remember(&mut self) {
        let id = self.id();
        if self.previous.last() != Some(&id) {
            self.previous.push(id);
        }
    }

    /// `metadata.labels` as string pairs.
    pub fn labels(&self) -> Map<String, Value> {
        metadata(&self.obj)
            .and_then(|m| m.get("labels"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    }

    /// `metadata.annotations` as string pairs.
    pub fn annotations(&self) -> Map<String, Value> {
        metadata(&self.obj)
            .and_then(|m| m.get("annotations"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    }
}

/// The string at a path of object keys, or `""`.
pub fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    let mut cur = v;
    for key in path {
        match cur.get(key) {
            Some(next) => cur = next,
            None => return "",
        }
    }
    cur.as_str().unwrap_or("")
}

fn metadata(v: &Value) -> Option<&Map<String, Value>> {
    v.get("metadata").and_then(Value::as_object)
}

/// `metadata` as a mutable map, created (or replacing a non-mapping) when needed.
pub fn metadata_mut(v: &mut Value) -> &mut Map<String, Value> {
    if !v.is_object() {
        *v = Value::Object(Map::new());
    }
    let obj = v.as_object_mut().expect("just made an object");
    let md = obj
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !md.is_object() {
        *md = Value::Object(Map::new());
    }
    md.as_object_mut().expect("just made an object")
}
