//! Leaving the fleet: deleting a Cluster. Its finalizer [`FINALIZER`] holds the Cluster until the
//! BundleDeployments in its namespace are gone — each annotated `fleet.cattle.io/uninstall: orphan`
//! first when the Cluster carries [`LEAVE_ANNOTATION`]` = orphan`, so its agent leaves the applied
//! objects in place (KubeFleet's default) instead of uninstalling them — then deletes the cluster
//! namespace (with the registration ServiceAccounts and RoleBindings in it), the ClusterRegistrations of
//! the cluster (their Roles and RoleBindings follow by owner) and their grant Secrets and
//! ClusterRoleBindings (cluster-scoped or in another namespace, so deleted explicitly), and the import token
//! of a Cluster whose agent the controller installed, with its grants. While it
//! leaves, the Bundle reconciler plans nothing for it ([`crate::bundle::target`]).

use std::time::Duration;

use fleet_api::{BundleDeployment, Cluster, ClusterRegistration, ClusterRegistrationToken};
use k8s_openapi::api::core::v1::Namespace;
use kube::ResourceExt;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use serde_json::json;

use crate::cluster::registration::remove_grants;
use crate::context::Context;
use crate::delete::{delete, ignore_missing};
use crate::error::Result;

/// The Cluster finalizer that runs the leave.
pub const FINALIZER: &str = "fleet.cattle.io/cluster-finalizer";
/// Cluster annotation choosing what leaving does to the applied objects: `orphan` keeps them.
pub const LEAVE_ANNOTATION: &str = "fleet.cattle.io/on-leave";
/// [`LEAVE_ANNOTATION`] value that keeps the applied objects.
pub const ORPHAN: &str = "orphan";
/// BundleDeployment annotation telling the agent to forget, not uninstall, when it is deleted.
pub const UNINSTALL_ANNOTATION: &str = "fleet.cattle.io/uninstall";

/// How often a leave checks whether the BundleDeployments are gone.
const RECHECK: Duration = Duration::from_secs(1);

/// Whether `object` carries `annotation: orphan`.
fn says_orphan(object: &impl ResourceExt, annotation: &str) -> bool {
    object.annotations().get(annotation).map(String::as_str) == Some(ORPHAN)
}

/// What both steps of a leave work on: the Cluster's namespace and name, its cluster namespace, and
/// whether it leaves its applied objects in place.
struct Leaving {
    namespace: String,
    name: String,
    cluster_ns: String,
    orphan: bool,
}

impl Leaving {
    fn of(cluster: &Cluster) -> Self {
        let namespace = cluster.namespace().unwrap_or_default();
        let name = cluster.name_any();
        Leaving {
            cluster_ns: crate::cluster::names::cluster_namespace(&namespace, &name),
            orphan: says_orphan(cluster, LEAVE_ANNOTATION),
            namespace,
            name,
        }
    }
}

/// First step of a leave, before the finalizer runs [`leave`]: deletes the Cluster's BundleDeployments
/// (annotated orphan first when asked); `Some(requeue)` while they are still there and the leave timeout
/// has not run out.
pub async fn drain(cluster: &Cluster, ctx: &Context) -> Result<Option<Action>> {
    let leaving = Leaving::of(cluster);
    let deployments: Api<BundleDeployment> =
        Api::namespaced(ctx.client.clone(), &leaving.cluster_ns);
    let remaining = deployments
        .list_metadata(&ListParams::default())
        .await?
        .items;
    for bd in &remaining {
        let bd_name = bd.name_any();
        if leaving.orphan && !says_orphan(bd, UNINSTALL_ANNOTATION) {
            let patch = json!({"metadata": {"annotations": {UNINSTALL_ANNOTATION: ORPHAN}}});
            ignore_missing(
                deployments
                    .patch(&bd_name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await,
            )?;
        }
        if bd.metadata.deletion_timestamp.is_none() {
            delete(&deployments, &bd_name).await?;
        }
    }
    let waited = cluster
        .metadata
        .deletion_timestamp
        .as_ref()
        .map(|t| crate::placement::unix_now() - fleet_target::model::unix(t))
        .unwrap_or_default();
    let still_there = !deployments
        .list_metadata(&ListParams::default().limit(1))
        .await?
        .items
        .is_empty();
    let timeout =
        i64::try_from(crate::placement::settings(ctx).leave_timeout.as_secs()).unwrap_or(i64::MAX);
    Ok((still_there && waited < timeout).then(|| Action::requeue(RECHECK)))
}

/// The rest of a leave, run by the finalizer once [`drain`] is done: deletes the cluster namespace, the
/// grant Secrets and the ClusterRegistrations of the cluster.
pub async fn leave(cluster: &Cluster, ctx: &Context) -> Result<Action> {
    let Leaving {
        namespace,
        name,
        cluster_ns,
        orphan,
    } = Leaving::of(cluster);
    delete(&Api::<Namespace>::all(ctx.client.clone()), &cluster_ns).await?;
    remove_registrations(ctx, &namespace, &name).await?;
    remove_import_token(ctx, &namespace, &name).await?;
    tracing::info!(cluster = %format!("{namespace}/{name}"), orphan, "cluster left the fleet");
    Ok(Action::await_change())
}

/// Deletes the import token of a Cluster the controller installed the agent of, with its grants in the
/// system registration namespace (its objects in the Cluster's namespace go with it by owner).
async fn remove_import_token(ctx: &Context, namespace: &str, name: &str) -> Result<()> {
    let tokens: Api<ClusterRegistrationToken> = Api::namespaced(ctx.client.clone(), namespace);
    let token_name = fleet_bundle::names::safe_concat_name(&[&format!(
        "{}{name}",
        crate::cluster::names::IMPORT_TOKEN_PREFIX
    )]);
    let Some(token) = tokens.get_opt(&token_name).await? else {
        return Ok(());
    };
    crate::cluster::token::remove_grants(&ctx.client, &token).await?;
    delete(&tokens, &token_name).await
}

/// Deletes the ClusterRegistrations that resolved to the cluster with their grants (grant Secrets and
/// ClusterRoleBindings, which no ownerReference can take with the registration).
async fn remove_registrations(ctx: &Context, namespace: &str, name: &str) -> Result<()> {
    let registrations: Api<ClusterRegistration> = Api::namespaced(ctx.client.clone(), namespace);
    for registration in registrations.list(&ListParams::default()).await?.items {
        if registration
            .status
            .as_ref()
            .map(|s| s.cluster_name.as_str())
            != Some(name)
        {
            continue;
        }
        remove_grants(&ctx.client, namespace, &registration.name_any()).await?;
        delete(&registrations, &registration.name_any()).await?;
    }
    Ok(())
}
