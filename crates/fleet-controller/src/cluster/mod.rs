//! The Cluster reconciler: gives each Cluster its cluster namespace (named as Fleet names it, annotated
//! with the Cluster, labelled managed) and records it in `status.namespace`, writes its membership
//! (`Joined`, `Healthy`, the automatic unreachable taint: [`crate::placement::membership`]), then
//! aggregates the BundleDeployments in that namespace into the Cluster's summary and `display`. A
//! deleted Cluster leaves the fleet through its finalizer ([`leave`]).

pub mod bootstrap;
pub mod config;
pub mod import;
pub mod leave;
pub mod names;
pub mod registration;
pub mod token;

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;

use fleet_api::{Cluster, labels};
use k8s_openapi::api::core::v1::Namespace;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::finalizer::Event;
use serde_json::json;

use crate::context::{Context, FIELD_MANAGER};
use crate::error::Result;
use crate::finalize::with_finalizer;
use crate::placement::membership::evaluate;
use crate::placement::{settings, unix_now};
use crate::status::{apply_status, conditions, set_ready, summary_state};

pub use names::{IMPORT_TOKEN_PREFIX, cluster_namespace};

/// A hash of what others change on a Cluster: its spec and metadata and the status fields the agent
/// writes. The fields the controller writes itself (`namespace`, `summary`, `resourceCounts`, `display`,
/// `conditions`) are left out, so that its own status writes do not wake it again (thousands of them at
/// scale).
pub fn outside_change(cluster: &Cluster) -> Option<u64> {
    let mut status = cluster.status.clone().unwrap_or_default();
    status.namespace = String::new();
    status.summary = Default::default();
    status.resource_counts = Default::default();
    status.display = Default::default();
    status.conditions = Vec::new();
    let mut hasher = DefaultHasher::new();
    crate::spec_or_metadata(cluster).hash(&mut hasher);
    serde_json::to_string(&status)
        .unwrap_or_default()
        .hash(&mut hasher);
    Some(hasher.finish())
}

/// Reconciles one Cluster.
pub fn reconcile(cluster: Arc<Cluster>, ctx: Arc<Context>) -> BoxFuture<'static, Result<Action>> {
    reconcile_inner(cluster, ctx).boxed()
}

async fn reconcile_inner(cluster: Arc<Cluster>, ctx: Arc<Context>) -> Result<Action> {
    ctx.index.wait_synced().await;
    // A leaving Cluster keeps its finalizer until its BundleDeployments are gone, and until the agent the
    // controller installed is removed (before its credentials are revoked).
    if cluster.metadata.deletion_timestamp.is_some()
        && cluster.finalizers().iter().any(|f| f == leave::FINALIZER)
    {
        if let Some(wait) = leave::drain(&cluster, &ctx).await? {
            return Ok(wait);
        }
        if cluster.finalizers().iter().any(|f| f == import::FINALIZER) {
            return Ok(Action::requeue(std::time::Duration::from_secs(1)));
        }
    }
    with_finalizer(&ctx, leave::FINALIZER, cluster, |event, ctx| async move {
        match event {
            Event::Apply(cluster) => apply(&cluster, &ctx).await,
            Event::Cleanup(cluster) => leave::leave(&cluster, &ctx).await,
        }
    })
    .await
}

/// Namespace, membership (conditions, automatic taint) and the bundle summary of a Cluster.
async fn apply(cluster: &Cluster, ctx: &Context) -> Result<Action> {
    let namespace = cluster.namespace().unwrap_or_default();
    let name = cluster.name_any();
    let cluster_ns = cluster_namespace(&namespace, &name);
    let previous = cluster.status.clone().unwrap_or_default();
    if previous.namespace != cluster_ns {
        let ns = json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": cluster_ns,
                "labels": {labels::MANAGED: "true"},
                "annotations": {labels::CLUSTER_NAMESPACE: namespace, labels::CLUSTER: name},
            },
        });
        Api::<Namespace>::all(ctx.client.clone())
            .patch(
                &cluster_ns,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&ns),
            )
            .await?;
    }
    let now_text = conditions::now();
    let membership = evaluate(cluster, &settings(ctx), unix_now(), &now_text);
    if let Some(taints) = &membership.taints {
        let api: Api<Cluster> = Api::namespaced(ctx.client.clone(), &namespace);
        let patch = json!({"spec": {"taints": taints}});
        api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
    }
    // Placed Bundles reschedule when the index's view of this cluster changed in a way placement reads.
    let key = fleet_target::model::ClusterKey::new(&namespace, &name);
    let view = ctx
        .index
        .read(|state| state.clusters.get(&key).map(|c| c.cluster.clone()));
    ctx.triggers
        .bundles(ctx.placement_decisions.cluster_seen(&key, view.as_ref()));
    let mut status = previous.clone();
    status.namespace = cluster_ns.clone();
    status.conditions = membership.conditions;
    // Read from the index's incremental per-namespace tally (was a scan of every BD).
    let (summary, resource_counts) = ctx.index.read(|state| {
        state
            .cluster_tally(&cluster_ns)
            .map(|t| (t.summary(), t.resource_counts().clone()))
            .unwrap_or_default()
    });
    // Fleet's cluster reconciler: the sum of the `resourceCounts` of the cluster's BundleDeployments.
    status.resource_counts = resource_counts;
    status.display.ready_bundles = format!("{}/{}", summary.ready, summary.desired_ready);
    let agent_seen = status.agent.as_ref().is_some_and(|a| a.last_seen.is_some());
    status.display.state = if agent_seen {
        summary_state(&summary)
    } else {
        "WaitCheckIn".to_string()
    };
    set_ready(&mut status.conditions, &summary, "Bundle", &now_text);
    status.summary = summary;
    if status != previous {
        let api: Api<Cluster> = Api::namespaced(ctx.client.clone(), &namespace);
        // Only the fields the controller owns: the agent writes `agent` (lastSeen) and its own fields.
        let owned = json!({
            "namespace": status.namespace,
            "summary": status.summary,
            "resourceCounts": status.resource_counts,
            "display": status.display,
            "conditions": status.conditions,
        });
        apply_status(&api, &name, &owned).await?;
    }
    Ok(match membership.requeue_after {
        Some(after) => Action::requeue(after),
        None => Action::await_change(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_named_as_fleet_names_it() {
        // Fleet's own example: sha256("fleet-local::local")[:12] = 1a3d67d0a899.
        assert_eq!(
            cluster_namespace("fleet-local", "local"),
            "cluster-fleet-local-local-1a3d67d0a899"
        );
    }
}
