//! RBAC authorization: Roles, ClusterRoles, RoleBindings and ClusterRoleBindings evaluated for each request
//! (verbs, apiGroups, resources, subresources, resourceNames), with kube-apiserver's 403 message shape.

use serde_json::{Value, json};

use crate::auth::authenticate::User;
use crate::error::{ApiError, ApiResult, qualified};
use crate::http::request::Request;
use crate::state::Inner;
use crate::storage::object;
use crate::storage::store::ObjKey;

const RBAC: &str = "rbac.authorization.k8s.io";

/// What a request wants to do.
#[derive(Debug, Clone, Default)]
pub struct Attributes {
    pub verb: String,
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
}

pub fn authorize_request(inner: &Inner, req: &Request, verb: &str) -> ApiResult<()> {
    let attrs = Attributes {
        verb: verb.into(),
        group: req.rt.group.clone(),
        resource: req.rt.plural.clone(),
        subresource: req.path.subresource.clone().unwrap_or_default(),
        namespace: req.path.namespace.clone().unwrap_or_default(),
        name: req.path.name.clone().unwrap_or_default(),
    };
    if allowed(inner, &req.user, &attrs) {
        Ok(())
    } else {
        Err(forbidden(&req.user, &attrs))
    }
}

/// `configmaps "x" is forbidden: User "u" cannot get resource "configmaps" in API group "" in the namespace "ns"`.
pub fn forbidden(user: &User, a: &Attributes) -> ApiError {
    let resource = qualified(&a.group, &a.resource);
    let subject = if a.name.is_empty() {
        format!("{resource} is forbidden")
    } else {
        format!("{resource} \"{}\" is forbidden", a.name)
    };
    let full_resource = if a.subresource.is_empty() {
        a.resource.clone()
    } else {
        format!("{}/{}", a.resource, a.subresource)
    };
    let scope = if a.namespace.is_empty() {
        "at the cluster scope".to_string()
    } else {
        format!("in the namespace \"{}\"", a.namespace)
    };
    let mut err = ApiError::forbidden(format!(
        "{subject}: User \"{}\" cannot {} resource \"{full_resource}\" in API group \"{}\" {scope}",
        user.name, a.verb, a.group
    ));
    let mut details = json!({"kind": a.resource});
    if !a.group.is_empty() {
        details["group"] = json!(a.group);
    }
    if !a.name.is_empty() {
        details["name"] = json!(a.name);
    }
    err.details = Some(details);
    err
}

/// Whether `user` may do `attrs`.
pub fn allowed(inner: &Inner, user: &User, attrs: &Attributes) -> bool {
    if user.is_superuser() {
        return true;
    }
    // Every authenticated user may ask what it may do (system:basic-user).
    if attrs.group == "authorization.k8s.io"
        && matches!(
            attrs.resource.as_str(),
            "selfsubjectaccessreviews" | "selfsubjectrulesreviews"
        )
        || attrs.group == "authentication.k8s.io" && attrs.resource == "selfsubjectreviews"
    {
        return true;
    }
    rules_for(inner, user, &attrs.namespace)
        .iter()
        .any(|rule| rule_allows(rule, attrs))
}

/// Every policy rule that applies to `user` in `namespace` (cluster-wide rules included).
pub fn rules_for(inner: &Inner, user: &User, namespace: &str) -> Vec<Value> {
    let mut rules = Vec::new();
    let (crbs, _) = inner
        .store
        .list(&format!("{RBAC}/clusterrolebindings"), None);
    for binding in crbs.iter().filter(|b| binds(b, user)) {
        rules.extend(role_rules(inner, binding, ""));
    }
    if !namespace.is_empty() {
        let (rbs, _) = inner
            .store
            .list(&format!("{RBAC}/rolebindings"), Some(namespace));
        for binding in rbs.iter().filter(|b| binds(b, user)) {
            rules.extend(role_rules(inner, binding, namespace));
        }
    }
    rules
}

fn binds(binding: &Value, user: &User) -> bool {
    let binding_ns = object::namespace(binding);
    binding
        .get("subjects")
        .and_then(Value::as_array)
        .is_some_and(|subjects| {
            subjects.iter().any(|s| {
                let name = s.get("name").and_then(Value::as_str).unwrap_or("");
                match s.get("kind").and_then(Value::as_str) {
                    Some("User") => name == user.name,
                    Some("Group") => user.groups.iter().any(|g| g == name),
                    Some("ServiceAccount") => {
                        let ns = s
                            .get("namespace")
                            .and_then(Value::as_str)
                            .filter(|n| !n.is_empty())
                            .unwrap_or(binding_ns);
                        user.name == format!("system:serviceaccount:{ns}:{name}")
                    }
                    _ => false,
                }
            })
        })
}

fn role_rules(inner: &Inner, binding: &Value, namespace: &str) -> Vec<Value> {
    let kind = binding
        .pointer("/roleRef/kind")
        .and_then(Value::as_str)
        .unwrap_or("");
    let name = binding
        .pointer("/roleRef/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let key = match kind {
        "ClusterRole" => ObjKey::new(format!("{RBAC}/clusterroles"), "", name),
        "Role" if !namespace.is_empty() => ObjKey::new(format!("{RBAC}/roles"), namespace, name),
        _ => return vec![],
    };
    match inner.store.get(&key) {
        Some(role) if kind == "ClusterRole" => {
            crate::auth::rbac_defaults::aggregated_rules(inner, &role)
        }
        Some(role) => role
            .get("rules")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        None => vec![],
    }
}

fn list_has(rule: &Value, field: &str, wanted: &str) -> bool {
    rule.get(field)
        .and_then(Value::as_array)
        .is_some_and(|items| {
            items
                .iter()
                .any(|i| i.as_str() == Some("*") || i.as_str() == Some(wanted))
        })
}

pub fn rule_allows(rule: &Value, a: &Attributes) -> bool {
    if !list_has(rule, "verbs", &a.verb) || !list_has(rule, "apiGroups", &a.group) {
        return false;
    }
    let resources = rule
        .get("resources")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let resource_ok = resources.iter().filter_map(Value::as_str).any(|r| {
        if a.subresource.is_empty() {
            r == "*" || r == a.resource
        } else {
            r == "*"
                || r == format!("{}/{}", a.resource, a.subresource)
                || r == format!("*/{}", a.subresource)
        }
    });
    if !resource_ok {
        return false;
    }
    match rule.get("resourceNames").and_then(Value::as_array) {
        Some(names) if !names.is_empty() => {
            !a.name.is_empty() && names.iter().any(|n| n.as_str() == Some(&a.name))
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(verb: &str, resource: &str, sub: &str, name: &str) -> Attributes {
        Attributes {
            verb: verb.into(),
            group: "".into(),
            resource: resource.into(),
            subresource: sub.into(),
            namespace: "ns".into(),
            name: name.into(),
        }
    }

    #[test]
    fn rule_matching() {
        let rule = json!({"apiGroups": [""], "resources": ["configmaps", "serviceaccounts/token"], "verbs": ["get", "create"], "resourceNames": []});
        assert!(rule_allows(&rule, &attrs("get", "configmaps", "", "x")));
        assert!(!rule_allows(&rule, &attrs("list", "configmaps", "", "")));
        assert!(!rule_allows(&rule, &attrs("get", "secrets", "", "x")));
        assert!(rule_allows(
            &rule,
            &attrs("create", "serviceaccounts", "token", "sa")
        ));
        assert!(!rule_allows(
            &rule,
            &attrs("get", "serviceaccounts", "", "sa")
        ));
        let named = json!({"apiGroups": ["*"], "resources": ["secrets"], "verbs": ["*"], "resourceNames": ["a"]});
        assert!(rule_allows(&named, &attrs("get", "secrets", "", "a")));
        assert!(!rule_allows(&named, &attrs("get", "secrets", "", "b")));
        assert!(!rule_allows(&named, &attrs("list", "secrets", "", "")));
    }
}
