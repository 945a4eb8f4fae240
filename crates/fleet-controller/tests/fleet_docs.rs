//! GitRepo behaviour as Rancher Fleet's documentation describes it: `spec.bundles` (gitrepo-content, the
//! user-driven scan) reads exactly the listed bundles with their options files; a Bundle's own error
//! (a templating error) shows on its GitRepo's Ready condition, display and `kubectl get` columns
//! (ref-status-fields); resource counts and the resource list of GitRepos, Clusters and ClusterGroups
//! (ref-status-fields, "Resources List" and "Resource Counts"); and pausing (gitrepo-add, "Pausing"): a
//! BundleDeployment or Bundle deleted while its GitRepo is paused comes back only when it is unpaused.

mod support;

use std::collections::BTreeSet;

use fleet_api::{Bundle, BundleDeployment, Cluster, ClusterGroup, GitRepo};
use fleet_testing::GitFixture;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::json;

use support::*;

fn configmap(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  a: b\n")
}

async fn bundle_names(client: &kube::Client) -> BTreeSet<String> {
    Api::<Bundle>::namespaced(client.clone(), NS)
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(ResourceExt::name_any)
        .collect()
}

/// A hub with the Cluster `a` labelled `env: prod`, and a client of it.
async fn hub_with_prod_cluster() -> (fleet_testing::TestCluster, kube::Client) {
    let hub = hub().await;
    let client = hub.client.clone();
    put_cluster(&client, "a", &[("env", "prod")]).await;
    (hub, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_bundles_reads_exactly_the_listed_bundles_with_their_options_files() {
    let (_hub, client) = hub_with_prod_cluster().await;
    let git = GitFixture::new();
    git.write("driven/app/cm.yaml", &configmap("app"))
        .write("driven/app/dev.yaml", "defaultNamespace: app-dev\n")
        .write("driven/app/prod.yaml", "defaultNamespace: app-prod\n")
        .write("driven/simple/cm.yaml", &configmap("simple"))
        // What a scan of the whole repository (or of `paths`) would find instead.
        .write("other/fleet.yaml", "defaultNamespace: other\n")
        .write("other/cm.yaml", &configmap("other"));
    git.commit("driven");
    create_gitrepo(
        &client,
        "repo",
        json!({
            "repo": git.url(), "branch": "main",
            "paths": ["other"],
            "bundles": [
                {"base": "driven/app", "options": "dev.yaml"},
                {"base": "driven/app", "options": "prod.yaml"},
                {"base": "driven/simple"},
            ],
            "targets": [{"clusterSelector": {}}],
        }),
    )
    .await;
    let controller = RunningController::start(client.clone()).await;
    let wanted: BTreeSet<String> = [
        "repo-driven-app-dev",
        "repo-driven-app-prod",
        "repo-driven-simple",
    ]
    .map(String::from)
    .into();
    let bds = eventually("the three driven BundleDeployments", || async {
        let bds = deployments(&client).await;
        (bds.len() == 3).then_some(bds)
    })
    .await;
    assert_eq!(bundle_names(&client).await, wanted);
    let namespace = |bundle: &str| {
        bds[&("a".to_string(), bundle.to_string())]
            .spec
            .options
            .default_namespace
            .clone()
    };
    assert_eq!(namespace("repo-driven-app-dev"), "app-dev");
    assert_eq!(namespace("repo-driven-app-prod"), "app-prod");
    // Options files that are not the bundle's own stay resources, as Fleet documents (a .fleetignore
    // would leave them out).
    let dev = Api::<Bundle>::namespaced(client.clone(), NS)
        .get("repo-driven-app-dev")
        .await
        .unwrap();
    let files: BTreeSet<&str> = dev.spec.resource_names().into_iter().collect();
    assert!(
        files.contains("cm.yaml") && files.contains("prod.yaml"),
        "{files:?}"
    );
    controller.stop().await;
}

/// The rows of `kubectl get <kind>` against the hub, as columns (the header first).
fn kubectl_get(kubeconfig: &str, kind: &str) -> Vec<Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("kubeconfig");
    std::fs::write(&config, kubeconfig).unwrap();
    let kubectl = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/bin/kubectl");
    let output = std::process::Command::new(kubectl)
        .arg("--kubeconfig")
        .arg(&config)
        .args(["get", kind, "-n", NS])
        .env("HOME", dir.path())
        .output()
        .expect("run kubectl (scripts/install-tools.sh installs it)");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    // Columns start where the header's words start.
    let starts: Vec<usize> = header
        .char_indices()
        .filter(|(i, c)| *c != ' ' && (*i == 0 || header.as_bytes()[i - 1] == b' '))
        .map(|(i, _)| i)
        .collect();
    std::iter::once(header)
        .chain(lines)
        .map(|line| {
            starts
                .iter()
                .enumerate()
                .map(|(n, &start)| {
                    let end = starts
                        .get(n + 1)
                        .copied()
                        .unwrap_or(line.len())
                        .min(line.len());
                    line.get(start.min(line.len())..end)
                        .unwrap_or_default()
                        .trim()
                        .to_string()
                })
                .collect()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_templating_error_shows_on_the_gitrepo_as_on_the_bundle() {
    let (hub, client) = hub_with_prod_cluster().await;
    let git = GitFixture::new();
    git.write("web/cm.yaml", &configmap("web"))
        .write("chart/Chart.yaml", "apiVersion: v2\nname: chart\nversion: 0.1.0\n")
        .write(
            "chart/templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: chart\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
        )
        // An `if` without its `end`: templating fails for every cluster.
        .write(
            "chart/fleet.yaml",
            "helm:\n  values:\n    greeting: \"${ if .ClusterName }hello\"\n",
        );
    let commit = git.commit("broken template");
    create_gitrepo(
        &client,
        "repo",
        json!({"repo": git.url(), "branch": "main", "paths": ["web", "chart"],
               "targets": [{"clusterSelector": {}}]}),
    )
    .await;
    let controller = RunningController::start(client.clone()).await;
    let bundles: Api<Bundle> = Api::namespaced(client.clone(), NS);
    let bundle_error = eventually("the Bundle's templating error", || async {
        let bundle = bundles.get_opt("repo-chart").await.ok()??;
        let ready = bundle
            .status?
            .conditions
            .into_iter()
            .find(|c| c.type_ == "Ready")?;
        (ready.status == "False" && !ready.message.is_empty()).then_some(ready.message)
    })
    .await;
    // The healthy bundle deploys and becomes ready; the GitRepo still reports the error.
    let web = eventually("web's BundleDeployment", || async {
        deployments(&client)
            .await
            .remove(&("a".to_string(), "repo-web".to_string()))
    })
    .await;
    report_ready(&client, &web).await;
    let repo = eventually("the GitRepo reporting the Bundle's error", || async {
        let repo = gitrepo(&client, "repo").await;
        let status = repo.status.clone()?;
        (status.commit == commit && status.base.display.ready_bundle_deployments == "1/1")
            .then_some(repo)
    })
    .await;
    let (ready, message) = condition(&repo, "Ready").unwrap();
    assert_eq!(ready, "False");
    assert_eq!(message, format!("Bundle repo-chart: {bundle_error}"));
    // As in Fleet, `display` reflects the BundleDeployments only (all Ready: no state, no message); the
    // commit was read, so it is not GitUpdating.
    let status = repo.status.unwrap();
    assert_eq!(status.git_job_status, "Current");
    let display = status.base.display;
    assert_eq!(
        (
            display.state.as_str(),
            display.message.as_str(),
            display.error
        ),
        ("", "", false)
    );

    // `kubectl get` fills every column of the GitRepo and the Bundle.
    let (_, kubeconfig) = hub.serve_loopback().await;
    let config = kubeconfig.clone();
    let rows = tokio::task::spawn_blocking(move || kubectl_get(&config, "gitrepos"))
        .await
        .unwrap();
    assert_eq!(
        rows[0][..5],
        [
            "NAME",
            "REPO",
            "COMMIT",
            "BUNDLEDEPLOYMENTS-READY",
            "STATUS"
        ]
    );
    assert_eq!(
        rows[1][..4],
        [
            "repo".to_string(),
            git.url(),
            commit.clone(),
            "1/1".to_string()
        ]
    );
    assert!(rows[1][4].starts_with("Bundle repo-chart: "), "{rows:?}");
    let config = kubeconfig.clone();
    let rows = tokio::task::spawn_blocking(move || kubectl_get(&config, "bundles"))
        .await
        .unwrap();
    let chart = rows.iter().find(|r| r[0] == "repo-chart").unwrap();
    assert_eq!(rows[0][..3], ["NAME", "BUNDLEDEPLOYMENTS-READY", "STATUS"]);
    assert_eq!(chart[1], "0/0");
    assert!(!chart[2].is_empty(), "{rows:?}");

    // Fixing the template clears the error everywhere.
    git.write(
        "chart/fleet.yaml",
        "helm:\n  values:\n    greeting: \"${ .ClusterName }\"\n",
    );
    git.commit("fixed");
    eventually("the error gone from the GitRepo", || async {
        let repo = gitrepo(&client, "repo").await;
        let (_, message) = condition(&repo, "Ready")?;
        (!message.starts_with("Bundle repo-chart: ")).then_some(())
    })
    .await;
    controller.stop().await;
}

/// What an agent reports for `bd`: applied at its deploymentID, with `status` merged in.
async fn report(client: &kube::Client, bd: &BundleDeployment, status: serde_json::Value) {
    let api: Api<BundleDeployment> =
        Api::namespaced(client.clone(), &bd.namespace().unwrap_or_default());
    let mut body = json!({
        "appliedDeploymentID": bd.spec.deployment_id,
        "conditions": [{"type": "Deployed", "status": "True"}],
    });
    body.as_object_mut()
        .unwrap()
        .extend(status.as_object().unwrap().clone());
    let patch = json!({
        "apiVersion": "fleet.cattle.io/v1alpha1",
        "kind": "BundleDeployment",
        "status": body,
    });
    api.patch_status(
        &bd.name_any(),
        &PatchParams::apply("simulated-agent").force(),
        &Patch::Apply(&patch),
    )
    .await
    .unwrap();
}

fn object(kind: &str, api_version: &str, name: &str) -> serde_json::Value {
    json!({"kind": kind, "apiVersion": api_version, "namespace": "web", "name": name})
}

fn counts(ready: i64, desired: i64, missing: i64) -> serde_json::Value {
    json!({"ready": ready, "desiredReady": desired, "waitApplied": 0, "modified": 0, "orphaned": 0,
           "missing": missing, "unknown": 0, "notReady": 0})
}

/// Waits until the GitRepo `repo`'s status passes `settled`, then asserts its resource counts are `want`;
/// that status.
async fn repo_counts(
    client: &kube::Client,
    what: &str,
    settled: impl Fn(&fleet_api::StatusBase) -> bool,
    want: serde_json::Value,
) -> fleet_api::StatusBase {
    let status = eventually(what, || async {
        let status = gitrepo(client, "repo").await.status?;
        settled(&status.base).then_some(status)
    })
    .await
    .base;
    assert_eq!(serde_json::to_value(&status.resource_counts).unwrap(), want);
    status
}

/// Waits until the Cluster `name` counts `want`.
async fn cluster_counts(clusters: &Api<Cluster>, name: &str, want: serde_json::Value) {
    eventually(&format!("cluster {name}'s resource counts"), || async {
        let status = clusters.get(name).await.ok()?.status?;
        (serde_json::to_value(&status.resource_counts).ok()? == want).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_counts_and_resources_are_aggregated_from_the_bundle_deployments() {
    let (_hub, client) = hub_with_prod_cluster().await;
    put_cluster(&client, "b", &[("env", "prod")]).await;
    let groups: Api<ClusterGroup> = Api::namespaced(client.clone(), NS);
    let group = serde_json::from_value(json!({
        "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "ClusterGroup",
        "metadata": {"name": "prod", "namespace": NS},
        "spec": {"selector": {"matchLabels": {"env": "prod"}}},
    }))
    .unwrap();
    groups.create(&Default::default(), &group).await.unwrap();
    let git = GitFixture::new();
    git.write("app/fleet.yaml", "defaultNamespace: web\n")
        .write("app/cm.yaml", &configmap("front"))
        .write(
            "app/svc.yaml",
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: front\nspec:\n  ports:\n  - port: 80\n",
        );
    git.commit("app");
    create_gitrepo(
        &client,
        "repo",
        json!({"repo": git.url(), "branch": "main", "paths": ["app"],
               "targets": [{"clusterSelector": {}}]}),
    )
    .await;
    let controller = RunningController::start(client.clone()).await;
    let bds = eventually("two BundleDeployments", || async {
        let bds = deployments(&client).await;
        (bds.len() == 2).then_some(bds)
    })
    .await;
    let on = |cluster: &str| bds[&(cluster.to_string(), "repo-app".to_string())].clone();
    let both = json!([
        object("ConfigMap", "v1", "front"),
        object("Service", "v1", "front")
    ]);
    report(
        &client,
        &on("a"),
        json!({"ready": true, "nonModified": true, "resources": both, "resourceCounts": counts(2, 2, 0)}),
    )
    .await;
    // On b the Service is missing: the BundleDeployment is Modified.
    let missing = json!([{"kind": "Service", "apiVersion": "v1", "namespace": "web", "name": "front",
                          "missing": true}]);
    report(
        &client,
        &on("b"),
        json!({"ready": true, "nonModified": false, "resources": both, "modifiedStatus": missing,
               "resourceCounts": counts(1, 2, 1)}),
    )
    .await;
    let status = repo_counts(
        &client,
        "the GitRepo's resource counts",
        |status| status.resource_counts.desired_ready == 4,
        counts(3, 4, 1),
    )
    .await;
    let per_cluster = serde_json::to_value(&status.per_cluster_resource_counts).unwrap();
    assert_eq!(
        per_cluster,
        json!({"fleet-default/a": counts(2, 2, 0), "fleet-default/b": counts(1, 2, 1)})
    );
    let listed: Vec<serde_json::Value> = status
        .resources
        .iter()
        .map(|r| {
            json!([
                r.type_,
                r.id,
                r.state,
                r.per_cluster_state.ready,
                r.per_cluster_state.missing
            ])
        })
        .collect();
    assert_eq!(
        listed,
        [
            json!([
                "configmap",
                "web/front",
                "Ready",
                ["fleet-default/a", "fleet-default/b"],
                []
            ]),
            json!([
                "service",
                "web/front",
                "Missing",
                ["fleet-default/a"],
                ["fleet-default/b"]
            ]),
        ]
    );
    // The Clusters and their group count what their BundleDeployments count.
    let clusters: Api<Cluster> = Api::namespaced(client.clone(), NS);
    for (cluster, want) in [("a", counts(2, 2, 0)), ("b", counts(1, 2, 1))] {
        cluster_counts(&clusters, cluster, want).await;
    }
    eventually("the group's resource counts", || async {
        let status = groups.get("prod").await.ok()?.status?;
        (serde_json::to_value(&status.resource_counts).ok()? == counts(3, 4, 1)).then_some(())
    })
    .await;

    // The Service comes back on b: the counts move, nothing is counted twice.
    report(
        &client,
        &on("b"),
        json!({"ready": true, "nonModified": true, "resources": both, "modifiedStatus": [],
               "resourceCounts": counts(2, 2, 0)}),
    )
    .await;
    let status = repo_counts(
        &client,
        "b counted ready",
        |status| status.resource_counts.ready == 4,
        counts(4, 4, 0),
    )
    .await;
    assert!(
        status
            .resources
            .iter()
            .all(|r| r.state == "Ready" && r.per_cluster_state.ready.len() == 2),
        "{:?}",
        status.resources
    );
    cluster_counts(&clusters, "b", counts(2, 2, 0)).await;
    controller.stop().await;
}

async fn set_paused(client: &kube::Client, paused: bool) {
    Api::<GitRepo>::namespaced(client.clone(), NS)
        .patch(
            "repo",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"paused": paused}})),
        )
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_is_deleted_while_the_gitrepo_is_paused_comes_back_only_when_it_is_unpaused() {
    let (_hub, client) = hub_with_prod_cluster().await;
    let git = GitFixture::new();
    git.write("app/cm.yaml", &configmap("app"));
    git.commit("v1");
    create_gitrepo(
        &client,
        "repo",
        json!({"repo": git.url(), "branch": "main", "paths": ["app"],
               "targets": [{"clusterSelector": {}}]}),
    )
    .await;
    let controller = RunningController::start(client.clone()).await;
    let key = ("a".to_string(), "repo-app".to_string());
    let bd = eventually("the BundleDeployment", || async {
        deployments(&client).await.remove(&key)
    })
    .await;
    report_ready(&client, &bd).await;

    set_paused(&client, true).await;
    let bd = eventually("the BundleDeployment paused", || async {
        deployments(&client)
            .await
            .remove(&key)
            .filter(|bd| bd.spec.paused)
    })
    .await;
    let bds: Api<BundleDeployment> =
        Api::namespaced(client.clone(), &bd.namespace().unwrap_or_default());
    bds.delete("repo-app", &DeleteParams::default())
        .await
        .unwrap();
    // The Bundle's status, written after the reconcile that saw the deletion, counts the cluster as
    // Pending: no BundleDeployment was made for it.
    let bundles: Api<Bundle> = Api::namespaced(client.clone(), NS);
    eventually("the target pending", || async {
        let summary = bundles.get("repo-app").await.ok()?.status?.summary;
        (summary.pending == 1 && summary.desired_ready == 1).then_some(())
    })
    .await;
    assert!(deployments(&client).await.is_empty());

    // The Bundle deleted too; a new commit does not bring it back while paused.
    bundles
        .delete("repo-app", &DeleteParams::default())
        .await
        .unwrap();
    fleet_testing::gone("the Bundle gone", &bundles, "repo-app").await;
    git.write("app/cm.yaml", &configmap("app").replace("a: b", "a: c"));
    let second = git.commit("v2");
    eventually("the new commit read", || async {
        (gitrepo(&client, "repo").await.status?.commit == second).then_some(())
    })
    .await;
    assert!(bundle_names(&client).await.is_empty());

    // Unpaused: the Bundle and its BundleDeployment come back, at the new commit.
    set_paused(&client, false).await;
    let bd = eventually("the BundleDeployment back", || async {
        deployments(&client).await.remove(&key)
    })
    .await;
    assert!(!bd.spec.paused);
    assert_eq!(bd.spec.deployment_id, bd.spec.staged_deployment_id);
    controller.stop().await;
}
