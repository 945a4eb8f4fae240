//! A Bundle's status from its targets and rollout: summary over targets (a target without a
//! BundleDeployment is Pending), rollout counters and partitions, `display`, and the Ready condition
//! with Fleet's ready message (or the error that stopped targeting).

use std::sync::Arc;

use fleet_api::{BundleDisplay, BundleStatus, BundleSummary, PartitionStatus};
use fleet_target::model::ClusterKey;
use fleet_target::rollout::RolloutStatus;

use crate::index::StoredDeployment;
use crate::index::summary::{deployment_state, increment, summary_state};
use crate::status::conditions::{self, set_ready};

/// The new status, starting from `previous` (whose conditions keep their times). The rollout's partitions
/// list their members as indices into `targets`.
pub fn bundle_status(
    previous: &BundleStatus,
    targets: &[(ClusterKey, Option<Arc<StoredDeployment>>)],
    rollout: &RolloutStatus,
    generation: i64,
    error: Option<&str>,
    now: &str,
) -> BundleStatus {
    let summary = summarize(targets.iter());
    let mut status = BundleStatus {
        conditions: previous.conditions.clone(),
        newly_created: rollout.newly_created,
        unavailable: rollout.unavailable,
        unavailable_partitions: rollout.unavailable_partitions,
        max_unavailable: rollout.max_unavailable,
        max_unavailable_partitions: rollout.max_unavailable_partitions,
        partitions: rollout
            .partitions
            .iter()
            .map(|p| PartitionStatus {
                name: p.name.clone(),
                count: p.count as i64,
                max_unavailable: p.max_unavailable,
                unavailable: p.unavailable,
                // Fleet's `appendPartition`: the partition's Summary counts its targets the way the
                // bundle's summary counts all of them.
                summary: summarize(p.members.iter().map(|&i| &targets[i])),
            })
            .collect(),
        display: BundleDisplay {
            ready_clusters: format!("{}/{}", summary.ready, summary.desired_ready),
            state: summary_state(&summary),
        },
        observed_generation: generation,
        ..BundleStatus::default()
    };
    match error {
        Some(error) => conditions::set(&mut status.conditions, "Ready", false, "Error", error, now),
        None => {
            set_ready(&mut status.conditions, &summary, "Cluster", now);
        }
    }
    status.summary = summary;
    status
}

/// Counts targets per state (a target without a BundleDeployment is Pending).
fn summarize<'a>(
    targets: impl Iterator<Item = &'a (ClusterKey, Option<Arc<StoredDeployment>>)>,
) -> BundleSummary {
    let mut summary = BundleSummary::default();
    for (cluster, bd) in targets {
        let bd = bd.as_deref();
        increment(&mut summary, cluster, &deployment_state(bd), bd);
    }
    summary
}
