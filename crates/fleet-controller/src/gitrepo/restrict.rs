//! GitRepoRestrictions, as Fleet applies them.
//!
//! **GitRepos** (Fleet's `AuthorizeAndAssignDefaults`): every reconcile reads the restrictions of the
//! GitRepo's namespace and checks the GitRepo against them ([`fleet_target::restrictions::authorize`]). An
//! allowed GitRepo goes on with the defaults filled in (`defaultServiceAccount`, `defaultClientSecretName`)
//! as its effective spec; a disallowed one gets `Accepted=False` with Fleet's message and a
//! `FailedToApplyRestrictions` warning Event, and nothing is fetched or written, so its Bundles stay as they
//! are. Each Bundle read carries [`ACCESS_ANNOTATION`], a hash of the effective access it was read with
//! ([`fingerprint`]); [`Applied`] remembers it per GitRepo, and after a restart [`access_changed`] reads it
//! back from the GitRepo's Bundles, so a default changed while the controller was down re-reads the commit
//! too, not only one changed while it runs.
//!
//! **Bundles** (Fleet's `getNamespaceSelectorForBundle`): the `allowedTargetNamespaceSelector` of a
//! namespace's restrictions (ANDed) goes on the options of every target of each Bundle in that namespace
//! that carries the `fleet.cattle.io/repo-name` label, after target customizations are merged, when
//! targeting runs ([`crate::bundle::cache::NamespaceSelectors`]). As in Fleet this keys on the
//! label, not on an owning GitRepo: a Bundle created by hand without the label gets no selector, one with
//! it does. The other restriction fields (allowed service accounts, repo patterns, client secrets, target
//! namespaces, the defaults) govern GitRepos only: Fleet checks them nowhere for Bundles, nor do we.
//!
//! [`watch`] keeps [`crate::bundle::cache::NamespaceSelectors`] current, marks the `GitRepoRestriction` kind synced in the index
//! once it listed them (so no Bundle is planned without its selector after a restart, which would change
//! its deploymentIDs), and on a change wakes the namespace's GitRepos and, when the selector moved, its
//! Bundles.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use fleet_api::{
    Bundle, GitRepo, GitRepoRestriction, GitRepoRestrictionFields, GitRepoStatus, labels,
};
use fleet_target::restrictions::{self, GitRepoAccess};
use futures::StreamExt;
use kube::api::{Api, ListParams};
use kube::runtime::watcher::Event;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use sha2::{Digest, Sha256};

use super::annotations::READ_ERROR_ANNOTATION;
use crate::context::Context;
use crate::error::Result;
use crate::status::{apply_status, conditions};

/// The condition Fleet sets to `False` with the restriction error.
pub const ACCEPTED: &str = "Accepted";
/// The reason of the warning Event on a rejected GitRepo.
pub const EVENT_REASON: &str = "FailedToApplyRestrictions";

pub use super::annotations::ACCESS_ANNOTATION;

/// The kind [`watch`] marks synced in the index.
pub use crate::index::GITREPO_RESTRICTIONS as SYNCED_KIND;

/// What the Bundles read from `repo` (the effective GitRepo) depend on of its access (repo, target
/// namespace, service account, client secret), as a hash: the value of [`ACCESS_ANNOTATION`].
pub fn fingerprint(repo: &GitRepo) -> String {
    let text = serde_json::to_string(&access(repo)).unwrap_or_default();
    crate::bundle::values::hex(&Sha256::digest(text.as_bytes()))
}

/// Whether the Bundles of `repo` (effective, keyed `key`) were read with other access than `access`. Known
/// from memory once this process read or checked them; otherwise (after a restart) from the
/// [`ACCESS_ANNOTATION`] of its Bundles that read fine (a broken one keeps its last good spec and
/// annotation), remembered when they all match. A GitRepo without Bundles has nothing to re-read.
pub async fn access_changed(
    ctx: &Context,
    repo: &GitRepo,
    key: &str,
    access: &str,
) -> Result<bool> {
    if let Some(known) = ctx.gitrepo_access.get(key) {
        return Ok(known != access);
    }
    let api: Api<Bundle> =
        Api::namespaced(ctx.client.clone(), &repo.namespace().unwrap_or_default());
    let selector = format!("{}={}", labels::REPO_NAME, repo.name_any());
    let bundles = api
        .list_metadata(&ListParams::default().labels(&selector))
        .await?;
    let changed = bundles
        .items
        .iter()
        .filter(|b| !b.annotations().contains_key(READ_ERROR_ANNOTATION))
        .any(|b| b.annotations().get(ACCESS_ANNOTATION).map(String::as_str) != Some(access));
    if !changed {
        ctx.gitrepo_access.record(key, access);
    }
    Ok(changed)
}

/// The GitRepo with the defaults of its namespace's restrictions filled in, or Fleet's error when it breaks
/// them.
pub async fn authorize(ctx: &Context, repo: &GitRepo) -> Result<Result<GitRepo, String>> {
    let namespace = repo.namespace().unwrap_or_default();
    let api: Api<GitRepoRestriction> = Api::namespaced(ctx.client.clone(), &namespace);
    let listed = match api.list(&ListParams::default()).await {
        Ok(list) => list.items,
        // A hub without the GitRepoRestriction CRD has no restrictions.
        Err(kube::Error::Api(status)) if status.code == 404 => Vec::new(),
        Err(err) => return Err(err.into()),
    };
    let restrictions: Vec<restrictions::Named<'_>> = listed
        .iter()
        .map(|r| (r.meta().name.as_deref().unwrap_or(""), &r.spec))
        .collect();
    Ok(restrictions::authorize(&access(repo), &restrictions)
        .map(|authorized| {
            let mut effective = repo.clone();
            let spec = &mut effective.spec;
            spec.target_namespace = authorized.access.target_namespace;
            spec.service_account = authorized.access.service_account;
            spec.client_secret_name = authorized.access.client_secret_name;
            effective
        })
        .map_err(|err| err.to_string()))
}

/// The fields of `repo` the restrictions govern.
pub fn access(repo: &GitRepo) -> GitRepoAccess {
    GitRepoAccess {
        repo: repo.spec.repo.clone(),
        target_namespace: repo.spec.target_namespace.clone(),
        service_account: repo.spec.service_account.clone(),
        client_secret_name: repo.spec.client_secret_name.clone(),
    }
}

/// Whether the GitRepo was rejected by a restriction last time (so it must be read once it is allowed).
pub fn was_rejected(status: &GitRepoStatus) -> bool {
    status
        .base
        .conditions
        .iter()
        .any(|c| c.type_ == ACCEPTED && c.status == "False")
}

/// Records the rejection of `repo` in its status (only `Accepted` changes) and, when the message is new, in a
/// warning Event.
pub async fn reject(
    ctx: &Context,
    repo: &GitRepo,
    previous: &GitRepoStatus,
    message: &str,
) -> Result<()> {
    let mut status = previous.clone();
    conditions::set(
        &mut status.base.conditions,
        ACCEPTED,
        false,
        "Error",
        message,
        &conditions::now(),
    );
    if &status != previous {
        let api: Api<GitRepo> =
            Api::namespaced(ctx.client.clone(), &repo.namespace().unwrap_or_default());
        apply_status(&api, &repo.name_any(), &status).await?;
        ctx.events
            .publish(repo, true, EVENT_REASON, message.to_string());
    }
    Ok(())
}

/// Each namespace's restrictions, by name.
type Known = HashMap<String, BTreeMap<String, GitRepoRestrictionFields>>;

/// Watches GitRepoRestrictions: keeps the namespace selectors of `ctx.targeting` current, marks the kind
/// synced after the first list (or at once on a hub without the CRD), and after that wakes a namespace's
/// GitRepos when its restrictions change and its GitRepo Bundles when its selector changes. Runs until
/// aborted.
pub async fn watch(ctx: Arc<Context>) {
    let api: Api<GitRepoRestriction> = Api::all(ctx.client.clone());
    let mut events = watcher::watcher(api, watcher::Config::default())
        .default_backoff()
        .boxed();
    let mut known = Known::new();
    let mut relisted: Option<Known> = None;
    let mut synced = false;
    while let Some(event) = events.next().await {
        let listed = matches!(event, Ok(Event::InitDone));
        let changed: Vec<String> = match event {
            Ok(Event::Apply(r)) => {
                let namespace = r.namespace().unwrap_or_default();
                let entry = known.entry(namespace.clone()).or_default();
                let before = entry.insert(r.name_any(), r.spec.clone());
                if before.as_ref() == Some(&r.spec) {
                    continue;
                }
                vec![namespace]
            }
            Ok(Event::Delete(r)) => {
                let namespace = r.namespace().unwrap_or_default();
                let removed = known
                    .get_mut(&namespace)
                    .and_then(|e| e.remove(&r.name_any()));
                if removed.is_none() {
                    continue;
                }
                vec![namespace]
            }
            Ok(Event::Init) => {
                relisted = Some(Known::new());
                continue;
            }
            Ok(Event::InitApply(r)) => {
                relisted
                    .get_or_insert_with(Known::new)
                    .entry(r.namespace().unwrap_or_default())
                    .or_default()
                    .insert(r.name_any(), r.spec);
                continue;
            }
            Ok(Event::InitDone) => {
                let fresh = relisted.take().unwrap_or_default();
                let mut namespaces: Vec<String> =
                    known.keys().chain(fresh.keys()).cloned().collect();
                namespaces.sort();
                namespaces.dedup();
                namespaces.retain(|ns| {
                    known.get(ns).filter(|m| !m.is_empty())
                        != fresh.get(ns).filter(|m| !m.is_empty())
                });
                known = fresh;
                namespaces
            }
            Err(watcher::Error::InitialListFailed(kube::Error::Api(status)))
                if status.code == 404 && !synced =>
            {
                // A hub without the GitRepoRestriction CRD has no restrictions.
                synced = true;
                ctx.index.mark_synced(SYNCED_KIND);
                continue;
            }
            Err(err) => {
                tracing::debug!(error = %err, "GitRepoRestriction watch error; retrying");
                continue;
            }
        };
        for namespace in &changed {
            let listed: Vec<restrictions::Named<'_>> = known
                .get(namespace)
                .map(|m| {
                    m.iter()
                        .map(|(name, fields)| (name.as_str(), fields))
                        .collect()
                })
                .unwrap_or_default();
            let selector = restrictions::namespace_selector(&listed);
            let selector_changed = ctx.targeting.namespace_selectors.set(namespace, selector);
            // Before the first sync nothing was planned or checked yet: every reconcile waits for it.
            if synced {
                wake(&ctx, namespace, selector_changed).await;
            }
        }
        if listed && !synced {
            synced = true;
            ctx.index.mark_synced(SYNCED_KIND);
        }
    }
}

/// Wakes every GitRepo of `namespace` and, with `bundles`, every Bundle there a GitRepo wrote.
async fn wake(ctx: &Context, namespace: &str, bundles: bool) {
    let repos: Api<GitRepo> = Api::namespaced(ctx.client.clone(), namespace);
    match repos.list_metadata(&ListParams::default()).await {
        Ok(list) => {
            for repo in list.items {
                ctx.triggers.gitrepo(namespace, &repo.name_any());
            }
        }
        Err(err) => tracing::warn!(%namespace, error = %err, "listing GitRepos failed"),
    }
    if !bundles {
        return;
    }
    let api: Api<Bundle> = Api::namespaced(ctx.client.clone(), namespace);
    match api
        .list_metadata(&ListParams::default().labels(labels::REPO_NAME))
        .await
    {
        Ok(list) => ctx.triggers.bundles(
            list.items
                .iter()
                .map(|b| (namespace.to_string(), b.name_any())),
        ),
        Err(err) => tracing::warn!(%namespace, error = %err, "listing Bundles failed"),
    }
}
