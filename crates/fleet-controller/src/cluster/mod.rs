//! The Cluster reconciler: gives each Cluster its cluster namespace (named as Fleet names it, annotated
//! with the Cluster, labelled managed) and records it in `status.namespace`, then aggregates the
//! BundleDeployments in that namespace into the Cluster's summary and `display`.

pub mod bootstrap;
pub mod registration;
pub mod token;

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;

use fleet_api::{Cluster, labels};
use fleet_bundle::names::{key_hash, safe_concat_name};
use k8s_openapi::api::core::v1::Namespace;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use serde_json::json;

use crate::context::{Context, FIELD_MANAGER};
use crate::error::Result;
use crate::status::{
    apply_status, conditions, deployment_state, increment, ready_message, summary_state,
};

/// Fleet's cluster namespace name: `cluster-<ns>-<name>-<KeyHash(ns::name)>`, cut as SafeConcatName cuts.
pub fn cluster_namespace(namespace: &str, name: &str) -> String {
    safe_concat_name(&[
        "cluster",
        namespace,
        name,
        &key_hash(&format!("{namespace}::{name}")),
    ])
}

/// Reconciles one Cluster.
pub fn reconcile(cluster: Arc<Cluster>, ctx: Arc<Context>) -> BoxFuture<'static, Result<Action>> {
    reconcile_inner(cluster, ctx).boxed()
}

async fn reconcile_inner(cluster: Arc<Cluster>, ctx: Arc<Context>) -> Result<Action> {
    ctx.index.wait_synced().await;
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
    let mut status = previous.clone();
    status.namespace = cluster_ns.clone();
    let deployments = ctx.index.read(|state| {
        let mut list: Vec<_> = state
            .deployments
            .values()
            .flat_map(|m| m.values())
            .filter(|bd| bd.namespace().as_deref() == Some(cluster_ns.as_str()))
            .cloned()
            .collect();
        list.sort_by_key(|bd| bd.name_any());
        list
    });
    let mut summary = fleet_api::BundleSummary::default();
    for bd in &deployments {
        let name = format!("{}/{}", bd.namespace().unwrap_or_default(), bd.name_any());
        increment(&mut summary, &name, &deployment_state(Some(bd)), Some(bd));
    }
    status.display.ready_bundles = format!("{}/{}", summary.ready, summary.desired_ready);
    let agent_seen = status.agent.as_ref().is_some_and(|a| a.last_seen.is_some());
    status.display.state = if agent_seen {
        summary_state(&summary)
    } else {
        "WaitCheckIn".to_string()
    };
    let message = ready_message(&summary, "Bundle");
    conditions::set(
        &mut status.conditions,
        "Ready",
        message.is_empty(),
        "",
        &message,
        &conditions::now(),
    );
    status.summary = summary;
    if status != previous {
        let api: Api<Cluster> = Api::namespaced(ctx.client.clone(), &namespace);
        // Only the fields the controller owns: the agent writes `agent` (lastSeen) and its own fields.
        let owned = json!({
            "namespace": status.namespace,
            "summary": status.summary,
            "display": status.display,
            "conditions": status.conditions,
        });
        apply_status(&api, &name, &owned).await?;
    }
    Ok(Action::await_change())
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
