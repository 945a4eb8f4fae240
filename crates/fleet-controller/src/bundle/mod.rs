//! The Bundle reconciler: read → plan → write. It reads the Bundle (with its Helm values put back,
//! [`values`]) and the index, plans with fleet-target's one entry point ([`fleet_target::plan::plan`]:
//! targeting, placement, rollout, the BundleDeployments to write and delete), makes sure its Content
//! exists ([`content`]), writes and deletes BundleDeployments ([`deploy`]), then writes its status when it
//! changed. A finalizer removes the Bundle's BundleDeployments (and, through GC, its Content) when it is
//! deleted.

pub mod cache;
pub mod content;
pub mod deploy;
pub mod read_values;
pub mod values;

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use std::time::Duration;

use fleet_api::Bundle;
use fleet_target::plan::{Hashes, PlanInput};
use kube::api::{Api, ListParams};
use kube::runtime::controller::Action;
use kube::runtime::finalizer::Event;
use kube::{Resource, ResourceExt};

use crate::context::{Context, lock};
use crate::error::Result;
use crate::finalize::with_finalizer;
use crate::index::StoredDeployment;
use crate::metrics::Metrics;
use crate::status::bundle::bundle_status;
use crate::status::{apply_status, conditions};

/// The bundle crate's hashes (Go-JSON rules), which planning uses for manifest and deployment IDs.
pub const HASHES: Hashes = Hashes {
    manifest_id: fleet_bundle::hash::manifest_id,
    deployment_id: fleet_bundle::hash::deployment_id,
};

/// What to write for one Bundle, with the deployment store's BundleDeployments.
pub type BundleWork = fleet_target::plan::BundleWork<StoredDeployment>;

/// Fleet's finalizer on Bundles.
pub const FINALIZER: &str = "fleet.cattle.io/bundle-finalizer";

/// Reconciles one Bundle.
pub fn reconcile(bundle: Arc<Bundle>, ctx: Arc<Context>) -> BoxFuture<'static, Result<Action>> {
    reconcile_inner(bundle, ctx).boxed()
}

async fn reconcile_inner(bundle: Arc<Bundle>, ctx: Arc<Context>) -> Result<Action> {
    ctx.index.wait_synced().await;
    with_finalizer(&ctx, FINALIZER, bundle, |event, ctx| async move {
        match event {
            Event::Apply(bundle) => apply(&bundle, &ctx).await,
            Event::Cleanup(bundle) => cleanup(&bundle, &ctx).await,
        }
    })
    .await
}

async fn apply(bundle: &Bundle, ctx: &Context) -> Result<Action> {
    // Helm values kept in the Bundle's values Secret are put back before targeting.
    let Some(bundle) = read_values::with_bundle_values(ctx, bundle).await? else {
        // The Secret holds a newer version's values: that version's watch event wakes this again.
        return Ok(Action::await_change());
    };
    let bundle = &*bundle;
    let previous = bundle.status.clone().unwrap_or_default();
    let now = conditions::now();
    let generation = bundle.meta().generation.unwrap_or_default();
    let work = match pass(bundle, ctx).await? {
        Ok(work) => work,
        Err(err) => {
            let message = format!("targeting failed: {err}");
            let known = previous
                .conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.message == message);
            if !known {
                ctx.events
                    .publish(bundle, true, "TargetingFailed", message.clone());
            }
            let status = bundle_status(
                &previous,
                &[],
                &Default::default(),
                generation,
                Some(&message),
                &now,
            );
            write_status(ctx, bundle, &previous, status).await?;
            return Ok(Action::await_change());
        }
    };
    let read_error = bundle
        .annotations()
        .get(crate::gitrepo::apply::READ_ERROR_ANNOTATION)
        .map(|e| format!("the bundle's files in the current commit could not be read, the last good version stays deployed: {e}"));
    let mut status = bundle_status(
        &previous,
        &work.targets,
        &work.rollout,
        generation,
        read_error.as_deref(),
        &now,
    );
    // Placement status (`Scheduled`, decisions), also handed to the GitRepo.
    crate::placement::status::record_bundle(
        ctx,
        bundle,
        &mut status,
        work.placement.as_ref(),
        &now,
    );
    // Fleet leaves the display state of an all-Ready Bundle empty; the metric counts it as Ready.
    let state = match status.display.state.as_str() {
        "" if status.summary.desired_ready > 0 => "Ready",
        state => state,
    };
    record_states(ctx, bundle, Some(state));
    write_status(ctx, bundle, &previous, status).await?;
    // A toleration or the placement's rollout budget runs out later.
    if let Some(after) = work.requeue_after {
        return Ok(Action::requeue(after));
    }
    // Deferred creations (maxNew) continue when the new BundleDeployments' watch events arrive; the requeue
    // only guards against a missed event.
    Ok(if work.deferred > 0 {
        Action::requeue(Duration::from_secs(5))
    } else {
        Action::await_change()
    })
}

/// Read → plan → write: plan against the index (the plan already continues the rollout while `maxNew`
/// holds creations back), write what it asks for, and record the written BundleDeployments in the index
/// at once (their watch events then change nothing). Returns the plan; `Ok(Err(_))` is a targeting
/// error.
async fn pass(
    bundle: &Bundle,
    ctx: &Context,
) -> Result<Result<BundleWork, fleet_target::TargetError>> {
    let key = (bundle.namespace().unwrap_or_default(), bundle.name_any());
    ctx.placement_decisions
        .planning(&key, bundle.spec.placement.is_some());
    let namespace_selector = ctx.targeting.namespace_selectors.for_bundle(bundle);
    let mut work = match ctx.index.read(|state| {
        let none = BTreeMap::new();
        let input = PlanInput {
            bundle,
            fleet: &state.fleet,
            deployments: state.deployments_of(&key).unwrap_or(&none),
            namespace_selector: namespace_selector.as_ref(),
            now: crate::placement::unix_now(),
            eligibility: crate::placement::settings(ctx).eligibility(),
            hashes: HASHES,
        };
        fleet_target::plan::plan(&input, &ctx.targeting.kept)
    }) {
        Ok(work) => work,
        Err(err) => return Ok(Err(err)),
    };
    // A HelmOp's agents download its chart; like Fleet, no Content is written for it.
    if bundle.spec.helm_op_options.is_none() {
        content::ensure(ctx, &work.manifest_id, &bundle.spec.resources).await?;
    }
    let previous_manifest = lock(&ctx.manifests).insert(key, work.manifest_id.clone());
    // A Bundle seen for the first time (at start, or new) leaves nothing of its own to collect now; the
    // background collector still looks, once for a whole burst of them.
    if previous_manifest.is_none() {
        ctx.triggers.content_gc.notify_one();
    }
    let manifest_changed = previous_manifest.is_some_and(|m| m != work.manifest_id);
    let deleted_any = !work.deletes.is_empty();
    deploy::apply_all(ctx, &work).await?;
    deploy::delete_all(&ctx.client, std::mem::take(&mut work.deletes)).await?;
    if manifest_changed || deleted_any {
        content::collect_garbage(ctx).await?;
    }
    Ok(Ok(work))
}

async fn cleanup(bundle: &Bundle, ctx: &Context) -> Result<Action> {
    let namespace = bundle.namespace().unwrap_or_default();
    let name = bundle.name_any();
    ctx.placement_decisions
        .planning(&(namespace.clone(), name.clone()), false);
    // Listed from the API, not the index, so that one written a moment ago is not missed.
    let selector = format!(
        "{}={name},{}={namespace}",
        fleet_api::labels::BUNDLE_NAME,
        fleet_api::labels::BUNDLE_NAMESPACE
    );
    let deletes: Vec<(String, String)> =
        Api::<fleet_api::BundleDeployment>::all(ctx.client.clone())
            .list_metadata(&ListParams::default().labels(&selector))
            .await?
            .items
            .iter()
            .map(|bd| (bd.namespace().unwrap_or_default(), bd.name_any()))
            .collect();
    deploy::delete_all(&ctx.client, deletes).await?;
    ctx.targeting.forget(&(namespace.clone(), name.clone()));
    lock(&ctx.manifests).remove(&(namespace, name));
    record_states(ctx, bundle, None);
    ctx.triggers.content_gc.notify_one();
    Ok(Action::await_change())
}

/// Updates the by-state metrics: this Bundle's display state (`None` once it is gone) and the
/// BundleDeployment counts the index keeps.
fn record_states(ctx: &Context, bundle: &Bundle, state: Option<&str>) {
    let key = (bundle.namespace().unwrap_or_default(), bundle.name_any());
    let bundle_counts = {
        let mut states = lock(&ctx.bundle_states);
        match state {
            Some(state) => states.insert(key, state.to_string()),
            None => states.remove(&key),
        };
        let mut counts = std::collections::BTreeMap::<String, i64>::new();
        for state in states.values() {
            *counts.entry(state.clone()).or_default() += 1;
        }
        counts
    };
    Metrics::set_by_state(&ctx.metrics.bundles_by_state, bundle_counts);
    let deployment_counts = ctx.index.read(|state| state.states.clone());
    Metrics::set_by_state(&ctx.metrics.deployments_by_state, deployment_counts);
}

/// Writes the Bundle's status when it changed.
async fn write_status(
    ctx: &Context,
    bundle: &Bundle,
    previous: &fleet_api::BundleStatus,
    status: fleet_api::BundleStatus,
) -> Result<()> {
    if &status == previous {
        return Ok(());
    }
    let api: Api<Bundle> =
        Api::namespaced(ctx.client.clone(), &bundle.namespace().unwrap_or_default());
    apply_status(&api, &bundle.name_any(), &status).await?;
    if let Some(note) = crate::events::state_change(&previous.display.state, &status.display.state)
    {
        let warning = status.display.state == fleet_api::BundleState::ErrApplied.as_str();
        ctx.events.publish(bundle, warning, "StateChanged", note);
    }
    Ok(())
}
