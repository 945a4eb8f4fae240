//! Writing BundleDeployments: server-side apply of the planned objects (each followed by its options
//! Secret when its Helm values moved there, see [`crate::bundle::values`]) and deletion of orphans, a
//! bounded number at a time (pipelined over the client's connection pool).

use fleet_api::BundleDeployment;
use fleet_target::plan::PlannedWrite;
use futures::{StreamExt, TryStreamExt, stream};
use kube::api::{Api, Patch, PatchParams};
use kube::{Client, ResourceExt};

use crate::bundle::BundleWork;
use crate::bundle::{read_values, values};
use crate::context::{Context, FIELD_MANAGER};
use crate::delete::delete;
use crate::error::Result;
use k8s_openapi::api::core::v1::Secret;

/// Writes in flight at once.
const PARALLEL_WRITES: usize = 32;

/// Writes the planned BundleDeployments of `work`, each built only when its turn comes (so that a
/// thousand planned objects are never held at once): its deployed Helm values read back when the plan
/// does not know them, its values moved to its options Secret, applied, the Secret applied after it, and
/// the stored object recorded in the index as soon as it is written.
pub async fn apply_all(ctx: &Context, work: &BundleWork) -> Result<()> {
    // By index: a closure taking `&PlannedWrite` would make the reconcile's future `Send` only for some
    // lifetimes, which the controller's boxed future cannot express.
    let mut written = stream::iter(0..work.writes.len())
        .map(|i| apply_one(ctx, work, &work.writes[i]))
        .buffer_unordered(PARALLEL_WRITES);
    while let Some(stored) = written.try_next().await? {
        let (_, change) = ctx.index.apply_deployment(stored, false);
        if let Some(change) = change {
            ctx.triggers.deployment_changed(&ctx.index, &change, false);
        }
    }
    Ok(())
}

/// Builds, prepares and applies one planned BundleDeployment (and its options Secret); returns it as
/// the API server stored it.
async fn apply_one(
    ctx: &Context,
    work: &BundleWork,
    write: &PlannedWrite,
) -> Result<BundleDeployment> {
    let mut bd = work.build(write);
    if write.deployed_values_unknown {
        read_values::keep_deployed_values(ctx, &mut bd).await?;
    }
    let moved = values::extract(&mut bd);
    if let Some(moved) = &moved {
        ctx.index.remember_values(&bd, moved.clone());
    }
    let api: Api<BundleDeployment> = Api::namespaced(ctx.client.clone(), &write.namespace);
    let stored = api
        .patch(
            &bd.name_any(),
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&bd),
        )
        .await?;
    drop(bd);
    if let Some(moved) = moved {
        // Written after the BundleDeployment, as Fleet does, to be owned by it; the agent retries until
        // it exists.
        let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &write.namespace);
        secrets
            .patch(
                &stored.name_any(),
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&values::secret(&stored, &moved)),
            )
            .await?;
    }
    Ok(stored)
}

/// Deletes the BundleDeployments `(namespace, name)`; ones already gone are fine.
pub async fn delete_all(client: &Client, deletes: Vec<(String, String)>) -> Result<()> {
    stream::iter(deletes.into_iter().map(|(namespace, name)| {
        let client = client.clone();
        async move {
            let api: Api<BundleDeployment> = Api::namespaced(client, &namespace);
            delete(&api, &name).await
        }
    }))
    .buffer_unordered(PARALLEL_WRITES)
    .try_collect::<Vec<()>>()
    .await?;
    Ok(())
}
