//! Parses request paths into what they address: discovery documents, OpenAPI documents, or a resource
//! collection / object / subresource under `/api/v1` or `/apis/{group}/{version}`.

/// A resource request's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePath {
    pub group: String,
    pub version: String,
    pub namespace: Option<String>,
    pub resource: String,
    pub name: Option<String>,
    pub subresource: Option<String>,
    /// The deprecated `/watch/` path prefix was used.
    pub watch_prefix: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    Version,
    Health,
    /// `/api`
    CoreVersions,
    /// `/apis`
    Groups,
    /// `/apis/{group}`
    Group(String),
    /// `/api/v1` or `/apis/{group}/{version}`
    GroupVersion(String, String),
    /// `/openapi/v3`
    OpenApiRoot,
    /// `/openapi/v3/api/v1` or `/openapi/v3/apis/{group}/{version}`
    OpenApiGroupVersion(String, String),
    /// `/openapi/v2`
    OpenApiV2,
    Resource(ResourcePath),
    NotFound,
}

pub fn parse(path: &str) -> Route {
    let trimmed = path.trim_matches('/');
    // Empty segments are kept, as kube-apiserver keeps them: `/api/v1/namespaces//configmaps/x` names the
    // empty namespace (answered with 400 by the handlers), it is not `/api/v1/namespaces/configmaps/x`.
    let segments: Vec<&str> = if trimmed.is_empty() {
        Vec::new()
    } else {
        trimmed.split('/').collect()
    };
    let route = route_of(&segments);
    let namespace_slot = match &route {
        Route::Resource(r) if r.namespace.is_some() => {
            let start = if r.group.is_empty() { 2 } else { 3 };
            Some(start + usize::from(r.watch_prefix) + 1)
        }
        _ => None,
    };
    let stray_empty = segments
        .iter()
        .enumerate()
        .any(|(i, s)| s.is_empty() && Some(i) != namespace_slot);
    if stray_empty {
        return Route::NotFound;
    }
    route
}

fn route_of(segments: &[&str]) -> Route {
    match segments {
        ["version"] => Route::Version,
        ["healthz" | "readyz" | "livez", ..] => Route::Health,
        ["api"] => Route::CoreVersions,
        ["apis"] => Route::Groups,
        ["apis", group] => Route::Group(group.to_string()),
        ["api", version] => Route::GroupVersion(String::new(), version.to_string()),
        ["apis", group, version] => Route::GroupVersion(group.to_string(), version.to_string()),
        ["openapi", "v3"] => Route::OpenApiRoot,
        ["openapi", "v2"] => Route::OpenApiV2,
        ["openapi", "v3", "api", version] => {
            Route::OpenApiGroupVersion(String::new(), version.to_string())
        }
        ["openapi", "v3", "apis", group, version] => {
            Route::OpenApiGroupVersion(group.to_string(), version.to_string())
        }
        ["api", version, rest @ ..] => resource(String::new(), version, rest),
        ["apis", group, version, rest @ ..] => resource(group.to_string(), version, rest),
        _ => Route::NotFound,
    }
}

fn resource(group: String, version: &str, rest: &[&str]) -> Route {
    let (watch_prefix, rest) = match rest {
        ["watch", tail @ ..] => (true, tail),
        _ => (false, rest),
    };
    let (namespace, rest) = match rest {
        // `/namespaces/{ns}/{resource}...`; `/namespaces/{name}` and `/namespaces/{name}/status|finalize`
        // address the Namespace object itself.
        ["namespaces", ns, resource, tail @ ..]
            if !group.is_empty() || !matches!(*resource, "status" | "finalize") =>
        {
            let mut tail_full = vec![*resource];
            tail_full.extend_from_slice(tail);
            (Some(ns.to_string()), tail_full)
        }
        _ => (None, rest.to_vec()),
    };
    let build = |resource: &str, name: Option<&str>, sub: Option<&str>| {
        Route::Resource(ResourcePath {
            group: group.clone(),
            version: version.to_string(),
            namespace: namespace.clone(),
            resource: resource.to_string(),
            name: name.map(str::to_string),
            subresource: sub.map(str::to_string),
            watch_prefix,
        })
    };
    match rest.as_slice() {
        [resource] => build(resource, None, None),
        [resource, name] => build(resource, Some(name), None),
        [resource, name, sub] => build(resource, Some(name), Some(sub)),
        _ => Route::NotFound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(path: &str) -> ResourcePath {
        match parse(path) {
            Route::Resource(r) => r,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn paths() {
        let r = res("/api/v1/namespaces/default/configmaps/x");
        assert_eq!(
            (
                r.namespace.as_deref(),
                r.resource.as_str(),
                r.name.as_deref()
            ),
            (Some("default"), "configmaps", Some("x"))
        );
        let r = res("/api/v1/namespaces/default");
        assert_eq!(
            (r.namespace, r.resource.as_str(), r.name.as_deref()),
            (None, "namespaces", Some("default"))
        );
        let r = res("/api/v1/namespaces/default/status");
        assert_eq!(
            (r.resource.as_str(), r.subresource.as_deref()),
            ("namespaces", Some("status"))
        );
        let r = res("/apis/apps/v1/namespaces/a/deployments/d/status");
        assert_eq!(
            (r.group.as_str(), r.subresource.as_deref()),
            ("apps", Some("status"))
        );
        let r = res("/apis/fleet.cattle.io/v1alpha1/gitrepos");
        assert_eq!((r.namespace, r.name), (None, None));
        let r = res("/api/v1/watch/namespaces/a/pods");
        assert!(r.watch_prefix);
        assert_eq!(r.namespace.as_deref(), Some("a"));
        let r = res("/api/v1/namespaces//configmaps/x");
        assert_eq!(
            (
                r.namespace.as_deref(),
                r.resource.as_str(),
                r.name.as_deref()
            ),
            (Some(""), "configmaps", Some("x"))
        );
        let r = res("/apis/apps/v1/watch/namespaces//deployments");
        assert_eq!(r.namespace.as_deref(), Some(""));
        assert_eq!(parse("/apis//v1/deployments"), Route::NotFound);
        assert_eq!(parse("/api/v1/namespaces/a/configmaps//x"), Route::NotFound);
        assert_eq!(
            parse("/apis/apps/v1"),
            Route::GroupVersion("apps".into(), "v1".into())
        );
        assert_eq!(
            parse("/openapi/v3/apis/apps/v1"),
            Route::OpenApiGroupVersion("apps".into(), "v1".into())
        );
    }
}
