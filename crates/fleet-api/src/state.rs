//! `BundleState`: the state of a BundleDeployment (derived from it in [`crate::deployment_state`]) and
//! Fleet's ranking of states.
//!
//! Summaries report the highest-ranked state: ErrApplied 7 > WaitApplied 6 > Modified 5 >
//! OutOfSync 4 > Pending 3 > NotReady 2 > Ready 1.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

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

#[cfg(test)]
mod tests {
    use super::*;

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
