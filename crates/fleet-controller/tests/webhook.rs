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
    let (status, message) = handle(&ctx, &Method::POST, &headers, &body).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{message}");
    assert!(!message.contains("s3cret"));
    controller.stop().await;
}
