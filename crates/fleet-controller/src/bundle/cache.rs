//! What the Bundle reconciler keeps between reconciles: fleet-target's kept targeting results
//! ([`fleet_target::plan::TargetingCache`]), the GitRepoRestrictions' namespace selectors targeting
//! reads ([`NamespaceSelectors`], fed by the restriction watch, [`crate::gitrepo::restrict::watch`]), and
//! the values Secrets the GitRepo reconciler wrote ahead of their Bundle ([`WrittenAhead`]). A leaf: the
//! context holds these, the reconcilers fill and read them.

use std::collections::HashMap;
use std::sync::Mutex;

use fleet_api::{Bundle, labels};
use fleet_target::plan;
use fleet_target::selector::LabelSelector;
use kube::ResourceExt;

use crate::index::BundleKey;
use crate::sync::lock;

/// Kept targeting results, by Bundle, and the restriction selectors targeting reads.
#[derive(Default)]
pub struct TargetingCache {
    pub kept: plan::TargetingCache,
    /// The GitRepoRestrictions' `allowedTargetNamespaceSelector` of each namespace.
    pub namespace_selectors: NamespaceSelectors,
}

impl TargetingCache {
    /// Forgets a deleted Bundle.
    pub fn forget(&self, key: &BundleKey) {
        self.kept.forget(key);
    }
}

/// The merged `allowedTargetNamespaceSelector` of each namespace's GitRepoRestrictions (namespaces without
/// one are absent), as [`watch`] last saw them.
#[derive(Debug, Default)]
pub struct NamespaceSelectors(Mutex<HashMap<String, LabelSelector>>);

impl NamespaceSelectors {
    /// The selector Fleet's targeting puts on the options of `bundle`'s targets: its namespace's, when the
    /// Bundle carries the `fleet.cattle.io/repo-name` label.
    pub fn for_bundle(&self, bundle: &Bundle) -> Option<LabelSelector> {
        let from_gitrepo = bundle
            .labels()
            .get(labels::REPO_NAME)
            .is_some_and(|repo| !repo.is_empty());
        if !from_gitrepo {
            return None;
        }
        lock(&self.0)
            .get(&bundle.namespace().unwrap_or_default())
            .cloned()
    }

    /// Sets the selector of `namespace`; whether it changed.
    pub fn set(&self, namespace: &str, selector: Option<LabelSelector>) -> bool {
        let mut selectors = lock(&self.0);
        let previous = match &selector {
            Some(selector) => selectors.insert(namespace.to_string(), selector.clone()),
            None => selectors.remove(namespace),
        };
        previous != selector
    }
}

/// Values Secrets this process wrote ahead of their Bundle (a GitRepo's read writes the Secret first, so that
/// the new Bundle's reconcile finds it), by (namespace, name), with the `valuesHash` the Bundle will carry.
#[derive(Debug, Default)]
pub struct WrittenAhead(Mutex<HashMap<(String, String), String>>);

/// One values Secret written ahead of its Bundle, until dropped (after the Bundle write, or its failure).
pub struct AheadOfBundle<'a> {
    ahead: &'a WrittenAhead,
    key: (String, String),
}

impl WrittenAhead {
    /// Records that the values Secret of Bundle `namespace/name` now holds values hashed `hash`, and its
    /// Bundle is being written.
    pub fn begin(&self, namespace: &str, name: &str, hash: &str) -> AheadOfBundle<'_> {
        let key = (namespace.to_string(), name.to_string());
        lock(&self.0).insert(key.clone(), hash.to_string());
        AheadOfBundle { ahead: self, key }
    }

    pub fn holds(&self, namespace: &str, name: &str, hash: &str) -> bool {
        lock(&self.0)
            .get(&(namespace.to_string(), name.to_string()))
            .is_some_and(|ahead| ahead == hash)
    }
}

impl Drop for AheadOfBundle<'_> {
    fn drop(&mut self) {
        lock(&self.ahead.0).remove(&self.key);
    }
}
