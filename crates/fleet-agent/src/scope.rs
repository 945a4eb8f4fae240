//! The agent scope: what keeps two agents on one cluster (`cattle-fleet-system` registered to a parent
//! controller, `cattle-fleet-local-system` to the cluster's own) apart. It is part of the field manager,
//! the object-set ID and hash label on every applied object, and the inventory's name and labels, so neither
//! agent prunes, reverts or reports the other's objects.

use fleet_bundle::names::safe_concat_name;
use sha2::{Digest, Sha256};

/// Annotation carrying the object-set ID on every applied object (Fleet's `objectset.rio.cattle.io/id`).
pub const SET_ID_ANNOTATION: &str = "objectset.rio.cattle.io/id";
/// Label carrying the object-set hash on every applied object (Fleet's `objectset.rio.cattle.io/hash`).
pub const SET_HASH_LABEL: &str = "objectset.rio.cattle.io/hash";
/// Label on inventories and applied objects naming the agent scope that owns them.
pub const SCOPE_LABEL: &str = "fleet.cattle.io/agent-scope";

/// One agent's identity on the downstream cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// The namespace the agent runs in and keeps its inventories in.
    pub agent_namespace: String,
    /// Fleet's `AGENT_SCOPE`; empty for the default agent (backwards compatible names).
    pub scope: String,
}

impl Scope {
    /// A scope; `scope` may be empty.
    pub fn new(agent_namespace: impl Into<String>, scope: impl Into<String>) -> Self {
        Scope {
            agent_namespace: agent_namespace.into(),
            scope: scope.into(),
        }
    }

    /// The server-side-apply field manager of this agent.
    pub fn field_manager(&self) -> String {
        if self.scope.is_empty() {
            "fleet-agent".to_string()
        } else {
            format!("fleet-agent-{}", self.scope)
        }
    }

    /// The label value of [`SCOPE_LABEL`] (`default` for the unscoped agent).
    pub fn label_value(&self) -> &str {
        if self.scope.is_empty() {
            "default"
        } else {
            &self.scope
        }
    }

    /// Fleet's object-set ID of a BundleDeployment: `SafeConcatName("default", bd[, scope])`.
    pub fn set_id(&self, bundle_deployment: &str) -> String {
        if self.scope.is_empty() {
            safe_concat_name(&["default", bundle_deployment])
        } else {
            safe_concat_name(&["default", bundle_deployment, &self.scope])
        }
    }

    /// The hash label value for a set ID. Fleet uses sha1; we use the first 40 hex digits of sha256
    /// (same length, and only our own agent reads it).
    pub fn set_hash(set_id: &str) -> String {
        hex::encode(Sha256::digest(set_id.as_bytes()))[..40].to_string()
    }

    /// The name of the inventory ConfigMap of a BundleDeployment (in [`Scope::agent_namespace`]).
    pub fn inventory_name(&self, bundle_deployment: &str) -> String {
        safe_concat_name(&["fleet-inventory", &self.set_id(bundle_deployment)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_differ_in_every_name() {
        let parent = Scope::new("cattle-fleet-system", "");
        let local = Scope::new("cattle-fleet-local-system", "cattle-fleet-local-system");
        assert_eq!(parent.field_manager(), "fleet-agent");
        assert_eq!(
            local.field_manager(),
            "fleet-agent-cattle-fleet-local-system"
        );
        assert_eq!(parent.set_id("app"), "default-app");
        assert_eq!(local.set_id("app"), "default-app-cattle-fleet-local-system");
        assert_ne!(
            Scope::set_hash(&parent.set_id("app")),
            Scope::set_hash(&local.set_id("app"))
        );
        assert_ne!(parent.inventory_name("app"), local.inventory_name("app"));
        assert_eq!(Scope::set_hash("default-app").len(), 40);
    }
}
