//! Writing BundleDeployments: server-side apply of the planned objects and deletion of orphans, a bounded
//! number at a time (pipelined over the client's connection pool).

use fleet_api::BundleDeployment;
use futures::{StreamExt, TryStreamExt, stream};
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::{Client, ResourceExt};

use crate::bundle::content::ignore_missing;
use crate::context::FIELD_MANAGER;
use crate::error::Result;

/// Writes in flight at once.
const PARALLEL_WRITES: usize = 32;

/// Applies every BundleDeployment in `writes`; returns them as the API server stored them.
pub async fn apply_all(
    client: &Client,
    writes: Vec<BundleDeployment>,
) -> Result<Vec<BundleDeployment>> {
    stream::iter(writes.into_iter().map(|bd| {
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
            Ok::<_, crate::error::Error>(stored)
        }
    }))
    .buffer_unordered(PARALLEL_WRITES)
    .try_collect::<Vec<BundleDeployment>>()
    .await
}

/// Deletes the BundleDeployments `(namespace, name)`; ones already gone are fine.
pub async fn delete_all(client: &Client, deletes: Vec<(String, String)>) -> Result<()> {
    stream::iter(deletes.into_iter().map(|(namespace, name)| {
        let client = client.clone();
        async move {
            let api: Api<BundleDeployment> = Api::namespaced(client, &namespace);
            ignore_missing(
                api.delete(&name, &DeleteParams::default())
                    .await
                    .map(|_| ()),
            )
        }
    }))
    .buffer_unordered(PARALLEL_WRITES)
    .try_collect::<Vec<()>>()
    .await?;
    Ok(())
}
