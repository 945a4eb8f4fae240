//! The helpers themselves: Fleet CRDs are served once installed, and fixtures make real commits.

use fleet_api::GitRepo;
use fleet_testing::{GitFixture, TestCluster};
use kube::api::{Api, PostParams};

#[tokio::test]
async fn fleet_crds_are_served_after_install() {
    let hub = TestCluster::with_fleet_crds().await;
    let repos: Api<GitRepo> = Api::namespaced(hub.client.clone(), "default");
    let repo: GitRepo = serde_json::from_value(serde_json::json!({
        "apiVersion": "fleet.cattle.io/v1alpha1",
        "kind": "GitRepo",
        "metadata": {"name": "sample"},
        "spec": {"repo": "https://example.invalid/repo", "paths": ["simple"]}
    }))
    .unwrap();
    repos.create(&PostParams::default(), &repo).await.unwrap();
    let stored = repos.get("sample").await.unwrap();
    assert_eq!(stored.spec.repo, "https://example.invalid/repo");
    assert_eq!(stored.spec.paths, vec!["simple".to_string()]);
}

#[test]
fn git_fixture_commits_change_head() {
    let repo = GitFixture::new();
    let first = repo.write("a.yaml", "a: 1\n").commit("first");
    let second = repo.write("a.yaml", "a: 2\n").commit("second");
    assert_eq!(first.len(), 40);
    assert_ne!(first, second);
    assert_eq!(repo.head(), second);
    assert!(repo.url().starts_with("file://"));
}
