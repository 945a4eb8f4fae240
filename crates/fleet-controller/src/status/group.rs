//! ClusterGroup status, as Fleet's ClusterGroup controller writes it: over the group's member clusters
//! (sorted), `clusterCount`, `nonReadyClusterCount` and the first ten `nonReadyClusters` (a cluster is
//! not ready while any of its BundleDeployments is not), the summed BundleDeployment `summary` and
//! `resourceCounts`,
//! `display` (ready clusters, ready bundles, state) and the Ready condition. Read from the index's
//! per-cluster tallies, so it costs O(clusters in the group).

use std::sync::Arc;

use fleet_api::{BundleSummary, ClusterGroup, ClusterGroupStatus};
use fleet_target::model::ClusterKey;
use futures::FutureExt;
use futures::future::BoxFuture;
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::controller::Action;

use crate::context::Context;
use crate::error::Result;
use crate::index::IndexState;
use crate::index::summary::{MAX_NON_READY, summary_state};
use crate::status::apply::apply_status;
use crate::status::conditions::{self, set_ready};

/// Reconciles one ClusterGroup's status.
pub fn reconcile(
    group: Arc<ClusterGroup>,
    ctx: Arc<Context>,
) -> BoxFuture<'static, Result<Action>> {
    reconcile_inner(group, ctx).boxed()
}

async fn reconcile_inner(group: Arc<ClusterGroup>, ctx: Arc<Context>) -> Result<Action> {
    ctx.index.wait_synced().await;
    let namespace = group.namespace().unwrap_or_default();
    let name = group.name_any();
    let previous = group.status.clone().unwrap_or_default();
    let key = ClusterKey::new(&namespace, &name);
    let status = ctx
        .index
        .read(|state| group_status(state, &key, &previous, &conditions::now()));
    if status != previous {
        let api: Api<ClusterGroup> = Api::namespaced(ctx.client.clone(), &namespace);
        apply_status(&api, &name, &status).await?;
    }
    Ok(Action::await_change())
}

/// The status of group `key` from the index, starting from `previous` (whose conditions keep their times).
pub fn group_status(
    state: &IndexState,
    key: &ClusterKey,
    previous: &ClusterGroupStatus,
    now: &str,
) -> ClusterGroupStatus {
    let mut members: Vec<ClusterKey> = state
        .clusters
        .group_members(key)
        .into_iter()
        .map(|member| member.cluster.key())
        .collect();
    members.sort();
    let mut status = ClusterGroupStatus {
        conditions: previous.conditions.clone(),
        cluster_count: members.len() as i64,
        ..ClusterGroupStatus::default()
    };
    let mut summary = BundleSummary::default();
    for member in &members {
        let tally = state
            .cluster_namespaces
            .get(member)
            .and_then(|namespace| state.cluster_tally(namespace));
        let Some(tally) = tally else {
            continue;
        };
        if !tally.all_ready() {
            status.non_ready_cluster_count += 1;
            if status.non_ready_clusters.len() < MAX_NON_READY {
                status.non_ready_clusters.push(member.name.clone());
            }
        }
        add(&mut summary, &tally.summary());
        // Fleet's ClusterGroup reconciler sums its clusters' `resourceCounts`.
        crate::index::resources::add_counts(&mut status.resource_counts, tally.resource_counts());
    }
    status.display.ready_clusters = format!(
        "{}/{}",
        status.cluster_count - status.non_ready_cluster_count,
        status.cluster_count
    );
    status.display.ready_bundles = format!("{}/{}", summary.ready, summary.desired_ready);
    status.display.state = summary_state(&summary);
    set_ready(&mut status.conditions, &summary, "Bundle", now);
    status.summary = summary;
    status
}

/// Adds one cluster's summary to the group's (the non-ready list stays capped).
fn add(total: &mut BundleSummary, one: &BundleSummary) {
    total.desired_ready += one.desired_ready;
    total.ready += one.ready;
    total.not_ready += one.not_ready;
    total.wait_applied += one.wait_applied;
    total.err_applied += one.err_applied;
    total.out_of_sync += one.out_of_sync;
    total.pending += one.pending;
    total.modified += one.modified;
    let room = MAX_NON_READY.saturating_sub(total.non_ready_resources.len());
    total
        .non_ready_resources
        .extend(one.non_ready_resources.iter().take(room).cloned());
}
