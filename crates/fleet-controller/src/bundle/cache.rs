//! What the Bundle reconciler keeps between plans: fleet-target's kept targeting results
//! ([`fleet_target::plan::TargetingCache`]) and the GitRepoRestrictions' namespace selectors targeting
//! reads ([`NamespaceSelectors`], fed by the restriction watch).

use fleet_target::plan;

use crate::gitrepo::restrict::NamespaceSelectors;
use crate::index::BundleKey;

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
