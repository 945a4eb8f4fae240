//! Writing BundleDeployments: server-side apply of the planned objects (each followed by its options
//! Secret when its Helm values moved there, see [`crate::bundle::values`]) and deletion of orphans, a
//! bounded number at a time (pipelined over the client's connection pool).

use fleet_api::BundleDeployment;
use futures::{StreamExt, TryStreamExt, future, stream};
use kube::api::{Api, Patch, PatchParams};
use kube::{Client, ResourceExt};

use crate::bundle::values::{self, MovedValues};
use crate::context::FIELD_MANAGER;
use crate::delete::delete;
use crate::error::Result;
use k8s_openapi::api::core::v1::Secret;

/// Writes in flight at once.
const PARALLEL_WRITES: usize = 32;

/// Applies every BundleDeployment in `writes` and the options Secret of those with moved values, and hands
/// each to `record` as the API server stored it, as soon as it is written (so that a thousand written
/// objects are never held at once).
pub async fn apply_all(
    client: &Client,
    writes: impl IntoIterator<Item = (BundleDeployment, Option<MovedValues>)>,
    mut record: impl FnMut(BundleDeployment),
) -> Result<()> {
    stream::iter(writes.into_iter().map(|(bd, moved)| {
        let client = client.clone();
        async move {
            let api: Api<BundleDeployment> =
                Api::namespaced(client, &bd.namespace().unwrap_or_default());
            let stored = api
                .patch(
                    &bd.name_any(),
                    &PatchParams::apply(FIELD_MANAGER).force(),
                    &Patch::Apply(&bd),
                )
                .await?;
            if let Some(moved) = moved {
                // Written after the BundleDeployment, as Fleet does, to be owned by it; the agent
                // retries until it exists.
                let secrets: Api<Secret> =
                    Api::namespaced(api.into_client(), &stored.namespace().unwrap_or_default());
                secrets
                    .patch(
                        &stored.name_any(),
                        &PatchParams::apply(FIELD_MANAGER).force(),
                        &Patch::Apply(&values::secret(&stored, &moved)),
                    )
                    .await?;
            }
            Ok::<_, crate::error::Error>(stored)
        }
    }))
    .buffer_unordered(PARALLEL_WRITES)
    .try_for_each(|stored| {
        record(stored);
        future::ready(Ok(()))
    })
    .await
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
