//! End to end in dev mode (issue #8): three simulated clusters (`cluster-1` env=dev, `cluster-2`
//! env=staging, `cluster-3` env=prod) registered through the token flow, the real controller and agents,
//! and a real git repository in a temp dir whose refs dev mode watches (GitRepo polling is set to 10
//! minutes, so every commit below is picked up by the watch, not by polling).

mod support;

use std::process::Command;

use fleet_dev::Dev;
use fleet_dev::view::{AgentSeen, agent_seen};
use fleet_testing::GitFixture;
use k8s_openapi::jiff::Timestamp;
use serde_json::json;
use support::*;

/// The ConfigMap `demo/<name>` holds `msg: <msg>` on the dev and prod clusters (1 and 3) and is not on
/// staging (2).
async fn on_dev_and_prod_only(dev: &Dev, name: &str, msg: &str) {
    for cluster in ["cluster-1", "cluster-3"] {
        assert_eq!(
            configmap_value(dev, cluster, "demo", name, "msg")
                .await
                .as_deref(),
            Some(msg),
            "{cluster}"
        );
    }
    assert!(configmap(dev, "cluster-2", "demo", name).await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_becomes_resources_on_the_targeted_clusters() {
    let repo = GitFixture::new();
    repo.write("app/fleet.yaml", "defaultNamespace: demo\n")
        .write(
            "app/greeting.yaml",
            &configmap_yaml("greeting", "msg", "hello"),
        );
    let first = repo.commit("greeting");
    let running = start(
        &repo,
        json!({"paths": ["app"], "targets": targets(&["dev", "prod"])}),
    )
    .await;
    let dev = &running.dev;
    deployed(dev, &first).await;
    on_dev_and_prod_only(dev, "greeting", "hello").await;

    repo.write(
        "app/farewell.yaml",
        &configmap_yaml("farewell", "msg", "bye"),
    );
    let second = repo.commit("farewell");
    deployed(dev, &second).await;
    on_dev_and_prod_only(dev, "farewell", "bye").await;
    running.dev.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_values_change_for_one_environment_updates_only_its_clusters() {
    let repo = GitFixture::new();
    repo.write("chart/Chart.yaml", "apiVersion: v2\nname: greeter\nversion: 0.1.0\n")
        .write("chart/values.yaml", "greeting: hello\n")
        .write(
            "chart/templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: greeter\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
        )
        .write(
            "chart/fleet.yaml",
            "defaultNamespace: greeter\ntargetCustomizations:\n- name: prod\n  clusterSelector:\n    matchLabels:\n      env: prod\n  helm:\n    values:\n      greeting: hello-prod\n",
        );
    let first = repo.commit("chart");
    let running = start(
        &repo,
        json!({"paths": ["chart"], "targets": targets(&["dev", "staging", "prod"])}),
    )
    .await;
    let dev = &running.dev;
    deployed(dev, &first).await;
    assert_eq!(
        configmap_value(dev, "cluster-3", "greeter", "greeter", "greeting")
            .await
            .as_deref(),
        Some("hello-prod")
    );
    let others = ["cluster-1", "cluster-2"];
    let versions = resource_versions(dev, &others, "greeter", "greeter").await;
    let ids = deployment_ids(dev).await;

    repo.write(
        "chart/fleet.yaml",
        "defaultNamespace: greeter\ntargetCustomizations:\n- name: prod\n  clusterSelector:\n    matchLabels:\n      env: prod\n  helm:\n    values:\n      greeting: hola-prod\n",
    );
    let second = repo.commit("prod says hola");
    deployed(dev, &second).await;
    // Deployed means every BundleDeployment is applied at its new deploymentID, and the agent reports one applied
    // only once it deployed the values its options Secret holds for it: the new value is live now.
    assert_eq!(
        configmap_value(dev, "cluster-3", "greeter", "greeter", "greeting")
            .await
            .as_deref(),
        Some("hola-prod")
    );
    assert_eq!(
        resource_versions(dev, &others, "greeter", "greeter").await,
        versions,
        "dev and staging are not touched"
    );
    let after = deployment_ids(dev).await;
    for (key, id) in &ids {
        if key.starts_with("cluster-3/") {
            assert_ne!(after.get(key), Some(id), "{key} gets a new deploymentID");
        } else {
            assert_eq!(after.get(key), Some(id), "{key} keeps its deploymentID");
        }
    }
    running.dev.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_file_is_pruned() {
    let repo = GitFixture::new();
    repo.write("app/fleet.yaml", "defaultNamespace: demo\n")
        .write("app/keep.yaml", &configmap_yaml("keep", "k", "v"))
        .write("app/drop.yaml", &configmap_yaml("drop", "k", "v"));
    let first = repo.commit("two configmaps");
    let running = start(
        &repo,
        json!({"paths": ["app"], "targets": targets(&["dev", "staging", "prod"])}),
    )
    .await;
    let dev = &running.dev;
    deployed(dev, &first).await;
    for cluster in ALL_CLUSTERS {
        assert!(
            configmap(dev, cluster, "demo", "drop").await.is_some(),
            "{cluster}"
        );
    }
    repo.remove("app/drop.yaml");
    let second = repo.commit("drop one");
    deployed(dev, &second).await;
    for cluster in ALL_CLUSTERS {
        eventually(&format!("drop pruned from {cluster}"), || async {
            configmap(dev, cluster, "demo", "drop")
                .await
                .is_none()
                .then_some(())
        })
        .await;
        assert!(
            configmap(dev, cluster, "demo", "keep").await.is_some(),
            "{cluster}"
        );
    }
    running.dev.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_commit_shows_its_error_and_removes_nothing() {
    let Deployed { repo, running, .. } = deploy_configmap("stays").await;
    let dev = &running.dev;
    let versions = resource_versions(dev, &ALL_CLUSTERS, "demo", "stays").await;
    let ids = deployment_ids(dev).await;

    repo.write("app/fleet.yaml", "defaultNamespac: demo\n");
    let broken = repo.commit("typo in fleet.yaml");
    let shown = eventually("the broken commit's error", || async {
        let repo = gitrepo(dev).await;
        let status = fleet_dev::view::gitrepo_status(&repo);
        let read = repo.status.as_ref().is_some_and(|s| s.commit == broken);
        (read && status.contains("fleet.yaml")).then_some(status)
    })
    .await;
    assert!(shown.contains("defaultNamespac"), "{shown}");
    let lines = dev.state().await.unwrap().lines(Timestamp::now());
    assert!(
        lines["gitrepo fleet-default/app"].contains("defaultNamespac"),
        "the view shows the error: {lines:?}"
    );
    assert_eq!(
        resource_versions(dev, &ALL_CLUSTERS, "demo", "stays").await,
        versions
    );
    assert_eq!(
        deployment_ids(dev).await,
        ids,
        "the last good bundle is kept"
    );
    running.dev.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_controller_redeploys_nothing() {
    let Deployed { repo, running, .. } = deploy_configmap("steady").await;
    let dev = &running.dev;
    let versions = resource_versions(dev, &ALL_CLUSTERS, "demo", "steady").await;
    let ids = deployment_ids(dev).await;

    dev.restart_controller().await;
    // A commit adding another bundle proves the new controller has caught up with everything.
    repo.write("other/fleet.yaml", "defaultNamespace: other\n")
        .write("other/cm.yaml", &configmap_yaml("marker", "k", "v"));
    let second = repo.commit("another bundle");
    deployed(dev, &second).await;
    for cluster in ALL_CLUSTERS {
        assert!(
            configmap(dev, cluster, "other", "marker").await.is_some(),
            "{cluster}"
        );
    }
    assert_eq!(
        resource_versions(dev, &ALL_CLUSTERS, "demo", "steady").await,
        versions
    );
    let after = deployment_ids(dev).await;
    for (key, id) in &ids {
        assert_eq!(after.get(key), Some(id), "{key} keeps its deploymentID");
    }
    running.dev.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_agents_cluster_is_not_seen_while_the_others_stay_ready() {
    let Deployed { running, .. } = deploy_configmap("cm").await;
    let dev = &running.dev;

    dev.cluster("cluster-2").unwrap().agent.stop();
    let state = eventually("cluster-2 reported as not seen", || async {
        let state = dev.state().await.ok()?;
        let cluster = cluster_in(&state, "cluster-2")?;
        matches!(
            agent_seen(cluster, Timestamp::now()),
            AgentSeen::NotSeen { .. }
        )
        .then_some(state)
    })
    .await;
    let now = Timestamp::now();
    for cluster in &state.clusters {
        let name = cluster.metadata.name.clone().unwrap_or_default();
        if !["cluster-1", "cluster-3"].contains(&name.as_str()) {
            continue;
        }
        assert!(
            matches!(agent_seen(cluster, now), AgentSeen::Seen { .. }),
            "{name} is still seen"
        );
        let display = cluster.status.clone().unwrap_or_default().display;
        // Fleet's display state of a Cluster whose bundles are all Ready is empty.
        assert_eq!(display.state, "", "{name}");
    }
    let lines = state.lines(now);
    assert!(
        lines["cluster fleet-default/cluster-2"].contains("agent NOT SEEN since"),
        "{lines:?}"
    );
    assert!(
        lines["cluster fleet-default/cluster-1"].ends_with("agent seen"),
        "{lines:?}"
    );

    // Started again with its stored credentials, it is seen again.
    dev.cluster("cluster-2")
        .unwrap()
        .agent
        .start()
        .await
        .unwrap();
    eventually("cluster-2 seen again", || async {
        let state = dev.state().await.ok()?;
        let cluster = cluster_in(&state, "cluster-2")?;
        matches!(
            agent_seen(cluster, Timestamp::now()),
            AgentSeen::Seen { .. }
        )
        .then_some(())
    })
    .await;
    running.dev.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_shows_fleets_columns() {
    let kubectl = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/bin/kubectl");
    assert!(
        kubectl.is_file(),
        "{} is missing: run scripts/install-tools.sh (make test does)",
        kubectl.display()
    );
    let Deployed {
        running,
        commit: first,
        ..
    } = deploy_configmap("cm").await;
    let dev = &running.dev;
    let kubeconfig = dev.hub_kubeconfig();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(kubectl)
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["get", "gitrepos,bundles,clusters", "-A"])
            .output()
            .expect("run kubectl")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for column in [
        "REPO",
        "COMMIT",
        "BUNDLEDEPLOYMENTS-READY",
        "STATUS",
        "BUNDLES-READY",
        "LAST-SEEN",
    ] {
        assert!(stdout.contains(column), "column {column} in:\n{stdout}");
    }
    let gitrepo_row = stdout
        .lines()
        .find(|l| l.contains("gitrepo.fleet.cattle.io/app"))
        .unwrap_or_else(|| panic!("no GitRepo row in:\n{stdout}"));
    assert!(gitrepo_row.contains(&first), "{gitrepo_row}");
    assert!(gitrepo_row.contains("3/3"), "{gitrepo_row}");
    for cluster in ["cluster-1", "cluster-2", "cluster-3", "local"] {
        let row = stdout
            .lines()
            .find(|l| l.contains(&format!("cluster.fleet.cattle.io/{cluster} ")))
            .unwrap_or_else(|| panic!("no row for {cluster} in:\n{stdout}"));
        assert!(
            row.contains("Z"),
            "{cluster} shows its last-seen time: {row}"
        );
    }
    running.dev.shutdown().await;
}
