//! Rollout by partitions with `maxUnavailable`, and a controller restart in the middle of it: no
//! BundleDeployment is duplicated, lost or rewritten, and the new controller continues the rollout. Also
//! with what makes each cluster's options differ (target customizations, `${ }` templated Helm values kept
//! in values Secrets) and a GitRepoRestriction filling in the service account and the namespace selector:
//! the restart writes nothing, neither Bundle, values Secrets, BundleDeployments nor their options Secrets.

mod support;

use std::collections::BTreeMap;

use fleet_api::Bundle;
use fleet_testing::GitFixture;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::json;

use support::*;

fn ids(
    bds: &BTreeMap<(String, String), fleet_api::BundleDeployment>,
) -> BTreeMap<String, (String, String, String)> {
    bds.iter()
        .map(|((cluster, _), bd)| {
            (
                cluster.clone(),
                (
                    bd.metadata.uid.clone().unwrap_or_default(),
                    bd.spec.deployment_id.clone(),
                    bd.spec.staged_deployment_id.clone(),
                ),
            )
        })
        .collect()
}

type Deployments = BTreeMap<(String, String), fleet_api::BundleDeployment>;

/// A git repository with the ConfigMap bundle `app` at `fleet_yaml`, and the GitRepo `repo` following it
/// at env=prod clusters (with `extra` spec fields).
async fn follow_app(
    client: &kube::Client,
    fleet_yaml: &str,
    extra: serde_json::Value,
) -> GitFixture {
    let git = GitFixture::new();
    git.write("app/fleet.yaml", fleet_yaml);
    git.write(
        "app/configmap.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
    );
    git.commit("v1");
    let mut spec = json!({"repo": git.url(), "branch": "main",
                          "targets": [{"clusterSelector": {"matchLabels": {"env": "prod"}}}]});
    spec.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    create_gitrepo(client, "repo", spec).await;
    git
}

/// Reports every one of `bds` applied and ready, and waits for the GitRepo `repo` to count them.
async fn all_ready(client: &kube::Client, bds: &Deployments) {
    for bd in bds.values() {
        report_ready(client, bd).await;
    }
    let want = format!("{n}/{n}", n = bds.len());
    eventually("all ready", || async {
        let repo = gitrepo(client, "repo").await;
        (repo.status?.base.display.ready_bundle_deployments == want).then_some(())
    })
    .await;
}

/// Commits `fleet_yaml` and waits until every BundleDeployment has a staged ID other than its one in
/// `before` (each cluster's own: with per-cluster options they differ); returns them and the clusters
/// promoted at once (deploymentID = staged ID).
async fn commit_and_stage(
    client: &kube::Client,
    git: &GitFixture,
    fleet_yaml: &str,
    before: &BTreeMap<String, (String, String, String)>,
) -> (Deployments, Vec<String>) {
    git.write("app/fleet.yaml", fleet_yaml);
    git.commit("next");
    let staged = eventually("staged everywhere", || async {
        let bds = deployments(client).await;
        let all_staged = bds
            .iter()
            .all(|((cluster, _), bd)| bd.spec.staged_deployment_id != before[cluster].2);
        all_staged.then_some(bds)
    })
    .await;
    let promoted = staged
        .iter()
        .filter(|(_, bd)| bd.spec.deployment_id == bd.spec.staged_deployment_id)
        .map(|((cluster, _), _)| cluster.clone())
        .collect();
    (staged, promoted)
}

/// Reports c0 ready at its staged ID and waits for c1 to be promoted.
async fn c0_ready_then_c1_promoted(client: &kube::Client, staged: &Deployments) -> Deployments {
    report_ready(client, &staged[&("c0".to_string(), "repo-app".to_string())]).await;
    eventually("c1 promoted", || async {
        let bds = deployments(client).await;
        let c1 = &bds[&("c1".to_string(), "repo-app".to_string())];
        (c1.spec.deployment_id == c1.spec.staged_deployment_id).then_some(bds)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partitions_roll_one_at_a_time_and_survive_a_restart() {
    let hub = hub().await;
    let client = hub.client.clone();
    for i in 0..4 {
        put_cluster(&client, &format!("c{i}"), &[("env", "prod")]).await;
    }
    let fleet_yaml = |version: &str| {
        format!(
            "defaultNamespace: app\nhelm:\n  values:\n    version: \"{version}\"\nrolloutStrategy:\n  maxUnavailable: 1\n  partitions:\n  - name: canary\n    clusterName: c0\n  - name: rest\n    clusterSelector:\n      matchLabels:\n        env: prod\n"
        )
    };
    let git = follow_app(&client, &fleet_yaml("1"), json!({})).await;
    let controller = RunningController::start(client.clone()).await;
    let v1 = eventually("4 new BundleDeployments", || async {
        let bds = deployments(&client).await;
        (bds.len() == 4).then_some(bds)
    })
    .await;
    all_ready(&client, &v1).await;
    let v1_ids = ids(&deployments(&client).await);

    // v2: everything is staged, but only the canary is promoted (maxUnavailable 1).
    let (staged, promoted) = commit_and_stage(&client, &git, &fleet_yaml("2"), &v1_ids).await;
    assert_eq!(promoted, ["c0"]);
    let mid_rollout = ids(&staged);
    for (cluster, (uid, _, _)) in &mid_rollout {
        assert_eq!(
            uid, &v1_ids[cluster].0,
            "BundleDeployment of {cluster} was recreated"
        );
    }

    // Restart in the middle of the rollout: the new controller rewrites nothing.
    controller.stop().await;
    let controller = RunningController::start(client.clone()).await;
    controller.context.index.wait_synced().await;
    // Give the new controller a change to react to: c0 reports v2 applied and ready; then c1 is promoted.
    let after = c0_ready_then_c1_promoted(&client, &staged).await;
    assert_eq!(after.len(), 4);
    let after_ids = ids(&after);
    for cluster in ["c0", "c2", "c3"] {
        assert_eq!(
            after_ids[cluster], mid_rollout[cluster],
            "{cluster} changed across the restart"
        );
    }
    assert_eq!(after_ids["c1"].0, mid_rollout["c1"].0);
    assert!(
        after
            .values()
            .all(|bd| bd.labels()["fleet.cattle.io/repo-name"] == "repo")
    );
    controller.stop().await;
}

/// A rollout whose clusters all get different options: values templated per cluster, eu customized.
const CUSTOMIZED: &str = r#"helm:
  values:
    version: "VERSION"
    cluster: ${ .ClusterName }
    region: ${ .ClusterLabels.region }
rolloutStrategy:
  maxUnavailable: 1
  partitions:
  - name: canary
    clusterName: c0
  - name: rest
    clusterSelector:
      matchLabels:
        env: prod
targetCustomizations:
- name: eu
  clusterSelector:
    matchLabels:
      region: eu
  helm:
    values:
      replicas: 3
"#;

/// The resourceVersion of every object the controller writes for a GitRepo: its Bundles, their values
/// Secrets, the BundleDeployments and their options Secrets (keyed kind/namespace/name).
async fn written(client: &kube::Client) -> BTreeMap<String, String> {
    let mut versions = BTreeMap::new();
    for bundle in Api::<Bundle>::all(client.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
    {
        versions.insert(
            format!("Bundle/{}", bundle.name_any()),
            bundle.resource_version().unwrap(),
        );
    }
    for secret in Api::<Secret>::all(client.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|s| {
            s.type_
                .as_deref()
                .is_some_and(|t| t.starts_with("fleet.cattle.io/"))
        })
    {
        versions.insert(
            format!(
                "Secret/{}/{}",
                secret.namespace().unwrap(),
                secret.name_any()
            ),
            secret.resource_version().unwrap(),
        );
    }
    for ((cluster, name), bd) in deployments(client).await {
        versions.insert(
            format!("BundleDeployment/{cluster}/{name}"),
            bd.resource_version().unwrap(),
        );
    }
    versions
}

/// Whether every BundleDeployment's options Secret holds the values its `valuesHash` names (as the agent
/// checks before deploying).
async fn options_secrets_written(client: &kube::Client) -> bool {
    for bd in deployments(client).await.into_values() {
        let secrets = Api::<Secret>::namespaced(client.clone(), &bd.namespace().unwrap());
        let data = secrets
            .get_opt(&bd.name_any())
            .await
            .unwrap()
            .and_then(|secret| secret.data);
        if fleet_agent::fetch::options_secret_hash(data.as_ref()) != bd.spec.values_hash {
            return false;
        }
    }
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_mid_rollout_with_customized_templated_values_rewrites_nothing() {
    let hub = hub().await;
    let client = hub.client.clone();
    for i in 0..4 {
        let region = if i < 2 { "us" } else { "eu" };
        put_cluster(
            &client,
            &format!("c{i}"),
            &[("env", "prod"), ("region", region)],
        )
        .await;
    }
    Api::<fleet_api::GitRepoRestriction>::namespaced(client.clone(), NS)
        .patch(
            "policy",
            &PatchParams::apply("test").force(),
            &Patch::Apply(json!({
                "apiVersion": "fleet.cattle.io/v1alpha1",
                "kind": "GitRepoRestriction",
                "metadata": {"name": "policy", "namespace": NS},
                "defaultServiceAccount": "fleet-sa",
                "allowedTargetNamespaceSelector": {"matchLabels": {"team": "web"}},
            })),
        )
        .await
        .unwrap();
    let fleet_yaml = |version: &str| CUSTOMIZED.replace("VERSION", version);
    let git = follow_app(&client, &fleet_yaml("1"), json!({"targetNamespace": "app"})).await;
    let controller = RunningController::start(client.clone()).await;
    let v1 = eventually("4 new BundleDeployments", || async {
        let bds = deployments(&client).await;
        (bds.len() == 4).then_some(bds)
    })
    .await;
    // Four clusters, four option sets (templated per cluster), all restricted as the restriction says.
    let v1_ids = ids(&v1);
    let distinct: std::collections::BTreeSet<&String> =
        v1_ids.values().map(|(_, id, _)| id).collect();
    assert_eq!(distinct.len(), 4);
    for bd in v1.values() {
        assert_eq!(bd.spec.options.service_account, "fleet-sa");
        assert!(bd.spec.options.allowed_target_namespace_selector.is_some());
        assert!(!bd.spec.values_hash.is_empty());
    }
    all_ready(&client, &v1).await;

    // v2: staged everywhere, only the canary promoted.
    let (staged, promoted) = commit_and_stage(&client, &git, &fleet_yaml("2"), &v1_ids).await;
    assert_eq!(promoted, ["c0"]);
    // The options Secrets are written right after their BundleDeployments: the snapshot below is taken once
    // each holds the values its BundleDeployment's valuesHash names.
    eventually(
        "the GitRepo at v2, the Bundle's status and the options Secrets caught up",
        || async {
            let repo = gitrepo(&client, "repo").await;
            let bundle = Api::<Bundle>::namespaced(client.clone(), NS)
                .get("repo-app")
                .await
                .ok()?;
            (repo.status?.commit == git.head()
                && bundle.status?.display.state == "WaitApplied"
                && options_secrets_written(&client).await)
                .then_some(())
        },
    )
    .await;
    let before = written(&client).await;
    assert_eq!(
        before.keys().filter(|k| k.starts_with("Secret/")).count(),
        5,
        "one values Secret for the Bundle, one options Secret per BundleDeployment: {before:?}"
    );

    // Restart in the middle of the rollout: once the new controller has reconciled the GitRepo and the
    // Bundle, nothing it writes has moved.
    controller.stop().await;
    let controller = RunningController::start(client.clone()).await;
    eventually(
        "the GitRepo and the Bundle reconciled after the restart",
        || async {
            (controller.reconciles("gitrepo") >= 1 && controller.reconciles("bundle") >= 1)
                .then_some(())
        },
    )
    .await;
    assert_eq!(written(&client).await, before);

    // The new controller continues the rollout: c0 reports v2 ready, then c1 is promoted; c2 and c3 are
    // not touched.
    let after = c0_ready_then_c1_promoted(&client, &staged).await;
    let after_ids = ids(&after);
    let staged_ids = ids(&staged);
    for cluster in ["c2", "c3"] {
        assert_eq!(after_ids[cluster], staged_ids[cluster], "{cluster} changed");
        let key = (cluster.to_string(), "repo-app".to_string());
        assert_eq!(
            after[&key].resource_version(),
            staged[&key].resource_version(),
            "{cluster} rewritten"
        );
    }
    assert_eq!(after_ids["c1"].1, staged_ids["c1"].2);

    // v3 while c2 and c3 still run v1, whose values only their options Secrets hold (written by the
    // controller before the restart): their staged options move, their deployed values stay.
    let (v3, _) = commit_and_stage(&client, &git, &fleet_yaml("3"), &after_ids).await;
    let c2 = &v3[&("c2".to_string(), "repo-app".to_string())];
    assert_eq!(c2.spec.deployment_id, staged_ids["c2"].1, "c2 promoted");
    // The options Secret is written right after its BundleDeployment (to be owned by it), so it may lag the
    // staged ID seen above by a moment.
    let secrets = Api::<Secret>::namespaced(client.clone(), &c2.namespace().unwrap());
    let (values, staged_values) =
        eventually("c2's options Secret holds v3 as staged values", || async {
            let data = secrets.get("repo-app").await.ok()?.data?;
            let values: serde_json::Value = serde_json::from_slice(&data.get("values")?.0).ok()?;
            let staged: serde_json::Value =
                serde_json::from_slice(&data.get("stagedValues")?.0).ok()?;
            (staged["version"] == "3").then_some((values, staged))
        })
        .await;
    assert_eq!(
        values,
        json!({"version": "1", "cluster": "c2", "region": "eu", "replicas": 3})
    );
    assert_eq!(staged_values["cluster"], "c2");
    controller.stop().await;
}
