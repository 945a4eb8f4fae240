//! The git push webhook: verify the request with `fleet_git::webhook` (the secret is the key for the
//! provider in the `gitjob-webhook` Secret of the controller's namespace, or the GitRepo's `webhookSecret`),
//! find the GitRepos following the pushed repository and branch, and make each poll now.

use std::collections::BTreeMap;

use fleet_api::GitRepo;
use fleet_git::webhook::{Provider, WebhookError, secret_for, verify_and_parse};
use http::{HeaderMap, Method, StatusCode};
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::{Api, ListParams};

use crate::context::{Context, lock};
use crate::error::Result;

/// Name of the global webhook Secret (Fleet's).
pub const WEBHOOK_SECRET: &str = "gitjob-webhook";

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
        Ok(Err(err)) => (err.status(), err.to_string()),
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
) -> Result<Result<Vec<String>, WebhookError>> {
    let global = secret_data(ctx, &ctx.settings.system_namespace, WEBHOOK_SECRET).await?;
    let secret = Provider::detect(headers)
        .and_then(|p| global.as_ref().and_then(|data| secret_for(p, data)));
    let event = match verify_and_parse(method, headers, body, secret.as_deref()) {
        Ok(event) => event,
        Err(err) => return Ok(Err(err)),
    };
    let repos = Api::<GitRepo>::all(ctx.client.clone())
        .list(&ListParams::default())
        .await?;
    let mut triggered = Vec::new();
    for repo in repos.items {
        let spec = &repo.spec;
        if !event.matches(&spec.repo, Some(&spec.branch), Some(&spec.revision)) {
            continue;
        }
        let namespace = repo.namespace().unwrap_or_default();
        if !spec.webhook_secret.is_empty() {
            // A GitRepo with its own secret accepts only requests that verify against it.
            let own = secret_data(ctx, &namespace, &spec.webhook_secret).await?;
            let key = own
                .as_ref()
                .and_then(|data| secret_for(event.provider, data));
            if key.is_none() || verify_and_parse(method, headers, body, key.as_deref()).is_err() {
                continue;
            }
        }
        let key = format!("{namespace}/{}", repo.name_any());
        lock(&ctx.webhook_requests).insert(key.clone());
        ctx.triggers.gitrepo(&namespace, &repo.name_any());
        triggered.push(key);
    }
    Ok(Ok(triggered))
}

async fn secret_data(
    ctx: &Context,
    namespace: &str,
    name: &str,
) -> Result<Option<BTreeMap<String, Vec<u8>>>> {
    let secret = Api::<Secret>::namespaced(ctx.client.clone(), namespace)
        .get_opt(name)
        .await?;
    Ok(secret.map(|s| {
        s.data
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k, v.0))
            .collect()
    }))
}
