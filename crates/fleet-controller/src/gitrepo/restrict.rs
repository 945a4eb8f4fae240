//! GitRepoRestrictions, as Fleet's `AuthorizeAndAssignDefaults`: every reconcile reads the restrictions of the
//! GitRepo's namespace and checks the GitRepo against them ([`fleet_target::restrictions::authorize`]). An
//! allowed GitRepo goes on with the defaults filled in (`defaultServiceAccount`, `defaultClientSecretName`) as
//! its effective spec; a disallowed one gets `Accepted=False` with Fleet's message and a
//! `FailedToApplyRestrictions` warning Event, and nothing is fetched or written, so its Bundles stay as they
//! are. An `allowedTargetNamespaceSelector` is put on the options of the GitRepo's Bundles ([`constrain`]), so
//! every BundleDeployment carries it and the agent checks the target namespace against it. [`watch`]
//! re-reconciles a namespace's GitRepos when one of its restrictions changes, and [`Applied`] remembers the
//! effective access each GitRepo was last read with, so that a changed default re-reads the commit.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use fleet_api::{Bundle, GitRepo, GitRepoRestriction, GitRepoStatus, LabelSelector};
use fleet_target::restrictions::{self, GitRepoAccess};
use futures::StreamExt;
use kube::api::{Api, ListParams};
use kube::runtime::watcher::Event;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};

use crate::context::{Context, lock};
use crate::error::Result;
use crate::status::{apply_status, conditions};

/// The condition Fleet sets to `False` with the restriction error.
pub const ACCEPTED: &str = "Accepted";
/// The reason of the warning Event on a rejected GitRepo.
pub const EVENT_REASON: &str = "FailedToApplyRestrictions";

/// The effective access ([`Authorized::fingerprint`]) each GitRepo's Bundles were last read with, keyed by
/// `namespace/name`.
#[derive(Debug, Default)]
pub struct Applied(Mutex<HashMap<String, String>>);

/// A GitRepo that passed its namespace's restrictions.
#[derive(Debug, Clone)]
pub struct Authorized {
    /// The GitRepo with the restrictions' defaults filled in.
    pub repo: GitRepo,
    /// The restrictions' `allowedTargetNamespaceSelector` (ANDed), for the Bundles' options.
    pub namespace_selector: Option<LabelSelector>,
}

impl Authorized {
    /// What the Bundles read under this authorization depend on (repo, target namespace, service account,
    /// client secret, namespace selector), as one comparable string.
    pub fn fingerprint(&self) -> String {
        serde_json::to_string(&(access(&self.repo), &self.namespace_selector)).unwrap_or_default()
    }
}

impl Applied {
    /// Whether `access` differs from what the GitRepo was last read with; the first time a GitRepo is seen
    /// (after a restart) its Bundles are taken to match, and `access` is remembered.
    pub fn changed(&self, key: &str, access: &str) -> bool {
        let mut applied = lock(&self.0);
        match applied.get(key) {
            Some(known) => known != access,
            None => {
                applied.insert(key.to_string(), access.to_string());
                false
            }
        }
    }

    /// Records that the GitRepo's Bundles were read with `access`.
    pub fn record(&self, key: &str, access: &str) {
        lock(&self.0).insert(key.to_string(), access.to_string());
    }

    /// Forgets a deleted GitRepo.
    pub fn forget(&self, key: &str) {
        lock(&self.0).remove(key);
    }
}

/// The GitRepo with the defaults of its namespace's restrictions filled in, or Fleet's error when it breaks
/// them.
pub async fn authorize(ctx: &Context, repo: &GitRepo) -> Result<Result<Authorized, String>> {
    let namespace = repo.namespace().unwrap_or_default();
    let api: Api<GitRepoRestriction> = Api::namespaced(ctx.client.clone(), &namespace);
    let listed = match api.list(&ListParams::default()).await {
        Ok(list) => list.items,
        // A hub without the GitRepoRestriction CRD has no restrictions.
        Err(kube::Error::Api(status)) if status.code == 404 => Vec::new(),
        Err(err) => return Err(err.into()),
    };
    let restrictions: Vec<restrictions::GitRepoRestriction> = listed.iter().map(convert).collect();
    Ok(restrictions::authorize(&access(repo), &restrictions)
        .map(|authorized| {
            let mut effective = repo.clone();
            let spec = &mut effective.spec;
            spec.target_namespace = authorized.access.target_namespace;
            spec.service_account = authorized.access.service_account;
            spec.client_secret_name = authorized.access.client_secret_name;
            Authorized {
                repo: effective,
                namespace_selector: authorized
                    .allowed_target_namespace_selector
                    .and_then(|selector| serde_json::to_value(selector).ok())
                    .and_then(|value| serde_json::from_value(value).ok()),
            }
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

/// Puts the restrictions' namespace selector on the options of `bundles` (all of a GitRepo's), so that every
/// BundleDeployment carries it, as Fleet's targeting sets it.
pub fn constrain(bundles: &mut [Bundle], selector: Option<&LabelSelector>) {
    for bundle in bundles {
        bundle.spec.options.allowed_target_namespace_selector = selector.cloned();
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

/// Watches GitRepoRestrictions and wakes every GitRepo of a namespace whose restrictions changed. Runs until
/// aborted.
pub async fn watch(ctx: Arc<Context>) {
    let api: Api<GitRepoRestriction> = Api::all(ctx.client.clone());
    let mut events = watcher::watcher(api, watcher::Config::default())
        .default_backoff()
        .boxed();
    while let Some(event) = events.next().await {
        let namespace = match event {
            Ok(Event::Apply(r) | Event::Delete(r) | Event::InitApply(r)) => {
                r.namespace().unwrap_or_default()
            }
            Ok(Event::Init | Event::InitDone) => continue,
            Err(err) => {
                tracing::debug!(error = %err, "GitRepoRestriction watch error; retrying");
                continue;
            }
        };
        let repos: Api<GitRepo> = Api::namespaced(ctx.client.clone(), &namespace);
        match repos.list_metadata(&ListParams::default()).await {
            Ok(list) => {
                for repo in list.items {
                    ctx.triggers.gitrepo(&namespace, &repo.name_any());
                }
            }
            Err(err) => tracing::warn!(%namespace, error = %err, "listing GitRepos failed"),
        }
    }
}

/// The pure crate's view of a restriction.
fn convert(restriction: &GitRepoRestriction) -> restrictions::GitRepoRestriction {
    let fields = &restriction.spec;
    restrictions::GitRepoRestriction {
        name: restriction.meta().name.clone().unwrap_or_default(),
        default_service_account: fields.default_service_account.clone(),
        allowed_service_accounts: fields.allowed_service_accounts.clone(),
        allowed_repo_patterns: fields.allowed_repo_patterns.clone(),
        default_client_secret_name: fields.default_client_secret_name.clone(),
        allowed_client_secret_names: fields.allowed_client_secret_names.clone(),
        allowed_target_namespaces: fields.allowed_target_namespaces.clone(),
        allowed_target_namespace_selector: fields
            .allowed_target_namespace_selector
            .as_ref()
            .and_then(|selector| serde_json::to_value(selector).ok())
            .and_then(|value| serde_json::from_value(value).ok()),
    }
}
