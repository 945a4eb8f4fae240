//! The git push webhook, as Fleet's webhook handler answers it: parse the push (unverified) to find the
//! GitRepos following the pushed repository and branch; verify the request for each with its secret (the
//! GitRepo's `webhookSecret`, which takes precedence and must exist, else the key for the provider in the
//! `gitjob-webhook` Secret of the controller's namespace, else none); record the commit in the GitRepo's
//! `status.webhookCommit` and `lastWebhookTime`, give a GitRepo without a `pollingInterval` one of an hour
//! (the webhook now announces its commits), and make each poll now. A request that fails any GitRepo's
//! verification is refused as a whole.

use fleet_api::GitRepo;
use fleet_git::webhook::{PushEvent, secret_for, verify_and_parse};
use http::{HeaderMap, Method, StatusCode};
use kube::ResourceExt;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::json;

use crate::context::{Context, lock};
use crate::error::Result;
use crate::secrets::read_data;

/// Name of the global webhook Secret (Fleet's).
pub const WEBHOOK_SECRET: &str = "gitjob-webhook";

/// The polling interval a webhook gives a GitRepo that sets none (Fleet's: one hour).
pub const WEBHOOK_POLLING_INTERVAL: &str = "1h";

/// Handles one webhook request; returns the HTTP status and a short message.
pub async fn handle(
    ctx: &Context,
    method: &Method,
    headers: &HeaderMap,
    body: &[u8],
) -> (StatusCode, String) {
    match triggered(ctx, method, headers, body).await {
        Ok(Ok(repos)) => (
            StatusCode::OK,
            format!("{} GitRepo(s) triggered", repos.len()),
        ),
        Ok(Err(refused)) => refused,
        Err(err) => {
            tracing::warn!(error = %err, "webhook handling failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal error".to_string(),
            )
        }
    }
}

async fn triggered(
    ctx: &Context,
    method: &Method,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Result<Vec<String>, (StatusCode, String)>> {
    let event = match verify_and_parse(method, headers, body, None) {
        Ok(event) => event,
        Err(err) => return Ok(Err((err.status(), err.to_string()))),
    };
    let global = read_data(&ctx.client, &ctx.settings.system_namespace, WEBHOOK_SECRET).await?;
    let repos = Api::<GitRepo>::all(ctx.client.clone())
        .list(&ListParams::default())
        .await?;
    let mut triggered = Vec::new();
    for repo in repos.items {
        let spec = &repo.spec;
        if !event.matches(&spec.repo, Some(&spec.branch), Some(&spec.revision)) {
            continue;
        }
        let commit = event.commit.clone().unwrap_or_default();
        let status = repo.status.clone().unwrap_or_default();
        // Fleet acts only on a commit it has not been told about yet.
        if commit.is_empty() || status.webhook_commit == commit {
            continue;
        }
        let namespace = repo.namespace().unwrap_or_default();
        let secret = if spec.webhook_secret.is_empty() {
            global.clone()
        } else {
            match read_data(&ctx.client, &namespace, &spec.webhook_secret).await? {
                Some(data) => Some(data),
                None => {
                    return Ok(Err((
                        StatusCode::INTERNAL_SERVER_ERROR,
                        format!(
                            "GitRepo {namespace}/{}: webhook secret {:?} does not exist",
                            repo.name_any(),
                            spec.webhook_secret
                        ),
                    )));
                }
            }
        };
        if let Some(data) = &secret {
            let key = secret_for(event.provider, data);
            if let Err(err) = verify_and_parse(method, headers, body, key.as_deref()) {
                return Ok(Err((err.status(), err.to_string())));
            }
        }
        record(ctx, &repo, &event).await?;
        let key = format!("{namespace}/{}", repo.name_any());
        lock(&ctx.webhook_requests).insert(key.clone());
        ctx.triggers.gitrepo(&namespace, &repo.name_any());
        triggered.push(key);
    }
    Ok(Ok(triggered))
}

/// Writes the pushed commit into the GitRepo's status and, when it has no polling interval, gives it
/// [`WEBHOOK_POLLING_INTERVAL`].
async fn record(ctx: &Context, repo: &GitRepo, event: &PushEvent) -> Result<()> {
    let api: Api<GitRepo> =
        Api::namespaced(ctx.client.clone(), &repo.namespace().unwrap_or_default());
    let status = json!({"status": {
        "webhookCommit": event.commit,
        "lastWebhookTime": crate::status::conditions::now(),
    }});
    api.patch_status(
        &repo.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&status),
    )
    .await?;
    if repo.spec.polling_interval.is_none() {
        let spec = json!({"spec": {"pollingInterval": WEBHOOK_POLLING_INTERVAL}});
        api.patch(
            &repo.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&spec),
        )
        .await?;
    }
    Ok(())
}
