//! Discovery documents: `/version`, `/api`, `/apis`, `/apis/{group}`, and the `APIResourceList` of each
//! group/version, built from the registry so that CRDs appear and disappear with their definitions.

use serde_json::{Value, json};

use crate::kinds::registry::{Registry, ResourceType};

pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "gitVersion": "v1.33.0-fleet",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64"
    })
}

/// `/api`.
pub fn core_versions() -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}]
    })
}

fn group_doc(group: &str, versions: &[String]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    json!({
        "name": group,
        "versions": versions,
        "preferredVersion": versions[0].clone(),
    })
}

/// `/apis`.
pub fn groups(registry: &Registry) -> Value {
    let groups: Vec<Value> = registry
        .group_versions()
        .iter()
        .filter(|(group, _)| !group.is_empty())
        .map(|(group, versions)| group_doc(group, versions))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/{group}`.
pub fn group(registry: &Registry, name: &str) -> Option<Value> {
    let versions = registry.group_versions().remove(name)?;
    let mut doc = group_doc(name, &versions);
    doc["kind"] = json!("APIGroup");
    doc["apiVersion"] = json!("v1");
    Some(doc)
}

fn resource_entry(rt: &ResourceType) -> Value {
    let mut entry = json!({
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": rt.verbs,
    });
    if !rt.short_names.is_empty() {
        entry["shortNames"] = json!(rt.short_names);
    }
    if !rt.categories.is_empty() {
        entry["categories"] = json!(rt.categories);
    }
    entry
}

fn subresource_entry(rt: &ResourceType, sub: &str, kind: &str, verbs: &[&str]) -> Value {
    json!({
        "name": format!("{}/{sub}", rt.plural),
        "singularName": "",
        "namespaced": rt.namespaced,
        "kind": kind,
        "verbs": verbs,
    })
}

/// `/api/v1` or `/apis/{group}/{version}`.
pub fn resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let types = registry.in_group_version(group, version);
    if types.is_empty() {
        return None;
    }
    let mut resources = Vec::new();
    for rt in &types {
        resources.push(resource_entry(rt));
        if rt.status_subresource {
            resources.push(subresource_entry(
                rt,
                "status",
                &rt.kind,
                &["get", "patch", "update"],
            ));
        }
        for sub in &rt.other_subresources {
            if *sub == "scale" {
                let mut entry = subresource_entry(rt, sub, "Scale", &["get", "patch", "update"]);
                entry["group"] = json!("autoscaling");
                entry["version"] = json!("v1");
                resources.push(entry);
                continue;
            }
            let kind = if *sub == "token" {
                "TokenRequest"
            } else {
                rt.kind.as_str()
            };
            resources.push(subresource_entry(rt, sub, kind, &["create"]));
        }
    }
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }))
}
