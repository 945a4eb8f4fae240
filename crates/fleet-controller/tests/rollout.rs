//! Rollout by partitions with `maxUnavailable`, and a controller restart in the middle of it: no
//! BundleDeployment is duplicated, lost or rewritten, and the new controller continues the rollout.

mod support;

use std::collections::BTreeMap;

use fleet_testing::GitFixture;
use kube::ResourceExt;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partitions_roll_one_at_a_time_and_survive_a_restart() {
    let hub = hub().await;
    let client = hub.client.clone();
    for i in 0..4 {
        put_cluster(&client, &format!("c{i}"), &[("env", "prod")]).await;
    }
    let git = GitFixture::new();
    let fleet_yaml = |version: &str| {
        format!(
            "defaultNamespace: app\nhelm:\n  values:\n    version: \"{version}\"\nrolloutStrategy:\n  maxUnavailable: 1\n  partitions:\n  - name: canary\n    clusterName: c0\n  - name: rest\n    clusterSelector:\n      matchLabels:\n        env: prod\n"
        )
    };
    git.write("app/fleet.yaml", &fleet_yaml("1"));
    git.write(
        "app/configmap.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
    );
    git.commit("v1");
    create_gitrepo(
        &client,
        "repo",
        json!({"repo": git.url(), "branch": "main", "targets": [{"clusterSelector": {"matchLabels": {"env": "prod"}}}]}),
    )
    .await;
    let controller = RunningController::start(client.clone()).await;
    let v1 = eventually("4 new BundleDeployments", || async {
        let bds = deployments(&client).await;
        (bds.len() == 4).then_some(bds)
    })
    .await;
    for bd in v1.values() {
        report_ready(&client, bd).await;
    }
    eventually("v1 ready", || async {
        let repo = gitrepo(&client, "repo").await;
        (repo.status?.base.display.ready_bundle_deployments == "4/4").then_some(())
    })
    .await;
    let v1_ids = ids(&deployments(&client).await);

    // v2: everything is staged, but only the canary is promoted (maxUnavailable 1).
    git.write("app/fleet.yaml", &fleet_yaml("2"));
    git.commit("v2");
    let staged = eventually("v2 staged everywhere", || async {
        let bds = deployments(&client).await;
        let all_staged = bds
            .values()
            .all(|bd| bd.spec.staged_deployment_id != v1_ids["c0"].2);
        all_staged.then_some(bds)
    })
    .await;
    let promoted: Vec<&str> = staged
        .iter()
        .filter(|(_, bd)| bd.spec.deployment_id == bd.spec.staged_deployment_id)
        .map(|((c, _), _)| c.as_str())
        .collect();
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
    report_ready(
        &client,
        &staged[&("c0".to_string(), "repo-app".to_string())],
    )
    .await;
    let after = eventually("c1 promoted by the new controller", || async {
        let bds = deployments(&client).await;
        let c1 = &bds[&("c1".to_string(), "repo-app".to_string())];
        (c1.spec.deployment_id == c1.spec.staged_deployment_id).then_some(bds)
    })
    .await;
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
