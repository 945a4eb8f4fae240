//! The time limits of membership and placement ([`PlacementSettings`]), set once when the controller
//! starts. A leaf: the context holds them, [`super::settings`] reads them.

use std::time::Duration;

use fleet_target::placement::EligibilityConfig;

/// Time limits of membership and placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlacementSettings {
    /// A Cluster whose agent has not reported for this long is unhealthy, gets the
    /// [`UNREACHABLE_TAINT_KEY`] `NoSelect` taint and receives no new placements (KubeFleet: 5 min).
    pub heartbeat_timeout: Duration,
    /// An unhealthy cluster stays eligible for new placements this long.
    pub unhealthy_grace: Duration,
    /// How long a leaving Cluster waits for its BundleDeployments to go before its namespace is deleted
    /// anyway.
    pub leave_timeout: Duration,
}

impl Default for PlacementSettings {
    fn default() -> Self {
        PlacementSettings {
            heartbeat_timeout: Duration::from_secs(300),
            unhealthy_grace: Duration::from_secs(300),
            leave_timeout: Duration::from_secs(300),
        }
    }
}

impl PlacementSettings {
    /// The scheduler's eligibility limits.
    pub fn eligibility(&self) -> EligibilityConfig {
        EligibilityConfig {
            heartbeat_timeout_seconds: seconds(self.heartbeat_timeout),
            unhealthy_grace_seconds: seconds(self.unhealthy_grace),
        }
    }
}

fn seconds(duration: Duration) -> i64 {
    i64::try_from(duration.as_secs()).unwrap_or(i64::MAX)
}
