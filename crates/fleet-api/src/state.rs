//! `BundleState`: the state of a BundleDeployment, how it is derived from the BundleDeployment
//! ([`deployment_state`], Fleet's `GetDeploymentState`, shared by the agent and the controller), and
//! Fleet's ranking of states.
//!
//! Summaries report the highest-ranked state: ErrApplied 7 > WaitApplied 6 > Modified 5 >
//! OutOfSync 4 > Pending 3 > NotReady 2 > Ready 1.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::bundledeployment::{BundleDeployment, BundleDeploymentSpec, BundleDeploymentStatus};
use crate::condition::find_condition;

/// State of a bundle on a cluster, as Fleet reports it in summaries and `dependsOn`.
/// Unknown strings are kept verbatim in [`BundleState::Other`] (rank 0) so that objects
/// written by newer Fleet versions still round-trip.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BundleState {
    /// Deployed, and all resources are ready.
    Ready,
    /// Deployed, but some resources are not ready.
    NotReady,
    /// Synced to the cluster, waiting to be deployed.
    WaitApplied,
    /// Synced to the cluster, but deploying failed.
    ErrApplied,
    /// Staged by the controller, not yet picked up by the agent (or paused).
    OutOfSync,
    /// Being processed by the controller; no BundleDeployment yet.
    Pending,
    /// Deployed and ready, but live objects differ from the bundle.
    Modified,
    /// A state this version does not know.
    Other(String),
}

impl BundleState {
    /// The seven known states, highest rank first.
    pub const KNOWN: [BundleState; 7] = [
        BundleState::ErrApplied,
        BundleState::WaitApplied,
        BundleState::Modified,
        BundleState::OutOfSync,
        BundleState::Pending,
        BundleState::NotReady,
        BundleState::Ready,
    ];

    /// Fleet's `StateRank`; 0 for unknown states.
    pub fn rank(&self) -> u8 {
        match self {
            BundleState::ErrApplied => 7,
            BundleState::WaitApplied => 6,
            BundleState::Modified => 5,
            BundleState::OutOfSync => 4,
            BundleState::Pending => 3,
            BundleState::NotReady => 2,
            BundleState::Ready => 1,
            BundleState::Other(_) => 0,
        }
    }

    /// The state's name as Fleet spells it.
    pub fn as_str(&self) -> &str {
        match self {
            BundleState::Ready => "Ready",
            BundleState::NotReady => "NotReady",
            BundleState::WaitApplied => "WaitApplied",
            BundleState::ErrApplied => "ErrApplied",
            BundleState::OutOfSync => "OutOfSync",
            BundleState::Pending => "Pending",
            BundleState::Modified => "Modified",
            BundleState::Other(name) => name,
        }
    }

    /// `true` for one of Fleet's seven states (what `dependsOn.acceptedStates` may name).
    pub fn is_known(&self) -> bool {
        !matches!(self, BundleState::Other(_))
    }

    /// The higher-ranked of two states (the first one on a tie).
    pub fn max_rank(self, other: BundleState) -> BundleState {
        if other.rank() > self.rank() {
            other
        } else {
            self
        }
    }
}

impl From<&str> for BundleState {
    fn from(name: &str) -> Self {
        match name {
            "Ready" => BundleState::Ready,
            "NotReady" => BundleState::NotReady,
            "WaitApplied" => BundleState::WaitApplied,
            "ErrApplied" => BundleState::ErrApplied,
            "OutOfSync" => BundleState::OutOfSync,
            "Pending" => BundleState::Pending,
            "Modified" => BundleState::Modified,
            other => BundleState::Other(other.to_string()),
        }
    }
}

impl fmt::Display for BundleState {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

impl Serialize for BundleState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for BundleState {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = Cow::<'de, str>::deserialize(deserializer)?;
        Ok(BundleState::from(name.as_ref()))
    }
}

impl JsonSchema for BundleState {
    fn schema_name() -> Cow<'static, str> {
        "BundleState".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string" })
    }
}

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

    #[test]
    fn ranks_match_fleet() {
        let ranks: Vec<u8> = BundleState::KNOWN.iter().map(BundleState::rank).collect();
        assert_eq!(ranks, [7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(BundleState::from("Bogus").rank(), 0);
    }

    #[test]
    fn names_round_trip() {
        for state in BundleState::KNOWN {
            assert_eq!(BundleState::from(state.as_str()), state);
            let json = serde_json::to_string(&state).unwrap();
            assert_eq!(serde_json::from_str::<BundleState>(&json).unwrap(), state);
        }
        let other: BundleState = serde_json::from_str("\"WaitingForDependency\"").unwrap();
        assert_eq!(other, BundleState::Other("WaitingForDependency".into()));
        assert_eq!(
            serde_json::to_string(&other).unwrap(),
            "\"WaitingForDependency\""
        );
    }

    #[test]
    fn max_rank_prefers_higher() {
        assert_eq!(
            BundleState::Ready.max_rank(BundleState::Modified),
            BundleState::Modified
        );
        assert_eq!(
            BundleState::ErrApplied.max_rank(BundleState::Pending),
            BundleState::ErrApplied
        );
    }
}
