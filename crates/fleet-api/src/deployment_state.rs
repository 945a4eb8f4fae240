//! How a BundleDeployment's state is derived from it: [`deployment_state`], Fleet's `GetDeploymentState`,
//! shared by the agent and the controller.

use crate::bundledeployment::{BundleDeployment, BundleDeploymentSpec, BundleDeploymentStatus};
use crate::condition::find_condition;
use crate::state::BundleState;

/// Fleet's `GetDeploymentState` for one BundleDeployment:
/// 1. the applied deploymentID is not the current one → `ErrApplied` when the `Deployed` condition is
///    `False`, else `WaitApplied` (an `Unknown` or missing condition is still waiting);
/// 2. not ready → `NotReady`;
/// 3. the deploymentID is not the staged one → `OutOfSync` (an empty staged ID counts as different);
/// 4. modified → `Modified`;
/// 5. otherwise `Ready`.
pub fn deployment_state(
    spec: &BundleDeploymentSpec,
    status: &BundleDeploymentStatus,
) -> BundleState {
    if status.applied_deployment_id != spec.deployment_id {
        let failed =
            find_condition(&status.conditions, "Deployed").is_some_and(|c| c.status == "False");
        return if failed {
            BundleState::ErrApplied
        } else {
            BundleState::WaitApplied
        };
    }
    if !status.ready {
        return BundleState::NotReady;
    }
    if spec.deployment_id != spec.staged_deployment_id {
        return BundleState::OutOfSync;
    }
    if !status.non_modified {
        return BundleState::Modified;
    }
    BundleState::Ready
}

impl BundleDeployment {
    /// This BundleDeployment's state ([`deployment_state`]; no status yet is an empty status).
    pub fn state(&self) -> BundleState {
        match &self.status {
            Some(status) => deployment_state(&self.spec, status),
            None => deployment_state(&self.spec, &BundleDeploymentStatus::default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::condition::Condition;

    fn state(
        (deployment_id, staged, applied): (&str, &str, &str),
        deployed: Option<&str>,
        ready: bool,
        non_modified: bool,
    ) -> BundleState {
        let spec = BundleDeploymentSpec {
            deployment_id: deployment_id.into(),
            staged_deployment_id: staged.into(),
            ..Default::default()
        };
        let status = BundleDeploymentStatus {
            applied_deployment_id: applied.into(),
            ready,
            non_modified,
            conditions: deployed
                .map(|status| Condition {
                    type_: "Deployed".into(),
                    status: status.into(),
                    ..Default::default()
                })
                .into_iter()
                .collect(),
            ..Default::default()
        };
        deployment_state(&spec, &status)
    }

    #[test]
    fn deployment_state_follows_fleet() {
        let err = state(("b", "b", "a"), Some("False"), true, true);
        assert_eq!(err, BundleState::ErrApplied);
        let unknown = state(("b", "b", "a"), Some("Unknown"), true, true);
        assert_eq!(unknown, BundleState::WaitApplied, "only False is an error");
        assert_eq!(
            state(("b", "b", "a"), None, true, true),
            BundleState::WaitApplied
        );
        assert_eq!(
            state(("a", "a", "a"), Some("True"), false, false),
            BundleState::NotReady
        );
        assert_eq!(
            state(("a", "b", "a"), Some("True"), true, false),
            BundleState::OutOfSync
        );
        let empty_staged = state(("a", "", "a"), Some("True"), true, true);
        assert_eq!(empty_staged, BundleState::OutOfSync, "as in Fleet");
        assert_eq!(
            state(("a", "a", "a"), Some("True"), true, false),
            BundleState::Modified
        );
        assert_eq!(
            state(("a", "a", "a"), Some("True"), true, true),
            BundleState::Ready
        );
        let spec = BundleDeploymentSpec {
            deployment_id: "a".into(),
            staged_deployment_id: "a".into(),
            ..Default::default()
        };
        let fresh = BundleDeployment::new("x", spec);
        assert_eq!(fresh.state(), BundleState::WaitApplied, "no status yet");
    }
}
