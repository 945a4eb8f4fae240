//! Content objects: one per manifest ID (cluster-scoped, named by the ID, gzip'd manifest JSON and its
//! sha256), created once and shared by every BundleDeployment that deploys that manifest, and deleted when
//! no Bundle deploys it and no BundleDeployment refers to it (in its deployed, staged or applied ID).

use std::collections::BTreeSet;

use fleet_api::{BundleResource, Content};
use fleet_bundle::{hash, resources};
use kube::ResourceExt;
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;

use crate::context::{Context, lock};
use crate::delete::delete;
use crate::error::Result;

/// Creates the Content of `resources` (named `manifest_id`) unless it exists.
pub async fn ensure(ctx: &Context, manifest_id: &str, resources: &[BundleResource]) -> Result<()> {
    if lock(&ctx.contents).contains(manifest_id) {
        return Ok(());
    }
    let bytes = hash::manifest_bytes(resources);
    let content: Content = serde_json::from_value(json!({
        "apiVersion": fleet_api::API_VERSION,
        "kind": "Content",
        "metadata": {"name": manifest_id},
        "content": resources::base64_gzip(&bytes),
        "sha256sum": hash::manifest_sha256(resources),
    }))
    .map_err(|e| crate::error::Error::invalid(format!("Content {manifest_id}"), e.to_string()))?;
    let api: Api<Content> = Api::all(ctx.client.clone());
    match api.create(&PostParams::default(), &content).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 409 => {}
        Err(err) => return Err(err.into()),
    }
    lock(&ctx.contents).insert(manifest_id.to_string());
    Ok(())
}

/// Deletes every Content no Bundle deploys and no BundleDeployment refers to.
pub async fn collect_garbage(ctx: &Context) -> Result<usize> {
    let mut keep: BTreeSet<String> = lock(&ctx.manifests).values().cloned().collect();
    ctx.index.read(|state| {
        for bd in state.deployments.values().flat_map(|m| m.values()) {
            let applied = bd
                .status
                .as_ref()
                .map(|s| s.applied_deployment_id.as_str())
                .unwrap_or("");
            for id in [
                bd.spec.deployment_id.as_str(),
                bd.spec.staged_deployment_id.as_str(),
                applied,
            ] {
                if let Some((manifest, _)) = id.split_once(':') {
                    keep.insert(manifest.to_string());
                }
            }
        }
    });
    let api: Api<Content> = Api::all(ctx.client.clone());
    let names: Vec<String> = api
        .list_metadata(&ListParams::default())
        .await?
        .items
        .iter()
        .map(ResourceExt::name_any)
        .collect();
    let mut deleted = 0;
    for name in names.into_iter().filter(|n| !keep.contains(n)) {
        lock(&ctx.contents).remove(&name);
        delete(&api, &name).await?;
        deleted += 1;
    }
    Ok(deleted)
}

/// Runs [`collect_garbage`] whenever woken (BundleDeployments were deleted), at most once per second so
/// that a burst of deletions costs one pass.
pub async fn run_collector(ctx: std::sync::Arc<Context>) {
    loop {
        ctx.triggers.content_gc.notified().await;
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        if let Err(err) = collect_garbage(&ctx).await {
            tracing::warn!(error = %err, "content garbage collection failed; retrying on the next deletion");
        }
    }
}
