//! The BundleDeployments that exist, as planning reads them: the caller keeps them (the controller's
//! deployment store shares specs and labels between a Bundle's BundleDeployments) and lends them through
//! [`ExistingDeployment`]; [`deployment_state`] is the rollout's view of one.

use std::collections::BTreeMap;

use fleet_api::{BundleDeploymentSpec, BundleDeploymentStatus, find_condition};

use crate::rollout::DeploymentState;

/// What planning reads of an existing BundleDeployment.
pub trait ExistingDeployment {
    fn name(&self) -> &str;
    fn namespace(&self) -> &str;
    fn spec(&self) -> &BundleDeploymentSpec;
    fn status(&self) -> Option<&BundleDeploymentStatus>;
    fn annotations(&self) -> &BTreeMap<String, String>;
    /// The labels in key order.
    fn labels(&self) -> Box<dyn Iterator<Item = (&String, &String)> + '_>;
}

impl ExistingDeployment for fleet_api::BundleDeployment {
    fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }

    fn spec(&self) -> &BundleDeploymentSpec {
        &self.spec
    }

    fn status(&self) -> Option<&BundleDeploymentStatus> {
        self.status.as_ref()
    }

    fn annotations(&self) -> &BTreeMap<String, String> {
        static NONE: BTreeMap<String, String> = BTreeMap::new();
        self.metadata.annotations.as_ref().unwrap_or(&NONE)
    }

    fn labels(&self) -> Box<dyn Iterator<Item = (&String, &String)> + '_> {
        Box::new(self.metadata.labels.iter().flatten())
    }
}

/// The rollout's view of an existing BundleDeployment.
pub fn deployment_state(bd: &impl ExistingDeployment) -> DeploymentState {
    let status = bd.status();
    DeploymentState {
        deployment_id: bd.spec().deployment_id.clone(),
        staged_deployment_id: bd.spec().staged_deployment_id.clone(),
        applied_deployment_id: status
            .map(|s| s.applied_deployment_id.clone())
            .unwrap_or_default(),
        ready: status.is_some_and(|s| s.ready),
        failed: status
            .and_then(|s| find_condition(&s.conditions, "Deployed"))
            .is_some_and(|c| c.status == "False"),
    }
}
