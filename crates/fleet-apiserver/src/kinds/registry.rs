//! The served resource types: built-in kinds and CustomResourceDefinitions, each with its scope, names,
//! short names, printer columns, subresources and schema. Lookups by group/version/plural for routing.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use serde_json::Value;

/// One `additionalPrinterColumns` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct PrinterColumn {
    pub name: String,
    pub type_: String,
    pub json_path: String,
    pub description: String,
    pub priority: i64,
    pub format: String,
}

/// A resource served at one group/version.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceType {
    pub group: String,
    pub version: String,
    pub plural: String,
    pub singular: String,
    pub kind: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub verbs: Vec<&'static str>,
    pub status_subresource: bool,
    /// Subresources besides `status` (e.g. `token` on serviceaccounts).
    pub other_subresources: Vec<&'static str>,
    pub printer_columns: Vec<PrinterColumn>,
    /// `openAPIV3Schema` for CRDs; built-ins use `builtin_schema`.
    pub schema: Option<std::sync::Arc<Value>>,
    /// True for kinds that exist only as requests (reviews): created, never stored.
    pub virtual_only: bool,
    /// Set for resources defined by a CRD (the CRD's name).
    pub crd: Option<String>,
}

impl ResourceType {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The key objects of this resource are stored under, shared by all versions of a group/resource.
    pub fn storage_key(&self) -> String {
        format!("{}/{}", self.group, self.plural)
    }

    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }
}

/// Standard verbs of a stored resource.
pub const ALL_VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// All served resource types, keyed by (group, version, plural).
#[derive(Debug, Default)]
pub struct Registry {
    types: RwLock<BTreeMap<(String, String, String), Arc<ResourceType>>>,
}

impl Registry {
    /// A registry holding `types` (the built-in kinds).
    pub fn with_types(types: impl IntoIterator<Item = ResourceType>) -> Self {
        let registry = Registry::default();
        for rt in types {
            registry.insert(rt);
        }
        registry
    }

    pub fn insert(&self, rt: ResourceType) {
        let key = (rt.group.clone(), rt.version.clone(), rt.plural.clone());
        self.write().insert(key, Arc::new(rt));
    }

    /// Replaces every type defined by the CRD `crd_name` with `types`.
    pub fn replace_crd(&self, crd_name: &str, types: Vec<ResourceType>) {
        let mut map = self.write();
        map.retain(|_, rt| rt.crd.as_deref() != Some(crd_name));
        for rt in types {
            map.insert(
                (rt.group.clone(), rt.version.clone(), rt.plural.clone()),
                Arc::new(rt),
            );
        }
    }

    pub fn remove_crd(&self, crd_name: &str) {
        self.write()
            .retain(|_, rt| rt.crd.as_deref() != Some(crd_name));
    }

    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceType>> {
        self.read()
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// Group/versions served, in a stable order (built-in order first would need priorities; sorted is fine).
    pub fn group_versions(&self) -> BTreeMap<String, Vec<String>> {
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for rt in self.read().values() {
            let versions = out.entry(rt.group.clone()).or_default();
            if !versions.contains(&rt.version) {
                versions.push(rt.version.clone());
            }
        }
        for versions in out.values_mut() {
            versions.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
        }
        out
    }

    pub fn in_group_version(&self, group: &str, version: &str) -> Vec<Arc<ResourceType>> {
        self.read()
            .values()
            .filter(|rt| rt.group == group && rt.version == version)
            .cloned()
            .collect()
    }

    fn read(
        &self,
    ) -> std::sync::RwLockReadGuard<'_, BTreeMap<(String, String, String), Arc<ResourceType>>> {
        self.types
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write(
        &self,
    ) -> std::sync::RwLockWriteGuard<'_, BTreeMap<(String, String, String), Arc<ResourceType>>>
    {
        self.types
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// `apps/v1` → (`apps`, `v1`); `v1` → (``, `v1`).
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", api_version),
    }
}

/// Kubernetes version priority: GA > beta > alpha, higher numbers first.
pub fn version_priority(version: &str) -> (u8, u32, u32) {
    let rest = version.strip_prefix('v').unwrap_or(version);
    let major_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let major: u32 = rest[..major_end].parse().unwrap_or(0);
    let tail = &rest[major_end..];
    if tail.is_empty() {
        return (3, major, 0);
    }
    let (stage, minor) = if let Some(n) = tail.strip_prefix("beta") {
        (2, n)
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, n)
    } else {
        (0, "")
    };
    (stage, major, minor.parse().unwrap_or(0))
}
