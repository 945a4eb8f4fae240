//! GitRepoRestrictions end to end against the embedded API server with a real git repository: defaults are
//! filled in (the Bundle gets `defaultServiceAccount`, a GitRepo without a client secret uses
//! `defaultClientSecretName`), a disallowed service account or repository gets `Accepted=False` with Fleet's
//! message and a `FailedToApplyRestrictions` event, a restriction change re-reconciles the namespace's
//! GitRepos (rejecting one without touching its deployed Bundle, accepting it again, and re-reading it
//! when a default changes, also one changed while the controller was down), `allowedTargetNamespaces`
//! requires a target namespace, and `allowedTargetNamespaceSelector` reaches the BundleDeployments' options
//! of every Bundle labelled with a GitRepo (as in Fleet, also one no GitRepo owns, and over the Bundle's
//! own selector), follows restriction changes, and survives a restart. A hub without the
//! GitRepoRestriction CRD has no restrictions.

mod support;

use fleet_api::{Bundle, BundleDeployment, GitRepo, GitRepoRestriction};
use fleet_testing::GitFixture;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use support::*;

const CONFIGMAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n";

/// A restriction allowing the service accounts `fleet-sa` and `other-sa`, defaulting to `default`, for
/// repositories matching `repo_pattern`.
fn service_accounts_policy(default: &str, repo_pattern: &str) -> serde_json::Value {
    json!({
        "defaultServiceAccount": default,
        "allowedServiceAccounts": ["fleet-sa", "other-sa"],
        "allowedRepoPatterns": [repo_pattern],
    })
}

async fn put_restriction(client: &kube::Client, namespace: &str, fields: serde_json::Value) {
    let mut object = json!({
        "apiVersion": "fleet.cattle.io/v1alpha1",
        "kind": "GitRepoRestriction",
        "metadata": {"name": "policy", "namespace": namespace},
    });
    object
        .as_object_mut()
        .unwrap()
        .extend(fields.as_object().unwrap().clone());
    Api::<GitRepoRestriction>::namespaced(client.clone(), namespace)
        .patch(
            "policy",
            &PatchParams::apply("test").force(),
            &Patch::Apply(&object),
        )
        .await
        .expect("apply restriction");
}

async fn bundle(client: &kube::Client, name: &str) -> Option<Bundle> {
    Api::<Bundle>::namespaced(client.clone(), NS)
        .get_opt(name)
        .await
        .unwrap()
}

/// The `Accepted` condition once it has `status`.
async fn accepted(client: &kube::Client, repo: &str, status: &str) -> String {
    eventually(&format!("{repo} Accepted={status}"), || async {
        let (found, message) = condition(&gitrepo(client, repo).await, "Accepted")?;
        (found == status).then_some(message)
    })
    .await
}

/// A hub with cluster `a` (env=prod), a git repository with one bundle (`web`), `restriction` in [`NS`], and
/// a GitRepo per `(name, extra spec fields)` targeting env=prod; then a running controller.
/// A BundleDeployment whose options carry service account `account`, once one does.
async fn deployment_with_service_account(client: &kube::Client, account: &str) -> BundleDeployment {
    eventually(
        &format!("a BundleDeployment with service account {account}"),
        || async {
            deployments(client)
                .await
                .into_values()
                .find(|bd| bd.spec.options.service_account == account)
        },
    )
    .await
}

async fn setup(
    restriction: serde_json::Value,
    repos: &[(&str, serde_json::Value)],
) -> (fleet_testing::TestCluster, GitFixture, RunningController) {
    let hub = hub().await;
    let client = hub.client.clone();
    put_cluster(&client, "a", &[("env", "prod")]).await;
    let git = GitFixture::new();
    git.write("web/configmap.yaml", CONFIGMAP);
    git.commit("first");
    put_restriction(&client, NS, restriction).await;
    for (name, extra) in repos {
        let mut spec = json!({"repo": git.url(), "branch": "main", "paths": ["web"],
            "targets": [{"clusterSelector": {"matchLabels": {"env": "prod"}}}]});
        spec.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        create_gitrepo(&client, name, spec).await;
    }
    let controller = RunningController::start(client).await;
    (hub, git, controller)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restrictions_default_reject_and_follow_changes() {
    let (hub, git, controller) = setup(
        service_accounts_policy("fleet-sa", "^file://"),
        &[
            ("allowed", json!({})),
            ("denied", json!({"serviceAccount": "root"})),
        ],
    )
    .await;
    let client = hub.client.clone();

    // The default service account is filled in.
    let deployed = eventually(
        "the allowed Bundle with the default service account",
        || async {
            bundle(&client, "allowed-web")
                .await
                .filter(|b| b.spec.options.service_account == "fleet-sa")
        },
    )
    .await;
    assert_eq!(accepted(&client, "allowed", "True").await, "");
    let bd = eventually("the BundleDeployment", || async {
        deployments(&client).await.into_values().next()
    })
    .await;
    assert_eq!(bd.spec.options.service_account, "fleet-sa");

    // A service account outside the allowed set is rejected as Fleet words it; nothing is written.
    let message = accepted(&client, "denied", "False").await;
    assert_eq!(
        message,
        "disallowed serviceAccount root: root not in allowed set [fleet-sa other-sa]"
    );
    let event = event_about(&client, NS, "FailedToApplyRestrictions", "denied").await;
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(event.note.as_deref(), Some(message.as_str()));
    assert!(bundle(&client, "denied-web").await.is_none());
    assert!(
        gitrepo(&client, "denied")
            .await
            .status
            .unwrap()
            .commit
            .is_empty(),
        "a rejected GitRepo is not polled"
    );

    // A restriction change alone re-reconciles: the repository no longer matches, the GitRepo is rejected,
    // and what it deployed stays as it was.
    put_restriction(
        &client,
        NS,
        service_accounts_policy("fleet-sa", "^https://github.com/acme/"),
    )
    .await;
    let message = accepted(&client, "allowed", "False").await;
    assert_eq!(
        message,
        format!(
            "disallowed repo {url}: {url} not in allowed set [^https://github.com/acme/]",
            url = git.url()
        )
    );
    let kept = bundle(&client, "allowed-web").await.unwrap();
    assert_eq!(kept.spec, deployed.spec);
    assert_eq!(kept.metadata.generation, deployed.metadata.generation);
    let kept_bd = deployments(&client).await.into_values().next().unwrap();
    assert_eq!(kept_bd.spec.deployment_id, bd.spec.deployment_id);

    // Allowed again, with another default: accepted, and the commit is read again with it.
    put_restriction(&client, NS, service_accounts_policy("other-sa", "^file://")).await;
    accepted(&client, "allowed", "True").await;
    eventually("the Bundle read with the new default", || async {
        bundle(&client, "allowed-web")
            .await
            .filter(|b| b.spec.options.service_account == "other-sa")
    })
    .await;
    // A default change without a rejection in between re-reads too.
    put_restriction(&client, NS, service_accounts_policy("fleet-sa", "^file://")).await;
    eventually("the Bundle read with the restored default", || async {
        bundle(&client, "allowed-web")
            .await
            .filter(|b| b.spec.options.service_account == "fleet-sa")
    })
    .await;
    // The rejected GitRepo is still rejected for its own service account.
    assert_eq!(
        condition(&gitrepo(&client, "denied").await, "Accepted")
            .unwrap()
            .0,
        "False"
    );
    controller.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_client_secret_is_used_for_git() {
    let hub = hub().await;
    let client = hub.client.clone();
    let namespace = "restricted";
    create_namespace(&client, namespace).await;
    put_restriction(
        &client,
        namespace,
        json!({"defaultClientSecretName": "git-credentials"}),
    )
    .await;
    let git = GitFixture::new();
    git.write("web/configmap.yaml", CONFIGMAP);
    git.commit("first");
    let repo: GitRepo = serde_json::from_value(json!({
        "apiVersion": "fleet.cattle.io/v1alpha1",
        "kind": "GitRepo",
        "metadata": {"name": "app", "namespace": namespace},
        "spec": {"repo": git.url(), "branch": "main", "paths": ["web"]},
    }))
    .unwrap();
    let repos: Api<GitRepo> = Api::namespaced(client.clone(), namespace);
    repos.create(&PostParams::default(), &repo).await.unwrap();
    let controller = RunningController::start(client.clone()).await;
    // The GitRepo names no secret, so the missing secret it is told about is the restriction's default.
    let message = eventually("the default secret looked up", || async {
        let repo = repos.get("app").await.ok()?;
        let (status, message) = condition(&repo, "GitPolling")?;
        (status == "False").then_some(message)
    })
    .await;
    assert!(
        message.contains("clientSecretName: secret \"git-credentials\" not found"),
        "{message}"
    );
    assert!(
        repos
            .get("app")
            .await
            .unwrap()
            .spec
            .client_secret_name
            .is_empty(),
        "the default is applied in memory, the GitRepo's spec is not rewritten"
    );
    controller.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn target_namespaces_are_required_and_the_selector_reaches_the_deployments() {
    let (hub, _git, controller) = setup(
        json!({
            "allowedTargetNamespaces": ["apps"],
            "allowedTargetNamespaceSelector": {"matchLabels": {"team": "web"}},
        }),
        &[
            ("anywhere", json!({})),
            ("apps", json!({"targetNamespace": "apps"})),
        ],
    )
    .await;
    let client = hub.client.clone();
    assert_eq!(
        accepted(&client, "anywhere", "False").await,
        "empty targetNamespace denied, because allowedTargetNamespaces restriction is present"
    );
    let bd = eventually("the BundleDeployment of the allowed GitRepo", || async {
        deployments(&client).await.into_values().next()
    })
    .await;
    assert_eq!(bd.spec.options.target_namespace, "apps");
    assert_eq!(
        serde_json::to_value(&bd.spec.options.allowed_target_namespace_selector).unwrap(),
        json!({"matchLabels": {"team": "web"}})
    );
    assert_eq!(
        deployments(&client).await.len(),
        1,
        "nothing for the rejected GitRepo"
    );
    controller.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_default_changed_while_the_controller_is_down_is_applied_after_the_restart() {
    let (hub, _git, controller) = setup(
        service_accounts_policy("fleet-sa", "^file://"),
        &[("allowed", json!({}))],
    )
    .await;
    let client = hub.client.clone();
    let bd = deployment_with_service_account(&client, "fleet-sa").await;
    controller.stop().await;

    // Down: the default changes. Up again: the same commit is read again with it.
    put_restriction(&client, NS, service_accounts_policy("other-sa", "^file://")).await;
    let controller = RunningController::start(client.clone()).await;
    eventually("the Bundle read with the new default", || async {
        bundle(&client, "allowed-web")
            .await
            .filter(|b| b.spec.options.service_account == "other-sa")
    })
    .await;
    let moved = deployment_with_service_account(&client, "other-sa").await;
    assert_ne!(moved.spec.deployment_id, bd.spec.deployment_id);
    controller.stop().await;

    // Nothing changed while down: a restart reads nothing again and rewrites nothing.
    let before = bundle(&client, "allowed-web").await.unwrap();
    let controller = RunningController::start(client.clone()).await;
    eventually("the GitRepo reconciled after the restart", || async {
        (controller.reconciles("gitrepo") >= 1 && controller.reconciles("bundle") >= 1)
            .then_some(())
    })
    .await;
    let after = bundle(&client, "allowed-web").await.unwrap();
    assert_eq!(
        after.metadata.resource_version,
        before.metadata.resource_version
    );
    let kept = deployments(&client).await.into_values().next().unwrap();
    assert_eq!(
        kept.metadata.resource_version,
        moved.metadata.resource_version
    );
    controller.stop().await;
}

/// Creates a Bundle by hand (no GitRepo owns it) with a ConfigMap and its own namespace selector (team=any),
/// targeting env=prod.
async fn create_bundle(client: &kube::Client, name: &str, labels: serde_json::Value) {
    let bundle: Bundle = serde_json::from_value(json!({
        "apiVersion": "fleet.cattle.io/v1alpha1",
        "kind": "Bundle",
        "metadata": {"name": name, "namespace": NS, "labels": labels},
        "spec": {
            "defaultNamespace": "apps",
            "allowedTargetNamespaceSelector": {"matchLabels": {"team": "any"}},
            "resources": [{"name": "configmap.yaml", "content": CONFIGMAP}],
            "targets": [{"clusterSelector": {"matchLabels": {"env": "prod"}}}],
        },
    }))
    .unwrap();
    Api::<Bundle>::namespaced(client.clone(), NS)
        .create(&PostParams::default(), &bundle)
        .await
        .expect("create bundle");
}

/// The BundleDeployment of Bundle `name` once its namespace selector is `selector`.
async fn deployment_with_selector(
    client: &kube::Client,
    name: &str,
    selector: serde_json::Value,
) -> BundleDeployment {
    eventually(
        &format!("{name} deployed with selector {selector}"),
        || async {
            deployments(client)
                .await
                .into_values()
                .filter(|bd| bd.metadata.name.as_deref() == Some(name))
                .find(|bd| {
                    serde_json::to_value(&bd.spec.options.allowed_target_namespace_selector)
                        .unwrap()
                        == selector
                })
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_namespace_selector_reaches_every_bundle_labelled_with_a_gitrepo() {
    let hub = hub().await;
    let client = hub.client.clone();
    put_cluster(&client, "a", &[("env", "prod")]).await;
    put_restriction(
        &client,
        NS,
        json!({"allowedTargetNamespaceSelector": {"matchLabels": {"team": "web"}}}),
    )
    .await;
    // Neither is owned by a GitRepo; only the first carries the GitRepo label Fleet keys on.
    create_bundle(
        &client,
        "labelled",
        json!({"fleet.cattle.io/repo-name": "elsewhere"}),
    )
    .await;
    create_bundle(&client, "unlabelled", json!({})).await;
    let controller = RunningController::start(client.clone()).await;

    // The restriction's selector replaces the Bundle's own; a Bundle without the label keeps its own.
    let labelled =
        deployment_with_selector(&client, "labelled", json!({"matchLabels": {"team": "web"}}))
            .await;
    let unlabelled = deployment_with_selector(
        &client,
        "unlabelled",
        json!({"matchLabels": {"team": "any"}}),
    )
    .await;

    // A restart plans the same deployments: nothing is written again.
    controller.stop().await;
    let controller = RunningController::start(client.clone()).await;
    eventually("both Bundles reconciled after the restart", || async {
        (controller.reconciles("bundle") >= 2).then_some(())
    })
    .await;
    let after = deployments(&client).await;
    for bd in [&labelled, &unlabelled] {
        let now = after
            .values()
            .find(|b| b.metadata.name == bd.metadata.name)
            .unwrap();
        assert_eq!(now.metadata.resource_version, bd.metadata.resource_version);
    }

    // A restriction change re-targets the labelled Bundle at once; the other is left alone.
    put_restriction(
        &client,
        NS,
        json!({"allowedTargetNamespaceSelector": {"matchLabels": {"team": "api"}}}),
    )
    .await;
    let moved =
        deployment_with_selector(&client, "labelled", json!({"matchLabels": {"team": "api"}}))
            .await;
    assert_ne!(moved.spec.deployment_id, labelled.spec.deployment_id);
    // Without a selector in the restrictions, the Bundle's own applies again.
    put_restriction(&client, NS, json!({"allowedServiceAccounts": ["fleet-sa"]})).await;
    deployment_with_selector(&client, "labelled", json!({"matchLabels": {"team": "any"}})).await;
    let kept = deployments(&client)
        .await
        .into_values()
        .find(|b| b.metadata.name.as_deref() == Some("unlabelled"))
        .unwrap();
    assert_eq!(
        kept.metadata.resource_version,
        unlabelled.metadata.resource_version
    );
    controller.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hub_without_the_restriction_crd_has_no_restrictions() {
    let hub = fleet_testing::TestCluster::empty();
    hub.install_crds(
        fleet_api::crds()
            .into_iter()
            .filter(|crd| crd.spec.names.kind != "GitRepoRestriction")
            .collect(),
    )
    .await;
    let client = hub.client.clone();
    create_namespace(&client, NS).await;
    put_cluster(&client, "a", &[("env", "prod")]).await;
    let git = GitFixture::new();
    git.write("web/configmap.yaml", CONFIGMAP);
    git.commit("first");
    create_gitrepo(
        &client,
        "web",
        json!({"repo": git.url(), "branch": "main", "paths": ["web"],
               "targets": [{"clusterSelector": {"matchLabels": {"env": "prod"}}}]}),
    )
    .await;
    // Nothing waits for a restriction list that cannot come: the GitRepo is deployed.
    let controller = RunningController::start(client.clone()).await;
    let bd = eventually("the BundleDeployment", || async {
        deployments(&client).await.into_values().next()
    })
    .await;
    assert!(bd.spec.options.allowed_target_namespace_selector.is_none());
    controller.stop().await;
}
