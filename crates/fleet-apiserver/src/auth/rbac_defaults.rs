//! The bootstrap RBAC policy every cluster starts with, as kube-apiserver writes it: `cluster-admin`; the
//! user-facing `admin`, `edit` and `view` ClusterRoles, aggregated by label from `system:aggregate-to-*`
//! (and from any ClusterRole a user labels `rbac.authorization.k8s.io/aggregate-to-<role>: "true"`);
//! `system:basic-user`, `system:discovery` and `system:public-info-viewer` with their bindings to every
//! authenticated user. Also the aggregation itself: [`aggregated_rules`] gathers the rules of the roles an
//! `aggregationRule` selects.

use serde_json::{Value, json};

use crate::kinds::registry::ALL_VERBS;
use crate::state::Inner;
use crate::storage::object;
use crate::storage::selectors::LabelSelector;
use crate::storage::store::{ObjKey, Txn};

const RBAC: &str = "rbac.authorization.k8s.io";
const AGGREGATE: &str = "rbac.authorization.k8s.io/aggregate-to-";
const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

/// What `view` grants: read access to namespaced workloads and configuration, never Secrets.
fn view_rules() -> Vec<Value> {
    vec![
        rule(
            &[""],
            &[
                "configmaps",
                "endpoints",
                "persistentvolumeclaims",
                "persistentvolumeclaims/status",
                "pods",
                "pods/log",
                "pods/status",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "replicationcontrollers/status",
                "serviceaccounts",
                "services",
                "services/status",
                "bindings",
                "events",
                "limitranges",
                "resourcequotas",
                "resourcequotas/status",
                "namespaces",
                "namespaces/status",
            ],
            READ,
        ),
        rule(
            &["apps"],
            &[
                "controllerrevisions",
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/scale",
                "deployments/status",
                "replicasets",
                "replicasets/scale",
                "replicasets/status",
                "statefulsets",
                "statefulsets/scale",
                "statefulsets/status",
            ],
            READ,
        ),
        rule(
            &["autoscaling"],
            &[
                "horizontalpodautoscalers",
                "horizontalpodautoscalers/status",
            ],
            READ,
        ),
        rule(
            &["batch"],
            &["cronjobs", "cronjobs/status", "jobs", "jobs/status"],
            READ,
        ),
        rule(
            &["policy"],
            &["poddisruptionbudgets", "poddisruptionbudgets/status"],
            READ,
        ),
        rule(
            &["networking.k8s.io"],
            &["ingresses", "ingresses/status", "networkpolicies"],
            READ,
        ),
        rule(&["discovery.k8s.io"], &["endpointslices"], READ),
    ]
}

/// What `edit` adds: writes to those objects, Secrets, and acting as the namespace's ServiceAccounts.
fn edit_rules() -> Vec<Value> {
    vec![
        rule(
            &[""],
            &[
                "pods/attach",
                "pods/exec",
                "pods/portforward",
                "pods/proxy",
                "secrets",
                "services/proxy",
            ],
            READ,
        ),
        rule(&[""], &["serviceaccounts"], &["impersonate"]),
        rule(
            &[""],
            &[
                "pods",
                "pods/attach",
                "pods/exec",
                "pods/portforward",
                "pods/proxy",
                "configmaps",
                "endpoints",
                "persistentvolumeclaims",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "secrets",
                "serviceaccounts",
                "services",
                "services/proxy",
            ],
            WRITE,
        ),
        rule(&[""], &["serviceaccounts/token"], &["create"]),
        rule(
            &["apps"],
            &[
                "daemonsets",
                "deployments",
                "deployments/rollback",
                "deployments/scale",
                "replicasets",
                "replicasets/scale",
                "statefulsets",
                "statefulsets/scale",
            ],
            WRITE,
        ),
        rule(&["autoscaling"], &["horizontalpodautoscalers"], WRITE),
        rule(&["batch"], &["cronjobs", "jobs"], WRITE),
        rule(&["policy"], &["poddisruptionbudgets"], WRITE),
        rule(
            &["networking.k8s.io"],
            &["ingresses", "networkpolicies"],
            WRITE,
        ),
        rule(&["discovery.k8s.io"], &["endpointslices"], WRITE),
        rule(&["coordination.k8s.io"], &["leases"], &ALL_VERBS),
    ]
}

/// What `admin` adds: managing the namespace's Roles and RoleBindings.
fn admin_rules() -> Vec<Value> {
    vec![
        rule(
            &["authorization.k8s.io"],
            &["localsubjectaccessreviews"],
            &["create"],
        ),
        rule(&[RBAC], &["rolebindings", "roles"], &ALL_VERBS),
    ]
}

fn cluster_role(
    name: &str,
    labels: Value,
    rules: Vec<Value>,
    aggregate_from: Option<&[&str]>,
) -> Value {
    let mut role = json!({
        "apiVersion": format!("{RBAC}/v1"),
        "kind": "ClusterRole",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
        },
        "rules": rules,
    });
    if let Some(sources) = aggregate_from {
        let selectors: Vec<Value> = sources
            .iter()
            .map(|s| json!({"matchLabels": {format!("{AGGREGATE}{s}"): "true"}}))
            .collect();
        role["aggregationRule"] = json!({"clusterRoleSelectors": selectors});
    }
    role
}

fn bootstrap_labels(extra: &[(&str, &str)]) -> Value {
    let mut labels = json!({"kubernetes.io/bootstrapping": "rbac-defaults"});
    for (k, v) in extra {
        labels[*k] = json!(v);
    }
    labels
}

fn cluster_roles() -> Vec<Value> {
    let aggregate_label = |to: &str| format!("{AGGREGATE}{to}");
    let (to_admin, to_edit, to_view) = (
        aggregate_label("admin"),
        aggregate_label("edit"),
        aggregate_label("view"),
    );
    let view = view_rules();
    let edit: Vec<Value> = view.iter().cloned().chain(edit_rules()).collect();
    let admin: Vec<Value> = edit.iter().cloned().chain(admin_rules()).collect();
    vec![
        cluster_role(
            "cluster-admin",
            bootstrap_labels(&[]),
            vec![
                json!({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}),
                json!({"nonResourceURLs": ["*"], "verbs": ["*"]}),
            ],
            None,
        ),
        cluster_role("admin", bootstrap_labels(&[]), admin, Some(&["admin"])),
        cluster_role(
            "edit",
            bootstrap_labels(&[(&to_admin, "true")]),
            edit,
            Some(&["edit"]),
        ),
        cluster_role(
            "view",
            bootstrap_labels(&[(&to_admin, "true"), (&to_edit, "true")]),
            view.clone(),
            Some(&["view"]),
        ),
        cluster_role(
            "system:aggregate-to-admin",
            bootstrap_labels(&[(&to_admin, "true")]),
            admin_rules(),
            None,
        ),
        cluster_role(
            "system:aggregate-to-edit",
            bootstrap_labels(&[(&to_edit, "true")]),
            edit_rules(),
            None,
        ),
        cluster_role(
            "system:aggregate-to-view",
            bootstrap_labels(&[(&to_view, "true")]),
            view,
            None,
        ),
        cluster_role(
            "system:basic-user",
            bootstrap_labels(&[]),
            vec![
                rule(
                    &["authorization.k8s.io"],
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    &["create"],
                ),
                rule(
                    &["authentication.k8s.io"],
                    &["selfsubjectreviews"],
                    &["create"],
                ),
            ],
            None,
        ),
        cluster_role(
            "system:discovery",
            bootstrap_labels(&[]),
            vec![
                json!({"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"], "verbs": ["get"]}),
            ],
            None,
        ),
        cluster_role(
            "system:public-info-viewer",
            bootstrap_labels(&[]),
            vec![
                json!({"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"], "verbs": ["get"]}),
            ],
            None,
        ),
    ]
}

fn cluster_role_binding(name: &str, groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"apiGroup": RBAC, "kind": "Group", "name": g}))
        .collect();
    json!({
        "apiVersion": format!("{RBAC}/v1"),
        "kind": "ClusterRoleBinding",
        "metadata": {
            "name": name,
            "labels": bootstrap_labels(&[]),
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
        },
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": name},
        "subjects": subjects,
    })
}

fn cluster_role_bindings() -> Vec<Value> {
    vec![
        cluster_role_binding("cluster-admin", &["system:masters"]),
        cluster_role_binding("system:basic-user", &["system:authenticated"]),
        cluster_role_binding("system:discovery", &["system:authenticated"]),
        cluster_role_binding(
            "system:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
        ),
    ]
}

fn put_missing(txn: &mut Txn<'_>, resource: &str, mut object: Value) {
    let key = ObjKey::new(format!("{RBAC}/{resource}"), "", object::name(&object));
    if txn.get(&key).is_none() {
        let meta = object::metadata_mut(&mut object);
        meta.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
        meta.insert("creationTimestamp".into(), json!(object::now_rfc3339()));
        txn.put(&key, object);
    }
}

/// Writes the bootstrap roles and bindings that are missing (first start, or a data dir without them).
pub fn ensure(inner: &Inner) {
    let _ = inner.store.transact(|txn| {
        for role in cluster_roles() {
            put_missing(txn, "clusterroles", role);
        }
        for binding in cluster_role_bindings() {
            put_missing(txn, "clusterrolebindings", binding);
        }
        Ok(())
    });
}

/// The rules of a ClusterRole: its own, plus, when it has an `aggregationRule`, those of every ClusterRole
/// its selectors match (evaluated at each request, so a newly labelled role counts at once).
pub fn aggregated_rules(inner: &Inner, role: &Value) -> Vec<Value> {
    let mut rules = role
        .get("rules")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let Some(selectors) = role
        .pointer("/aggregationRule/clusterRoleSelectors")
        .and_then(Value::as_array)
    else {
        return rules;
    };
    let selectors: Vec<LabelSelector> = selectors
        .iter()
        .filter_map(|s| LabelSelector::from_json(s).ok())
        .collect();
    let (roles, _) = inner.store.list(&format!("{RBAC}/clusterroles"), None);
    for other in roles.iter() {
        if object::name(other) == object::name(role) {
            continue;
        }
        if selectors.iter().any(|s| s.matches(other)) {
            for r in other
                .get("rules")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if !rules.contains(r) {
                    rules.push(r.clone());
                }
            }
        }
    }
    rules
}
