//! The push webhook: a GitRepo with polling disabled follows a push as soon as the webhook reports it;
//! wrong methods get 405 and, once a webhook secret exists, unsigned requests get 401.

mod support;

use fleet_controller::webhook::{WEBHOOK_SECRET, handle};
use fleet_testing::GitFixture;
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use serde_json::json;

use support::*;

fn github_push(url: &str, commit: &str) -> (HeaderMap, Vec<u8>) {
    let mut headers = HeaderMap::new();
    headers.insert("x-github-event", HeaderValue::from_static("push"));
    let body = json!({
        "ref": "refs/heads/main",
        "after": commit,
        "repository": {"html_url": url, "clone_url": url},
    });
    (headers, body.to_string().into_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_event_triggers_an_immediate_fetch() {
    let hub = hub().await;
    let client = hub.client.clone();
    put_cluster(&client, "a", &[("env", "prod")]).await;
    let git = GitFixture::new();
    git.write(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    );
    let first = git.commit("one");
    create_gitrepo(
        &client,
        "repo",
        json!({"repo": git.url(), "branch": "main", "disablePolling": true, "targets": [{"clusterSelector": {}}]}),
    )
    .await;
    let controller = RunningController::start(client.clone()).await;
    let ctx = controller.context.clone();
    eventually("first commit", || async {
        (gitrepo(&client, "repo").await.status?.commit == first).then_some(())
    })
    .await;

    git.write(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n",
    );
    let second = git.commit("two");
    let (headers, body) = github_push(&git.url(), &second);
    let (status, message) = handle(&ctx, &Method::GET, &headers, &body).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{message}");
    let (status, message) = handle(&ctx, &Method::POST, &headers, &body).await;
    assert_eq!(
        (status, message.as_str()),
        (StatusCode::OK, "1 GitRepo(s) triggered")
    );
    eventually("second commit fetched", || async {
        (gitrepo(&client, "repo").await.status?.commit == second).then_some(())
    })
    .await;
    // As Fleet's handler does, the push is recorded, and a GitRepo without a polling interval gets one hour.
    let repo = gitrepo(&client, "repo").await;
    let status = repo.status.clone().unwrap();
    assert_eq!(status.webhook_commit, second);
    assert!(status.last_webhook_time.is_some());
    assert_eq!(repo.spec.polling_interval.as_deref(), Some("1h"));
    // The same commit again is nothing new.
    let (status, message) = handle(&ctx, &Method::POST, &headers, &body).await;
    assert_eq!(
        (status, message.as_str()),
        (StatusCode::OK, "0 GitRepo(s) triggered")
    );

    // With the global webhook secret in place, an unsigned request is refused.
    create_namespace(&client, &ctx.settings.system_namespace).await;
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": WEBHOOK_SECRET},
        "data": {"github": "czNjcmV0"},
    }))
    .unwrap();
    Api::<Secret>::namespaced(client.clone(), &ctx.settings.system_namespace)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    git.write(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: z\n",
    );
    let third = git.commit("three");
    let (headers, body) = github_push(&git.url(), &third);
    let (status, message) = handle(&ctx, &Method::POST, &headers, &body).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{message}");
    assert!(!message.contains("s3cret"));
    controller.stop().await;
}

/// As in Fleet's handler, a GitRepo's own `webhookSecret` takes precedence over the global secret and must
/// exist: a request signed with the global secret is refused for it, one signed with its own is accepted,
/// and a GitRepo naming a Secret that does not exist fails the request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gitrepos_own_secret_takes_precedence_over_the_global_one() {
    let hub = hub().await;
    let client = hub.client.clone();
    let git = GitFixture::new();
    git.write(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    );
    let commit = git.commit("one");
    create_gitrepo(
        &client,
        "own",
        json!({"repo": git.url(), "branch": "main", "disablePolling": true, "webhookSecret": "own-hook"}),
    )
    .await;
    let controller = RunningController::start(client.clone()).await;
    let ctx = controller.context.clone();
    let (mut headers, body) = github_push(&git.url(), &commit);
    let signed = |headers: &mut HeaderMap, secret: &[u8]| {
        headers.insert(
            "x-hub-signature-256",
            HeaderValue::from_str(&fleet_testing::github_signature(secret, &body)).unwrap(),
        );
    };

    // Its Secret does not exist yet: the request fails, and the GitRepo records nothing.
    let (status, message) = handle(&ctx, &Method::POST, &headers, &body).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{message}");
    assert!(message.contains("\"own-hook\" does not exist"), "{message}");

    create_namespace(&client, &ctx.settings.system_namespace).await;
    for (namespace, name, key) in [
        (
            ctx.settings.system_namespace.as_str(),
            WEBHOOK_SECRET,
            "Z2xvYmFs",
        ),
        (NS, "own-hook", "b3du"),
    ] {
        let secret: Secret = serde_json::from_value(json!({
            "metadata": {"name": name},
            "data": {"github": key},
        }))
        .unwrap();
        Api::<Secret>::namespaced(client.clone(), namespace)
            .create(&PostParams::default(), &secret)
            .await
            .unwrap();
    }
    signed(&mut headers, b"global");
    let (status, message) = handle(&ctx, &Method::POST, &headers, &body).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{message}");
    assert!(
        gitrepo(&client, "own")
            .await
            .status
            .unwrap_or_default()
            .webhook_commit
            .is_empty()
    );
    signed(&mut headers, b"own");
    let (status, message) = handle(&ctx, &Method::POST, &headers, &body).await;
    assert_eq!(
        (status, message.as_str()),
        (StatusCode::OK, "1 GitRepo(s) triggered")
    );
    assert_eq!(
        gitrepo(&client, "own").await.status.unwrap().webhook_commit,
        commit
    );
    controller.stop().await;
}
