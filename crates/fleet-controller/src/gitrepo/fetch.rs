//! From a GitRepo to git: its [`GitSource`] (repo, branch or revision, TLS settings, credentials from the
//! `clientSecretName` Secret, ssh host keys from that Secret or else the [`KNOWN_HOSTS_CONFIGMAP`]) and the blocking `fleet-git` calls, timed into the metrics. Those run on a
//! thread of their own and are abandoned when the controller stops, so a hung fetch never holds up
//! shutdown (a task on tokio's blocking pool would: the runtime waits for it when it is dropped).

use fleet_api::GitRepo;
use fleet_git::{GitAuth, GitError, GitSource, GitTree};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::ResourceExt;
use kube::api::Api;

use crate::context::Context;
use crate::error::{Error, Result};
use crate::secrets::data_of;

/// The source to fetch for `repo`, with credentials read from its secret.
pub async fn source(ctx: &Context, repo: &GitRepo) -> Result<GitSource> {
    let spec = &repo.spec;
    let mut source = GitSource::new(spec.repo.clone());
    source.branch = Some(spec.branch.clone()).filter(|b| !b.is_empty());
    source.revision = Some(spec.revision.clone()).filter(|r| !r.is_empty());
    source.ca_bundle = spec.ca_bundle.as_ref().map(|b| b.0.clone());
    source.insecure_skip_tls_verify = spec.insecure_skip_tls_verify;
    if !spec.client_secret_name.is_empty() {
        let namespace = repo.namespace().unwrap_or_default();
        let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
        let secret = secrets
            .get_opt(&spec.client_secret_name)
            .await?
            .ok_or_else(|| {
                Error::invalid(
                    format!("GitRepo {namespace}/{}", repo.name_any()),
                    format!(
                        "clientSecretName: secret {:?} not found",
                        spec.client_secret_name
                    ),
                )
            })?;
        let type_ = secret.type_.clone().unwrap_or_default();
        source.auth = GitAuth::from_secret(&type_, &data_of(secret))?;
    }
    if let GitAuth::Ssh {
        known_hosts,
        insecure_skip_host_key_checks,
        ..
    } = &mut source.auth
    {
        *insecure_skip_host_key_checks = ctx.settings.insecure_skip_host_key_checks;
        if known_hosts.is_none() && !*insecure_skip_host_key_checks {
            *known_hosts = shared_known_hosts(ctx).await?;
        }
    }
    Ok(source)
}

/// The ConfigMap in the controller's namespace whose `known_hosts` key holds the host keys of ssh remotes
/// whose secret brings none (as in Fleet; the `fleet` chart fills it from `additionalKnownHosts`).
pub const KNOWN_HOSTS_CONFIGMAP: &str = "known-hosts";

/// The `known_hosts` lines of [`KNOWN_HOSTS_CONFIGMAP`], if it exists and has any.
async fn shared_known_hosts(ctx: &Context) -> Result<Option<String>> {
    let configmaps: Api<ConfigMap> =
        Api::namespaced(ctx.client.clone(), &ctx.settings.system_namespace);
    let lines = configmaps
        .get_opt(KNOWN_HOSTS_CONFIGMAP)
        .await?
        .and_then(|map| map.data?.remove("known_hosts"));
    Ok(lines.filter(|lines| !lines.trim().is_empty()))
}

/// The commit the GitRepo's branch or revision points at (an ls-remote, nothing fetched).
pub async fn resolve(ctx: &Context, source: &GitSource) -> Result<String, GitError> {
    let (git, source) = (ctx.git.clone(), source.clone());
    blocking(ctx, move || git.resolve(&source)).await
}

/// Fetches `commit` (shallow) and opens its tree.
pub async fn checkout(
    ctx: &Context,
    source: &GitSource,
    commit: &str,
) -> Result<GitTree, GitError> {
    let (git, source, commit) = (ctx.git.clone(), source.clone(), commit.to_string());
    let metrics = ctx.metrics.clone();
    blocking(ctx, move || {
        let stats = git.fetch(&source, &commit)?;
        metrics
            .git_fetch_seconds
            .observe(stats.duration.as_secs_f64());
        metrics.git_fetch_bytes.inc_by(stats.bytes);
        git.tree(&source, &commit)
    })
    .await
}

/// Runs `f` on its own thread; gives up on it (the thread finishes on its own) once the controller stops.
async fn blocking<T: Send + 'static>(
    ctx: &Context,
    f: impl FnOnce() -> Result<T, GitError> + Send + 'static,
) -> Result<T, GitError> {
    let failed = |reason: String| GitError::Other {
        url: String::new(),
        reason,
    };
    let (done, result) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("git".to_string())
        .spawn(move || {
            let _ = done.send(f());
        })
        .map_err(|e| failed(format!("starting a git thread: {e}")))?;
    tokio::select! {
        result = result => result.unwrap_or_else(|_| Err(failed("the git thread panicked".to_string()))),
        () = ctx.stopped() => Err(failed(STOPPING.to_string())),
    }
}

/// Why a git call was abandoned.
pub const STOPPING: &str = "the controller is stopping";
