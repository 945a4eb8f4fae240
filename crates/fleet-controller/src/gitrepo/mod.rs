//! The GitRepo reconciler: poll the remote when due ([`poll`]), fetch and read a new commit
//! ([`fetch`], [`render`]), write its Bundles ([`apply`]), and aggregate status. A poll is due when the
//! interval passed, the spec changed, `forceSyncGeneration` moved, a webhook asked, or no commit is known
//! yet; a commit is read again only when it, the spec or `forceSyncGeneration` changed, so a restart
//! rewrites nothing. Errors go into conditions (`GitPolling`, `Stalled`, `Ready`), scrubbed of secrets by
//! `fleet-git`. A remote that cannot be reached (a backoff error of [`crate::retry`]) is polled again with
//! the shared backoff instead of the polling interval until it answers; git errors the user must fix (a
//! wrong URL, branch or secret) keep the polling interval, since the Secret they may name is not
//! watched. A finalizer deletes the GitRepo's Bundles when it is deleted.

pub mod annotations;
pub mod apply;
pub mod charts;
pub mod fetch;
pub mod poll;
pub mod render;
pub mod restrict;

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;

use fleet_api::{Bundle, GitRepo, GitRepoStatus, labels};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::Api;
use kube::runtime::controller::Action;
use kube::runtime::finalizer::Event;
use kube::{Resource, ResourceExt};

use crate::context::{Context, lock};
use crate::delete::delete_labelled;
use crate::error::{Error, Result, Retry};
use crate::events;
use crate::finalize::with_finalizer;
use crate::status::gitrepo::{GIT_POLLING, JOB_CURRENT, JOB_FAILED, STALLED, aggregate};
use crate::status::{apply_status, conditions};

/// Fleet's finalizer on GitRepos.
pub const FINALIZER: &str = "fleet.cattle.io/gitrepo-finalizer";

/// Reconciles one GitRepo.
pub fn reconcile(repo: Arc<GitRepo>, ctx: Arc<Context>) -> BoxFuture<'static, Result<Action>> {
    reconcile_inner(repo, ctx).boxed()
}

async fn reconcile_inner(repo: Arc<GitRepo>, ctx: Arc<Context>) -> Result<Action> {
    ctx.index.wait_synced().await;
    with_finalizer(&ctx, FINALIZER, repo, |event, ctx| async move {
        match event {
            Event::Apply(repo) => sync(&repo, &ctx).await,
            Event::Cleanup(repo) => cleanup(&repo, &ctx).await,
        }
    })
    .await
}

async fn sync(repo: &GitRepo, ctx: &Context) -> Result<Action> {
    let namespace = repo.namespace().unwrap_or_default();
    let name = repo.name_any();
    let previous = repo.status.clone().unwrap_or_default();
    // Checked on every reconcile, as Fleet does: a rejected GitRepo fetches and writes nothing, so its
    // Bundles stay as they are, until a restriction or the GitRepo changes.
    let authorized = match restrict::authorize(ctx, repo).await? {
        Ok(authorized) => authorized,
        Err(message) => {
            restrict::reject(ctx, repo, &previous, &message).await?;
            return Ok(Action::await_change());
        }
    };
    let repo = &authorized;
    let key = format!("{namespace}/{name}");
    // A restriction default that changed (while running, or while the controller was down) re-reads the
    // commit with it.
    let access = restrict::fingerprint(repo);
    let access_changed = restrict::was_rejected(&previous)
        || restrict::access_changed(ctx, repo, &key, &access).await?;
    let mut status = previous.clone();
    let now = Timestamp::now();
    let now_text = conditions::now();
    let generation = repo.meta().generation.unwrap_or_default();
    let interval = poll::interval(repo, ctx.settings.default_polling_interval);
    let webhook = lock(&ctx.webhook_requests).remove(&key);
    let spec_changed = previous.observed_generation != generation || access_changed;
    let forced = repo.spec.force_sync_generation != previous.update_generation;
    let remote_key = format!("gitrepo-remote/{key}");
    let cadence = |failures| poll::cadence(failures, interval, repo.spec.disable_polling);
    let polling_due = cadence(ctx.retries.failures(&remote_key))
        .is_some_and(|after| poll::is_due(previous.last_polling_triggered.as_ref(), after, now));
    if webhook || spec_changed || forced || previous.commit.is_empty() || polling_due {
        let outcome = poll_and_read(
            repo,
            ctx,
            &mut status,
            generation,
            spec_changed || forced,
            &now_text,
        )
        .await?;
        status.last_polling_triggered = Some(Time(now));
        match outcome {
            Polled::Failed(Retry::Soon | Retry::Backoff) => {
                ctx.retries.failed(&remote_key);
            }
            other => {
                if other == Polled::Read {
                    ctx.gitrepo_access.record(&key, &access);
                }
                ctx.retries.succeeded(&remote_key);
            }
        }
    }
    ctx.index.read(|state| {
        aggregate(
            &mut status,
            state.repo_tally(&namespace, &name),
            state.bundle_errors.get(&(namespace.clone(), name.clone())),
            &now_text,
        );
    });
    // The placement decisions of this repository's Bundles.
    crate::placement::status::apply_to_gitrepo(
        &mut status,
        &ctx.placement_decisions.of_repo(&namespace, &name),
        &now_text,
    );
    if status != previous {
        let api: Api<GitRepo> = Api::namespaced(ctx.client.clone(), &namespace);
        apply_status(&api, &name, &status).await?;
        publish_events(ctx, repo, &previous, &status);
    }
    let Some(after) = cadence(ctx.retries.failures(&remote_key)) else {
        return Ok(Action::await_change());
    };
    let last = status.last_polling_triggered.as_ref();
    Ok(Action::requeue(poll::jittered(poll::remaining(
        last,
        after,
        Timestamp::now(),
    ))))
}

/// What a poll did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Polled {
    /// The commit was read into Bundles.
    Read,
    /// The commit needed no reading (or could not be read for a reason reported on the status).
    Unchanged,
    /// Resolving or fetching the commit failed (reported as `GitPolling` False), with what to do next.
    Failed(Retry),
}

/// Resolves the remote ref and, when the commit (or the spec) changed, reads and writes the Bundles.
async fn poll_and_read(
    repo: &GitRepo,
    ctx: &Context,
    status: &mut GitRepoStatus,
    generation: i64,
    must_read: bool,
    now: &str,
) -> Result<Polled> {
    let conditions = &mut status.base.conditions;
    let resolved = match fetch::source(ctx, repo).await {
        Ok(source) => fetch::resolve(ctx, &source)
            .await
            .map(|c| (source, c))
            .map_err(Error::from),
        Err(err) => Err(err),
    };
    let (source, commit) = match resolved {
        Ok(found) => found,
        Err(Error::Kube(err)) => return Err(Error::Kube(err)),
        // Abandoned, not failed: nothing to report.
        Err(_) if ctx.is_stopping() => return Err(Error::Task(fetch::STOPPING.to_string())),
        Err(err) => {
            conditions::set(
                conditions,
                GIT_POLLING,
                false,
                "Error",
                &err.to_string(),
                now,
            );
            return Ok(Polled::Failed(err.retry()));
        }
    };
    conditions::set(conditions, GIT_POLLING, true, "", "", now);
    status.polling_commit = commit.clone();
    if commit == status.commit && !must_read {
        return Ok(Polled::Unchanged);
    }
    let tree = match fetch::checkout(ctx, &source, &commit).await {
        Ok(tree) => tree,
        Err(_) if ctx.is_stopping() => return Err(Error::Task(fetch::STOPPING.to_string())),
        Err(err) => {
            // Not read: the commit stays unprocessed, so the next poll tries again.
            status.git_job_status = JOB_FAILED.to_string();
            conditions::set(
                &mut status.base.conditions,
                GIT_POLLING,
                false,
                "Error",
                &err.to_string(),
                now,
            );
            return Ok(Polled::Failed(Error::Git(err).retry()));
        }
    };
    let credentials = match charts::credentials(ctx, repo).await {
        Ok(credentials) => credentials,
        Err(Error::Kube(err)) => return Err(Error::Kube(err)),
        Err(err) => {
            status.git_job_status = JOB_FAILED.to_string();
            conditions::set(
                &mut status.base.conditions,
                STALLED,
                true,
                "Error",
                &err.to_string(),
                now,
            );
            return Ok(Polled::Unchanged);
        }
    };
    let rendered = {
        let (repo, commit, source) = (repo.clone(), commit.clone(), ctx.charts.clone());
        tokio::task::spawn_blocking(move || {
            let session = source.session(credentials);
            render::render_with_charts(&tree, &repo, &commit, Some(&session))
        })
        .await
        .map_err(|e| Error::Task(e.to_string()))?
    };
    // A chart source that was down: the commit is read again at the next poll (its other Bundles are current).
    let retry = rendered.as_ref().is_ok_and(|r| r.download_failed);
    // Fleet's git job fails when a bundle cannot be read or a chart cannot be downloaded, and completes
    // (`Current`) otherwise; a templating error shows later, when the Bundle is targeted.
    status.git_job_status = match &rendered {
        Ok(rendered) if rendered.errors.is_empty() && !retry => JOB_CURRENT,
        _ => JOB_FAILED,
    }
    .to_string();
    match rendered {
        Ok(rendered) => {
            apply::apply(ctx, repo, &rendered).await?;
            // fleet.yaml's imageScans become ImageScans; a failure there does not hold up the Bundles.
            if let Err(err) = crate::imagescan::objects::apply(ctx, repo, &source, &commit).await {
                tracing::warn!(repo = %repo.name_any(), error = %err, "writing ImageScans failed");
            }
            let errors: Vec<String> = rendered
                .errors
                .iter()
                .map(|(bundle, error)| format!("bundle {bundle}: {error}"))
                .collect();
            let conditions = &mut status.base.conditions;
            conditions::set(
                conditions,
                STALLED,
                !errors.is_empty(),
                "",
                &errors.join("; "),
                now,
            );
        }
        Err(error) => {
            let message = format!("commit {commit}: {error}");
            conditions::set(
                &mut status.base.conditions,
                STALLED,
                true,
                "Error",
                &message,
                now,
            );
        }
    }
    conditions::set(
        &mut status.base.conditions,
        restrict::ACCEPTED,
        true,
        "",
        "",
        now,
    );
    if !retry {
        status.commit = commit;
    }
    status.observed_generation = generation;
    status.update_generation = repo.spec.force_sync_generation;
    Ok(Polled::Read)
}

/// Events for what changed in a written status: git and read errors (and their recovery), a new
/// commit, and the display state.
fn publish_events(ctx: &Context, repo: &GitRepo, before: &GitRepoStatus, after: &GitRepoStatus) {
    let watched = [
        (GIT_POLLING, "False", "GitPolling"),
        (STALLED, "True", "Read"),
    ];
    for (warning, reason, note) in
        events::condition_changes(&before.base.conditions, &after.base.conditions, &watched)
    {
        ctx.events.publish(repo, warning, &reason, note);
    }
    if after.commit != before.commit && !after.commit.is_empty() {
        ctx.events
            .publish(repo, false, "Synced", format!("commit {}", after.commit));
    }
    if let Some(note) = events::state_change(&before.base.display.state, &after.base.display.state)
    {
        let warning = after.base.display.error;
        ctx.events.publish(repo, warning, "StateChanged", note);
    }
}

async fn cleanup(repo: &GitRepo, ctx: &Context) -> Result<Action> {
    let key = format!(
        "{}/{}",
        repo.namespace().unwrap_or_default(),
        repo.name_any()
    );
    ctx.gitrepo_access.forget(&key);
    ctx.retries.succeeded(&format!("gitrepo-remote/{key}"));
    let api: Api<Bundle> =
        Api::namespaced(ctx.client.clone(), &repo.namespace().unwrap_or_default());
    let selector = format!("{}={}", labels::REPO_NAME, repo.name_any());
    delete_labelled(&api, &selector).await?;
    Ok(Action::await_change())
}
