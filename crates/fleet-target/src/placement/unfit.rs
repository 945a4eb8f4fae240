//! Why a cluster cannot take a placement: the typed outcome of the eligibility, required-affinity and
//! taint filters. Its text is the reason the Bundle's placement status shows for the cluster.

use thiserror::Error;

use crate::model::UnknownTaintEffect;

/// A filter's verdict against a cluster.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Unfit {
    #[error("cluster has left the fleet")]
    Left,
    #[error("cluster has not joined the fleet yet")]
    NotJoined,
    #[error("cluster has not sent a heartbeat yet")]
    NoHeartbeat,
    #[error("cluster's last heartbeat was {age}s ago (timeout {timeout}s)")]
    HeartbeatTimedOut { age: i64, timeout: i64 },
    #[error("cluster has not reported its health yet")]
    NoHealth,
    #[error("cluster has been unhealthy for {0}s")]
    Unhealthy(i64),
    #[error("cluster does not match with any of the required cluster affinity terms")]
    NoRequiredAffinity,
    /// The taint, shown as `key[=value]:effect`.
    #[error("taint {0} cannot be tolerated")]
    Untolerated(String),
    #[error(transparent)]
    UnknownTaintEffect(#[from] UnknownTaintEffect),
}
