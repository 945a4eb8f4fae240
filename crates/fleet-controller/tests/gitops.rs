//! End to end against the embedded API server with real git repositories: a commit becomes Bundles and
//! BundleDeployments on exactly the targeted clusters (with targetCustomizations), a cluster label change
//! re-targets, a broken bundle keeps its last good version without holding back the others, a force-push
//! goes back, and deleting the GitRepo removes Bundles, BundleDeployments and Content. Git failures (an
//! unreachable host, a deleted branch, a refused authentication, credentials over plain http) are reported
//! in the GitRepo's status and Events in words a user can act on, never with the credentials.

mod support;

use fleet_api::{Bundle, Content};
use fleet_testing::GitFixture;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams};
use serde_json::json;

use support::*;

const CONFIGMAP: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  version: \"1\"\n";

fn bundle_commit(bundle: &Bundle) -> String {
    bundle
        .labels()
        .get("fleet.cattle.io/commit")
        .cloned()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_become_deployments_on_exactly_the_targeted_clusters() {
    let hub = hub().await;
    let client = hub.client.clone();
    put_cluster(&client, "a", &[("env", "prod")]).await;
    put_cluster(&client, "b", &[("env", "prod"), ("region", "eu")]).await;
    put_cluster(&client, "c", &[("env", "dev")]).await;
    let group: fleet_api::ClusterGroup = serde_json::from_value(json!({
        "apiVersion": "fleet.cattle.io/v1alpha1",
        "kind": "ClusterGroup",
        "metadata": {"name": "prod", "namespace": NS},
        "spec": {"selector": {"matchLabels": {"env": "prod"}}},
    }))
    .unwrap();
    let groups: Api<fleet_api::ClusterGroup> = Api::namespaced(client.clone(), NS);
    groups
        .create(&kube::api::PostParams::default(), &group)
        .await
        .unwrap();

    let git = GitFixture::new();
    git.write("web/configmap.yaml", CONFIGMAP);
    git.write("api/configmap.yaml", CONFIGMAP);
    git.write(
        "api/fleet.yaml",
        "defaultNamespace: api\ntargetCustomizations:\n- name: eu\n  clusterSelector:\n    matchLabels:\n      region: eu\n  defaultNamespace: api-eu\n",
    );
    let first = git.commit("first");
    create_gitrepo(
        &client,
        "repo",
        json!({
            "repo": git.url(),
            "branch": "main",
            "paths": ["web", "api"],
            "targets": [{"name": "prod", "clusterSelector": {"matchLabels": {"env": "prod"}}}],
        }),
    )
    .await;
    let controller = RunningController::start(client.clone()).await;

    // Exactly clusters a and b get both bundles; the eu customization reaches only b.
    let bds = eventually("4 BundleDeployments", || async {
        let bds = deployments(&client).await;
        (bds.len() == 4).then_some(bds)
    })
    .await;
    let keys: Vec<(String, String)> = bds.keys().cloned().collect();
    assert_eq!(
        keys,
        [
            ("a", "repo-api"),
            ("a", "repo-web"),
            ("b", "repo-api"),
            ("b", "repo-web")
        ]
        .map(|(c, b)| (c.to_string(), b.to_string()))
    );
    assert_eq!(
        bds[&("a".into(), "repo-api".into())]
            .spec
            .options
            .default_namespace,
        "api"
    );
    assert_eq!(
        bds[&("b".into(), "repo-api".into())]
            .spec
            .options
            .default_namespace,
        "api-eu"
    );
    let bd = &bds[&("a".into(), "repo-web".into())];
    assert_eq!(
        bd.namespace().unwrap(),
        fleet_controller::cluster::cluster_namespace(NS, "a")
    );
    assert_eq!(bd.spec.deployment_id, bd.spec.staged_deployment_id);
    let manifest_id = bd.spec.deployment_id.split(':').next().unwrap().to_string();
    assert_eq!(bd.labels()["fleet.cattle.io/content-name"], manifest_id);
    assert_eq!(bd.labels()["fleet.cattle.io/repo-name"], "repo");
    let contents: Api<Content> = Api::all(client.clone());
    assert!(contents.get_opt(&manifest_id).await.unwrap().is_some());

    let bundles: Api<Bundle> = Api::namespaced(client.clone(), NS);
    let web = bundles.get("repo-web").await.unwrap();
    assert_eq!(bundle_commit(&web), first);
    assert_eq!(web.owner_references()[0].name, "repo");
    let repo = eventually("GitRepo status", || async {
        let repo = gitrepo(&client, "repo").await;
        let status = repo.status.clone()?;
        (status.commit == first && status.base.display.ready_bundle_deployments == "0/4")
            .then_some(repo)
    })
    .await;
    assert_eq!(condition(&repo, "GitPolling").unwrap().0, "True");

    // The agent reports everything ready: the GitRepo and Bundles say so.
    for bd in deployments(&client).await.values() {
        report_ready(&client, bd).await;
    }
    eventually("all ready", || async {
        let repo = gitrepo(&client, "repo").await;
        let status = repo.status.clone()?;
        let ready = condition(&repo, "Ready")?;
        (status.base.display.ready_bundle_deployments == "4/4"
            && status.base.ready_clusters == 2
            && ready.0 == "True")
            .then_some(())
    })
    .await;
    // The group of the two prod clusters sums their BundleDeployments.
    let group = eventually("ClusterGroup status", || async {
        let status = groups.get("prod").await.unwrap().status?;
        (status.display.ready_bundles == "4/4").then_some(status)
    })
    .await;
    assert_eq!(
        (
            group.cluster_count,
            group.non_ready_cluster_count,
            group.display.ready_clusters.as_str(),
            group.display.state.as_str(),
        ),
        // Fleet's display state of an all-Ready group is empty.
        (2, 0, "2/2", "")
    );
    // Bundles and BundleDeployments by state, and the (drained) reconcile queue, are exported.
    eventually("by-state metrics", || async {
        let text = controller.context.metrics.encode();
        (text.contains("fleet_controller_bundle_deployments{state=\"Ready\"} 4")
            && text.contains("fleet_controller_bundles{state=\"Ready\"} 2")
            && text.contains("fleet_controller_queue_depth{controller=\"bundle\"} 0"))
        .then_some(())
    })
    .await;

    // Cluster c joins prod, a leaves: BundleDeployments follow; b's stay untouched.
    let before_b = deployments(&client).await[&("b".into(), "repo-web".into())].clone();
    put_cluster(&client, "c", &[("env", "prod")]).await;
    put_cluster(&client, "a", &[("env", "staging")]).await;
    let bds = eventually("re-targeted", || async {
        let bds = deployments(&client).await;
        let clusters: std::collections::BTreeSet<String> =
            bds.keys().map(|k| k.0.clone()).collect();
        (clusters == ["b".to_string(), "c".to_string()].into()).then_some(bds)
    })
    .await;
    assert_eq!(bds.len(), 4);
    let after_b = &bds[&("b".into(), "repo-web".into())];
    assert_eq!(
        after_b.metadata.resource_version,
        before_b.metadata.resource_version
    );

    // A broken fleet.yaml in api and a change in web: web moves on, api keeps its last good spec.
    let before_api = bundles.get("repo-api").await.unwrap();
    git.write("web/configmap.yaml", &CONFIGMAP.replace("\"1\"", "\"2\""));
    git.write("api/fleet.yaml", "defaultNamespace: [broken\n");
    let second = git.commit("second");
    let repo = eventually("the broken commit processed", || async {
        let repo = gitrepo(&client, "repo").await;
        (repo.status.as_ref()?.commit == second).then_some(repo)
    })
    .await;
    let (stalled, message) = condition(&repo, "Stalled").unwrap();
    assert_eq!(stalled, "True");
    assert!(message.contains("api/fleet.yaml:1:"), "{message}");
    let ready = condition(&repo, "Ready").unwrap();
    assert_eq!(ready.0, "False");
    assert!(ready.1.contains("api/fleet.yaml"), "{}", ready.1);
    assert_eq!(
        bundle_commit(&bundles.get("repo-web").await.unwrap()),
        second
    );
    let api_bundle = bundles.get("repo-api").await.unwrap();
    assert_eq!(api_bundle.spec, before_api.spec);
    assert_eq!(bundle_commit(&api_bundle), first);
    eventually("the broken bundle's Ready condition", || async {
        let bundle = bundles.get("repo-api").await.ok()?;
        let ready = bundle
            .status?
            .conditions
            .into_iter()
            .find(|c| c.type_ == "Ready")?;
        (ready.status == "False" && ready.message.contains("api/fleet.yaml")).then_some(())
    })
    .await;

    // A force-push back to the first commit restores everything from it.
    git.git(&["reset", "-q", "--hard", &first]);
    eventually("force-push followed", || async {
        let repo = gitrepo(&client, "repo").await;
        let web = bundles.get("repo-web").await.ok()?;
        let api = bundles.get("repo-api").await.ok()?;
        (repo.status?.commit == first
            && bundle_commit(&web) == first
            && bundle_commit(&api) == first
            && !api.annotations().contains_key("fleet.cattle.io/read-error"))
        .then_some(())
    })
    .await;

    // Deleting the GitRepo removes its Bundles, BundleDeployments and Content.
    Api::<fleet_api::GitRepo>::namespaced(client.clone(), NS)
        .delete("repo", &DeleteParams::default())
        .await
        .unwrap();
    eventually("everything removed", || async {
        let bundles_left = bundles.list(&Default::default()).await.ok()?.items.len();
        let bds_left = deployments(&client).await.len();
        let contents_left = contents.list(&Default::default()).await.ok()?.items.len();
        let repo_gone = Api::<fleet_api::GitRepo>::namespaced(client.clone(), NS)
            .get_opt("repo")
            .await
            .ok()?
            .is_none();
        (bundles_left == 0 && bds_left == 0 && contents_left == 0 && repo_gone).then_some(())
    })
    .await;
    controller.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn git_errors_are_reported_without_touching_bundles() {
    let hub = hub().await;
    let client = hub.client.clone();
    put_cluster(&client, "a", &[("env", "prod")]).await;
    let git = GitFixture::new();
    git.write("app/configmap.yaml", CONFIGMAP);
    git.commit("first");
    git.git(&["branch", "feature"]);
    let all = json!([{"clusterSelector": {}}]);
    create_gitrepo(
        &client,
        "feature",
        json!({"repo": git.url(), "branch": "feature", "targets": all}),
    )
    .await;
    create_gitrepo(
        &client,
        "unreachable",
        json!({"repo": "http://127.0.0.1:9/nothing.git", "targets": all}),
    )
    .await;
    let controller = RunningController::start(client.clone()).await;
    let bundles: Api<Bundle> = Api::namespaced(client.clone(), NS);
    eventually("bundle of the feature branch", || async {
        bundles.get_opt("feature").await.ok()?.map(|_| ())
    })
    .await;

    let message = eventually("unreachable remote reported", || async {
        let repo = gitrepo(&client, "unreachable").await;
        let (status, message) = condition(&repo, "GitPolling")?;
        (status == "False").then_some(message)
    })
    .await;
    assert!(
        message.contains("cannot reach http://127.0.0.1:9/nothing.git"),
        "{message}"
    );
    let ready = condition(&gitrepo(&client, "unreachable").await, "Ready").unwrap();
    assert_eq!(ready, ("False".to_string(), message.clone()));
    // The failure is also a Warning Event on the GitRepo.
    let event = event_about(&client, NS, "GitPollingFailed", "unreachable").await;
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(event.note.as_deref(), Some(message.as_str()));

    // Deleting the branch: polling fails with "not found", the last Bundles stay.
    git.git(&["branch", "-D", "feature"]);
    let message = eventually("deleted branch reported", || async {
        let repo = gitrepo(&client, "feature").await;
        let (status, message) = condition(&repo, "GitPolling")?;
        (status == "False").then_some(message)
    })
    .await;
    assert!(message.contains("not found"), "{message}");
    assert!(bundles.get_opt("feature").await.unwrap().is_some());
    controller.stop().await;
}

/// A git server that refuses every request for want of credentials (401 with a Basic challenge); its
/// repository URL.
async fn refusing_git_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = axum::Router::new().fallback(|| async {
        (
            http::StatusCode::UNAUTHORIZED,
            [(http::header::WWW_AUTHENTICATE, "Basic realm=\"git\"")],
            "",
        )
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}/private.git")
}

/// The message of the GitRepo's `GitPolling` condition once it is False.
async fn polling_failure(client: &kube::Client, name: &str) -> String {
    eventually(&format!("{name} GitPolling=False"), || async {
        let (status, message) = condition(&gitrepo(client, name).await, "GitPolling")?;
        (status == "False").then_some(message)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_authentication_is_reported_without_the_credentials() {
    let hub = hub().await;
    let client = hub.client.clone();
    let url = refusing_git_server().await;
    let password = "correct-horse-battery-staple";
    let secret: k8s_openapi::api::core::v1::Secret = serde_json::from_value(json!({
        "metadata": {"name": "git-auth", "namespace": NS},
        "type": "kubernetes.io/basic-auth",
        "stringData": {"username": "fleet", "password": password},
    }))
    .unwrap();
    Api::<k8s_openapi::api::core::v1::Secret>::namespaced(client.clone(), NS)
        .create(&Default::default(), &secret)
        .await
        .unwrap();
    let all = json!([{"clusterSelector": {}}]);
    create_gitrepo(&client, "anonymous", json!({"repo": url, "targets": all})).await;
    create_gitrepo(
        &client,
        "with-secret",
        json!({"repo": url, "clientSecretName": "git-auth", "targets": all}),
    )
    .await;
    let controller = RunningController::start(client.clone()).await;

    let message = polling_failure(&client, "anonymous").await;
    assert!(
        message.starts_with(&format!("authentication to {url} failed:")),
        "{message}"
    );
    let ready = condition(&gitrepo(&client, "anonymous").await, "Ready").unwrap();
    assert_eq!(ready, ("False".to_string(), message.clone()));
    let event = event_about(&client, NS, "GitPollingFailed", "anonymous").await;
    assert_eq!(event.note.as_deref(), Some(message.as_str()));

    // Credentials are not sent over plain http at all, and never shown.
    let message = polling_failure(&client, "with-secret").await;
    assert!(
        message.contains("refusing to send credentials") && message.contains("https://"),
        "{message}"
    );
    let repo = serde_json::to_string(&gitrepo(&client, "with-secret").await).unwrap();
    let event = event_about(&client, NS, "GitPollingFailed", "with-secret").await;
    let event = serde_json::to_string(&event).unwrap();
    for shown in [&repo, &event] {
        assert!(!shown.contains(password), "{shown}");
    }
    controller.stop().await;
}

/// The commit a GitRepo's status reports, once it reports `commit`.
async fn fetched_commit(client: &kube::Client, name: &str, commit: &str) {
    eventually(&format!("{name} at {commit}"), || async {
        (gitrepo(client, name).await.status?.commit == commit).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssh_host_keys_are_enforced_unless_known_or_skipped() {
    use fleet_testing::ssh::{FAKE_SSH_KEY, fake_ssh};
    let hub = hub().await;
    let client = hub.client.clone();
    let git = GitFixture::new();
    git.write("app/fleet.yaml", "defaultNamespace: web\n")
        .write("app/cm.yaml", CONFIGMAP);
    let commit = git.commit("first");
    let tools = tempfile::tempdir().unwrap();
    let ssh = fake_ssh(tools.path());
    let secret: k8s_openapi::api::core::v1::Secret = serde_json::from_value(json!({
        "metadata": {"name": "ssh-key", "namespace": NS},
        "type": "kubernetes.io/ssh-auth",
        "stringData": {"ssh-privatekey": FAKE_SSH_KEY},
    }))
    .unwrap();
    Api::<k8s_openapi::api::core::v1::Secret>::namespaced(client.clone(), NS)
        .create(&Default::default(), &secret)
        .await
        .unwrap();
    let system_namespace = fleet_controller::Settings::default().system_namespace;
    create_namespace(&client, &system_namespace).await;
    let all = json!([{"clusterSelector": {}}]);
    let url_at = |host: &str| format!("git@{host}:{}", git.path().display());
    for (name, host) in [("known", "git.test"), ("unknown", "elsewhere.test")] {
        create_gitrepo(
            &client,
            name,
            json!({
                "repo": url_at(host),
                "branch": "main",
                "clientSecretName": "ssh-key",
                "targets": all,
            }),
        )
        .await;
    }

    let strict = RunningController::start_with_settings(
        client.clone(),
        |settings| settings.ssh_program = ssh.clone().into(),
        |_| {},
    )
    .await;
    // No known_hosts anywhere yet: both hosts are refused, with a message that says what to do.
    for (name, host) in [("known", "git.test"), ("unknown", "elsewhere.test")] {
        let message = polling_failure(&client, name).await;
        assert!(
            message.starts_with(&format!(
                "host key verification failed for {}",
                url_at(host)
            )) && message.contains("known_hosts"),
            "{message}"
        );
    }
    // The shared `known-hosts` ConfigMap in the controller's namespace vouches for git.test only.
    let known_hosts: k8s_openapi::api::core::v1::ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "known-hosts", "namespace": system_namespace},
        "data": {"known_hosts": "git.test ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeHostKeyForTests\n"},
    }))
    .unwrap();
    Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(client.clone(), &system_namespace)
        .create(&Default::default(), &known_hosts)
        .await
        .unwrap();
    fetched_commit(&client, "known", &commit).await;
    let message = polling_failure(&client, "unknown").await;
    assert!(
        message.starts_with("host key verification failed"),
        "{message}"
    );
    strict.stop().await;

    // insecureSkipHostKeyChecks accepts the unknown host.
    let skipping = RunningController::start_with_settings(
        client.clone(),
        |settings| {
            settings.ssh_program = ssh.clone().into();
            settings.insecure_skip_host_key_checks = true;
        },
        |_| {},
    )
    .await;
    fetched_commit(&client, "unknown", &commit).await;
    skipping.stop().await;
}
