//! The agent against real embedded API servers: a hub holding BundleDeployments and Content (published as
//! the controller publishes them; the controller's registration is not wired in yet) and downstream clusters.

mod common;

use common::*;
use fleet_agent::Scope;
use fleet_api::{BundleDeployment, BundleRef, CorrectDrift};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::json;

fn default_scope() -> Scope {
    Scope::new("cattle-fleet-system", "")
}

#[tokio::test]
async fn deploys_reports_readiness_and_becomes_ready() {
    let (hub, downstream) = hub_with_agent().await;
    let id = publish_in(
        &hub.client,
        "web",
        &[
            ("cm.yaml", &config_map("settings", "one")),
            ("deploy.yaml", &deployment("web")),
        ],
        "apps",
    )
    .await;
    let status = wait_applied(&hub.client, "web", &id, "web applied").await;
    assert!(!status.ready);
    assert_eq!(status.display.state, "NotReady");
    assert_eq!(status.non_ready_status.len(), 1);
    assert_eq!(status.non_ready_status[0].object.name, "web");
    assert_eq!(status.resources.len(), 2);
    assert_eq!(status.resource_counts.desired_ready, 2);
    assert_eq!(condition(&status, "Deployed").status, "True");
    let cm: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "apps");
    let live = cm.get("settings").await.unwrap();
    assert_eq!(live.data.unwrap()["key"], "one");
    let managers: Vec<String> = live
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    assert!(
        managers.contains(&"fleet-agent".to_string()),
        "{managers:?}"
    );

    make_available(&downstream.client, "apps", "web").await;
    let status = wait_status(&hub.client, "web", "web ready", |s| s.ready).await;
    assert!(status.non_modified);
    assert_eq!(status.display.state, "Ready");
    assert_eq!(condition(&status, "Ready").status, "True");
    assert_eq!(status.resource_counts.ready, 2);
}

#[tokio::test]
async fn updates_patch_only_changed_objects_and_prune_removed_files() {
    let (hub, downstream) = hub_with_agent().await;
    let files = [
        ("a.yaml", config_map("a", "1")),
        ("b.yaml", config_map("b", "1")),
        ("c.yaml", config_map("c", "1")),
    ];
    let as_refs = |files: &[(&str, String)]| -> Vec<(String, String)> {
        files
            .iter()
            .map(|(n, c)| (n.to_string(), c.clone()))
            .collect()
    };
    let publish_files = |files: Vec<(String, String)>| {
        let hub = hub.client.clone();
        async move {
            let borrowed: Vec<(&str, &str)> = files
                .iter()
                .map(|(n, c)| (n.as_str(), c.as_str()))
                .collect();
            publish_in(&hub, "cms", &borrowed, "apps").await
        }
    };
    let id = publish_files(as_refs(&files)).await;
    wait_status(&hub.client, "cms", "first apply", |s| {
        s.applied_deployment_id == id && s.ready
    })
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "apps");
    let version = |name: &'static str| {
        let cms = cms.clone();
        async move {
            cms.get(name)
                .await
                .unwrap()
                .metadata
                .resource_version
                .unwrap()
        }
    };
    let (a1, b1) = (version("a").await, version("b").await);

    let mut changed = files.clone();
    changed[1].1 = config_map("b", "2");
    let id = publish_files(as_refs(&changed)).await;
    wait_applied(&hub.client, "cms", &id, "update applied").await;
    assert_eq!(version("a").await, a1, "unchanged object was not patched");
    assert_ne!(version("b").await, b1);
    assert_eq!(cms.get("b").await.unwrap().data.unwrap()["key"], "2");

    let id = publish_files(as_refs(&changed[..2])).await;
    let status = wait_applied(&hub.client, "cms", &id, "file removed").await;
    assert!(cms.get_opt("c").await.unwrap().is_none(), "c was pruned");
    assert!(cms.get_opt("a").await.unwrap().is_some());
    assert_eq!(status.resources.len(), 2);

    Api::<BundleDeployment>::namespaced(hub.client.clone(), CLUSTER_NS)
        .delete("cms", &DeleteParams::default())
        .await
        .unwrap();
    // The uninstall deletes the objects one after the other: wait for both.
    fleet_testing::gone("uninstall of a", &cms, "a").await;
    fleet_testing::gone("uninstall of b", &cms, "b").await;
}

#[tokio::test]
async fn drift_is_reported_then_corrected() {
    let (hub, downstream) = hub_with_agent().await;
    let files = [("cm.yaml", config_map("settings", "wanted"))];
    let borrowed: Vec<(&str, &str)> = files.iter().map(|(n, c)| (*n, c.as_str())).collect();
    let id = publish_in(&hub.client, "drift", &borrowed, "apps").await;
    wait_status(&hub.client, "drift", "applied", |s| {
        s.applied_deployment_id == id && s.ready
    })
    .await;

    let cms: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "apps");
    let edit = PatchParams {
        field_manager: Some("kubectl-edit".into()),
        ..Default::default()
    };
    cms.patch(
        "settings",
        &edit,
        &Patch::Merge(json!({"data": {"key": "edited", "extra": "theirs"}})),
    )
    .await
    .unwrap();
    let status = wait_status(&hub.client, "drift", "modified", |s| !s.non_modified).await;
    assert_eq!(status.display.state, "Modified");
    assert_eq!(status.modified_status.len(), 1);
    assert_eq!(
        status.modified_status[0].patch,
        r#"{"data":{"key":"wanted"}}"#
    );
    assert_eq!(
        condition(&status, "Ready").message,
        r#"configmap.v1 apps/settings modified {"data":{"key":"wanted"}}"#
    );

    publish(
        &hub.client,
        "drift",
        &borrowed,
        options_in("apps"),
        |spec| {
            spec.correct_drift = Some(CorrectDrift {
                enabled: true,
                ..Default::default()
            })
        },
    )
    .await;
    let status = wait_status(&hub.client, "drift", "corrected", |s| {
        s.non_modified && s.ready
    })
    .await;
    assert_eq!(status.display.state, "Ready");
    let data = cms.get("settings").await.unwrap().data.unwrap();
    assert_eq!(data["key"], "wanted");
    assert_eq!(
        data["extra"], "theirs",
        "fields we do not own are left alone"
    );

    // With correctDrift on, a later edit is reverted as soon as the watch reports it.
    cms.patch(
        "settings",
        &edit,
        &Patch::Merge(json!({"data": {"key": "edited again"}})),
    )
    .await
    .unwrap();
    wait_for("the edit reverted", || {
        let cms = cms.clone();
        async move {
            let data = cms.get("settings").await.ok()?.data?;
            (data["key"] == "wanted").then_some(())
        }
    })
    .await;

    // A deleted object is re-created as soon as the watch reports the deletion.
    let uid = cms.get("settings").await.unwrap().metadata.uid;
    cms.delete("settings", &DeleteParams::default())
        .await
        .unwrap();
    wait_for("the deleted object re-created", || {
        let cms = cms.clone();
        let uid = uid.clone();
        async move {
            let live = cms.get_opt("settings").await.ok()??;
            (live.metadata.uid != uid).then_some(())
        }
    })
    .await;
}

async fn mark_orphan(bds: &Api<BundleDeployment>, name: &str) {
    let annotation = json!({"metadata": {"annotations": {"fleet.cattle.io/uninstall": "orphan"}}});
    bds.patch(name, &PatchParams::default(), &Patch::Merge(annotation))
        .await
        .unwrap();
}

#[tokio::test]
async fn an_orphaned_bundle_deployment_deleted_while_the_agent_is_away_leaves_its_objects() {
    let hub = hub().await;
    let downstream = fleet_testing::TestCluster::empty();
    let agent = start_agent(&hub.client, &downstream, default_scope());
    let files = [("a.yaml", config_map("kept", "1"))];
    let borrowed: Vec<(&str, &str)> = files.iter().map(|(n, c)| (*n, c.as_str())).collect();
    let id = publish_in(&hub.client, "away", &borrowed, "left").await;
    wait_status(&hub.client, "away", "applied", |s| {
        s.applied_deployment_id == id && s.ready
    })
    .await;
    let bds: Api<BundleDeployment> = Api::namespaced(hub.client.clone(), CLUSTER_NS);
    mark_orphan(&bds, "away").await;
    let inventories: Api<ConfigMap> =
        Api::namespaced(downstream.client.clone(), "cattle-fleet-system");
    let inventory = default_scope().inventory_name("away");
    wait_for("the orphan mark in the inventory", || {
        let inventories = inventories.clone();
        let inventory = inventory.clone();
        async move {
            let data = inventories.get(&inventory).await.ok()?.data?;
            data["inventory"].contains("\"orphan\":true").then_some(())
        }
    })
    .await;

    agent.abort();
    let _ = agent.await;
    bds.delete("away", &DeleteParams::default()).await.unwrap();
    start_agent(&hub.client, &downstream, default_scope());
    fleet_testing::gone(
        "the inventory forgotten by the new agent",
        &inventories,
        &inventory,
    )
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "left");
    assert_eq!(cms.get("kept").await.unwrap().data.unwrap()["key"], "1");
}

#[tokio::test]
async fn an_uninstall_that_fails_while_the_downstream_cluster_is_unreachable_is_retried() {
    let hub = hub().await;
    let downstream = fleet_testing::TestCluster::empty();
    let (downstream_addr, _) = downstream.serve_loopback().await;
    let link = Link::to(downstream_addr).await;
    let through_link = client_from_kubeconfig(
        &downstream
            .server
            .kubeconfig(&format!("http://{}", link.addr)),
    )
    .await;
    let mut config = fleet_agent::AgentConfig::new(hub.client.clone(), CLUSTER_NS, default_scope());
    config.monitor_interval = std::time::Duration::from_secs(3600);
    config.retry_interval = std::time::Duration::from_millis(100);
    let agent = fleet_agent::Agent::new(
        config,
        fleet_agent::Downstream::new(std::sync::Arc::new(move |_user: Option<&str>| {
            through_link.clone()
        })),
    );
    tokio::spawn(agent.run());
    let files = [("a.yaml", config_map("removed", "1"))];
    let borrowed: Vec<(&str, &str)> = files.iter().map(|(n, c)| (*n, c.as_str())).collect();
    let id = publish_in(&hub.client, "leaving", &borrowed, "gone").await;
    wait_status(&hub.client, "leaving", "applied", |s| {
        s.applied_deployment_id == id && s.ready
    })
    .await;

    link.cut();
    let bds: Api<BundleDeployment> = Api::namespaced(hub.client.clone(), CLUSTER_NS);
    bds.delete("leaving", &DeleteParams::default())
        .await
        .unwrap();
    wait_for("the agent failing to reach the downstream cluster", || {
        let refused = link.refused();
        async move { (refused >= 2).then_some(()) }
    })
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "gone");
    assert!(cms.get_opt("removed").await.unwrap().is_some());

    link.restore();
    fleet_testing::gone(
        "the uninstall retried once the cluster is back",
        &cms,
        "removed",
    )
    .await;
    let inventories: Api<ConfigMap> =
        Api::namespaced(downstream.client.clone(), "cattle-fleet-system");
    fleet_testing::gone(
        "the inventory removed after the retried uninstall",
        &inventories,
        &default_scope().inventory_name("leaving"),
    )
    .await;
}

#[tokio::test]
async fn an_orphaned_bundle_deployment_leaves_its_objects_when_deleted() {
    let (hub, downstream) = hub_with_agent().await;
    let files = [
        ("a.yaml", config_map("kept-a", "1")),
        ("b.yaml", config_map("kept-b", "2")),
    ];
    let borrowed: Vec<(&str, &str)> = files.iter().map(|(n, c)| (*n, c.as_str())).collect();
    let id = publish_in(&hub.client, "orph", &borrowed, "left").await;
    wait_status(&hub.client, "orph", "applied", |s| {
        s.applied_deployment_id == id && s.ready
    })
    .await;
    let inventories: Api<ConfigMap> =
        Api::namespaced(downstream.client.clone(), "cattle-fleet-system");
    let inventory = default_scope().inventory_name("orph");
    assert!(inventories.get_opt(&inventory).await.unwrap().is_some());

    let bds: Api<BundleDeployment> = Api::namespaced(hub.client.clone(), CLUSTER_NS);
    mark_orphan(&bds, "orph").await;
    bds.delete("orph", &DeleteParams::default()).await.unwrap();
    fleet_testing::gone("the inventory forgotten", &inventories, &inventory).await;
    let cms: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "left");
    assert_eq!(cms.get("kept-a").await.unwrap().data.unwrap()["key"], "1");
    assert_eq!(cms.get("kept-b").await.unwrap().data.unwrap()["key"], "2");

    // A new BundleDeployment of the same name starts from nothing: it adopts the objects again, and without
    // the annotation its deletion uninstalls them.
    let id = publish_in(&hub.client, "orph", &borrowed, "left").await;
    wait_status(&hub.client, "orph", "applied again", |s| {
        s.applied_deployment_id == id && s.ready
    })
    .await;
    bds.delete("orph", &DeleteParams::default()).await.unwrap();
    fleet_testing::gone("uninstalled", &cms, "kept-a").await;
}

#[tokio::test]
async fn depends_on_waits_for_the_dependency() {
    let (hub, downstream) = hub_with_agent().await;
    let db = deployment("db");
    publish_in(&hub.client, "db", &[("db.yaml", &db)], "data").await;
    let app = config_map("app", "1");
    publish(
        &hub.client,
        "app",
        &[("app.yaml", &app)],
        options_in("apps"),
        |spec| {
            spec.depends_on = vec![BundleRef {
                name: "db".into(),
                ..Default::default()
            }]
        },
    )
    .await;
    let status = wait_status(&hub.client, "app", "waiting", |s| {
        fleet_api::find_condition(&s.conditions, "Deployed").is_some()
    })
    .await;
    assert_eq!(
        condition(&status, "Deployed").message,
        "dependent bundle(s) are not ready: [db]"
    );
    let cms: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "apps");
    assert!(
        cms.get_opt("app").await.unwrap().is_none(),
        "not deployed before db is ready"
    );

    wait_for("db deployed", || {
        let api: Api<Deployment> = Api::namespaced(downstream.client.clone(), "data");
        async move { api.get_opt("db").await.ok().flatten() }
    })
    .await;
    make_available(&downstream.client, "data", "db").await;
    wait_status(&hub.client, "app", "app ready", |s| {
        s.ready && !s.applied_deployment_id.is_empty()
    })
    .await;
    assert!(cms.get_opt("app").await.unwrap().is_some());
}

#[tokio::test]
async fn broken_manifests_become_status_and_good_objects_still_deploy() {
    let (hub, downstream) = hub_with_agent().await;
    let good = config_map("good", "1");
    let unknown_kind = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n";
    let id = publish_in(
        &hub.client,
        "mixed",
        &[("good.yaml", &good), ("widget.yaml", unknown_kind)],
        "apps",
    )
    .await;
    let status = wait_status(&hub.client, "mixed", "error reported", |s| {
        fleet_api::find_condition(&s.conditions, "Deployed").is_some_and(|c| c.status == "False")
    })
    .await;
    assert_ne!(status.applied_deployment_id, id);
    assert_eq!(status.display.state, "ErrApplied");
    let message = &condition(&status, "Deployed").message;
    assert!(
        message.starts_with("widget.example.com apps/w: "),
        "{message}"
    );
    let cms: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "apps");
    assert!(cms.get_opt("good").await.unwrap().is_some());

    publish_in(
        &hub.client,
        "yaml",
        &[("bad.yaml", "kind: [unclosed\n")],
        "apps",
    )
    .await;
    let status = wait_status(&hub.client, "yaml", "render error", |s| {
        fleet_api::find_condition(&s.conditions, "Deployed").is_some_and(|c| c.status == "False")
    })
    .await;
    let message = &condition(&status, "Deployed").message;
    assert!(message.contains("bad.yaml"), "{message}");
}

#[tokio::test]
async fn two_agent_scopes_share_a_cluster_without_harming_each_other() {
    let parent_hub = hub().await;
    let local_hub = hub().await;
    let downstream = fleet_testing::TestCluster::empty();
    start_agent(
        &parent_hub.client,
        &downstream,
        Scope::new("cattle-fleet-system", ""),
    );
    start_agent(
        &local_hub.client,
        &downstream,
        Scope::new("cattle-fleet-local-system", "cattle-fleet-local-system"),
    );
    let shared = config_map("shared", "parent");
    let conflict_parent = config_map("conflict", "parent");
    let id_parent = publish_in(
        &parent_hub.client,
        "app",
        &[
            ("shared.yaml", &shared),
            ("extra.yaml", &config_map("extra", "1")),
        ],
        "parent-ns",
    )
    .await;
    let id_conflict = publish_in(
        &parent_hub.client,
        "owner",
        &[("c.yaml", &conflict_parent)],
        "common",
    )
    .await;
    wait_applied(
        &parent_hub.client,
        "owner",
        &id_conflict,
        "parent owns conflict",
    )
    .await;
    let shared_local = config_map("shared", "local");
    let id_local = publish_in(
        &local_hub.client,
        "app",
        &[("shared.yaml", &shared_local)],
        "local-ns",
    )
    .await;
    let conflict_local = config_map("conflict", "local");
    publish_in(
        &local_hub.client,
        "intruder",
        &[("c.yaml", &conflict_local)],
        "common",
    )
    .await;

    wait_status(&parent_hub.client, "app", "parent app", |s| {
        s.applied_deployment_id == id_parent && s.ready
    })
    .await;
    wait_status(&local_hub.client, "app", "local app", |s| {
        s.applied_deployment_id == id_local && s.ready
    })
    .await;
    let status = wait_status(&local_hub.client, "intruder", "conflict reported", |s| {
        fleet_api::find_condition(&s.conditions, "Deployed").is_some_and(|c| c.status == "False")
    })
    .await;
    let message = &condition(&status, "Deployed").message;
    assert!(
        message.contains("conflict: the object belongs to object set"),
        "{message}"
    );
    let common: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "common");
    assert_eq!(
        common.get("conflict").await.unwrap().data.unwrap()["key"],
        "parent",
        "not fought over"
    );

    // The parent prunes a file; the local agent's same-named objects survive, and neither reports the other's.
    let id_parent = publish_in(
        &parent_hub.client,
        "app",
        &[("shared.yaml", &shared)],
        "parent-ns",
    )
    .await;
    let status = wait_applied(&parent_hub.client, "app", &id_parent, "parent pruned").await;
    assert!(
        status.modified_status.is_empty(),
        "{:?}",
        status.modified_status
    );
    let parent_ns: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "parent-ns");
    assert!(parent_ns.get_opt("extra").await.unwrap().is_none());
    let local_ns: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "local-ns");
    assert_eq!(
        local_ns.get("shared").await.unwrap().data.unwrap()["key"],
        "local"
    );
    let status = wait_status(&local_hub.client, "app", "local still ready", |s| {
        s.ready && s.non_modified
    })
    .await;
    assert_eq!(status.resources.len(), 1);
    assert_eq!(
        common.get("conflict").await.unwrap().data.unwrap()["key"],
        "parent"
    );
}

#[tokio::test]
async fn hub_outage_keeps_the_last_state_and_catches_up_without_reapplying() {
    let hub = hub().await;
    let (hub_addr, _) = hub.serve_loopback().await;
    let link = Link::to(hub_addr).await;
    let agent_hub =
        client_from_kubeconfig(&hub.server.kubeconfig(&format!("http://{}", link.addr))).await;
    let downstream = fleet_testing::TestCluster::empty();
    start_agent(&agent_hub, &downstream, default_scope());
    let stable = config_map("stable", "1");
    let id = publish_in(&hub.client, "app", &[("stable.yaml", &stable)], "apps").await;
    wait_status(&hub.client, "app", "applied", |s| {
        s.applied_deployment_id == id && s.ready
    })
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "apps");
    let before = cms.get("stable").await.unwrap().metadata.resource_version;

    link.cut();
    let changing = config_map("new", "2");
    let id = publish_in(
        &hub.client,
        "app",
        &[("stable.yaml", &stable), ("new.yaml", &changing)],
        "apps",
    )
    .await;
    // The agent keeps trying (and failing) to reach the hub; meanwhile nothing downstream is touched.
    wait_for("the agent retrying against the cut link", || {
        let refused = link.refused();
        async move { (refused >= 2).then_some(()) }
    })
    .await;
    assert!(cms.get_opt("new").await.unwrap().is_none());
    assert_eq!(
        cms.get("stable").await.unwrap().metadata.resource_version,
        before
    );

    link.restore();
    wait_status(&hub.client, "app", "caught up", |s| {
        s.applied_deployment_id == id && s.ready
    })
    .await;
    assert!(cms.get_opt("new").await.unwrap().is_some());
    assert_eq!(
        cms.get("stable").await.unwrap().metadata.resource_version,
        before,
        "the unchanged object was not reapplied"
    );
}

#[tokio::test]
async fn the_agent_checks_in_on_its_cluster() {
    let hub = hub().await;
    create_namespace(&hub.client, "fleet-default").await;
    let cluster: fleet_api::Cluster = serde_json::from_value(
        json!({"apiVersion": fleet_api::API_VERSION, "kind": "Cluster",
            "metadata": {"name": "c1", "namespace": "fleet-default"}, "spec": {}}),
    )
    .unwrap();
    let clusters: Api<fleet_api::Cluster> = Api::namespaced(hub.client.clone(), "fleet-default");
    clusters
        .create(&Default::default(), &cluster)
        .await
        .unwrap();
    let downstream = fleet_testing::TestCluster::empty();
    let mut config = fleet_agent::AgentConfig::new(hub.client.clone(), CLUSTER_NS, default_scope());
    config.cluster = Some(fleet_agent::heartbeat::ClusterRef {
        namespace: "fleet-default".into(),
        name: "c1".into(),
    });
    tokio::spawn(fleet_agent::Agent::new(config, downstream_of(&downstream)).run());
    let agent = wait_for("lastSeen", || {
        let clusters = clusters.clone();
        async move {
            let agent = clusters.get("c1").await.ok()?.status?.agent?;
            agent.last_seen.is_some().then_some(agent)
        }
    })
    .await;
    assert_eq!(agent.namespace, "cattle-fleet-system");
}

#[tokio::test]
async fn namespace_options_service_account_and_keep_resources() {
    let (hub, downstream) = hub_with_agent().await;
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> =
        Api::all(downstream.client.clone());

    // namespaceLabels/namespaceAnnotations on the created target namespace; deleteNamespace on uninstall.
    let mut options = options_in("labelled");
    options.namespace_labels = Some([("team".to_string(), "a".to_string())].into());
    options.namespace_annotations = Some([("note".to_string(), "fleet".to_string())].into());
    options.delete_namespace = true;
    let cm = config_map("cm", "1");
    let id = publish(
        &hub.client,
        "labelled",
        &[("cm.yaml", &cm)],
        options,
        |_| {},
    )
    .await;
    wait_applied(&hub.client, "labelled", &id, "applied").await;
    let ns = namespaces.get("labelled").await.unwrap();
    assert_eq!(ns.metadata.labels.unwrap()["team"], "a");
    assert_eq!(ns.metadata.annotations.unwrap()["note"], "fleet");

    // createNamespace: false refuses a missing namespace, in status.
    let mut options = options_in("absent");
    options.create_namespace = Some(false);
    publish(&hub.client, "no-ns", &[("cm.yaml", &cm)], options, |_| {}).await;
    let status = wait_status(&hub.client, "no-ns", "refused", |s| {
        fleet_api::find_condition(&s.conditions, "Deployed").is_some_and(|c| c.status == "False")
    })
    .await;
    assert!(
        condition(&status, "Deployed")
            .message
            .contains("namespace absent does not exist and createNamespace is false"),
        "{:?}",
        status.conditions
    );

    // serviceAccount: the agent deploys as that account; without RBAC the API server refuses (403) and the
    // refusal is the status.
    let mut options = options_in("apps");
    options.service_account = "deployer".into();
    publish(
        &hub.client,
        "as-sa",
        &[("cm.yaml", &config_map("sa-cm", "1"))],
        options,
        |_| {},
    )
    .await;
    let status = wait_status(&hub.client, "as-sa", "forbidden", |s| {
        fleet_api::find_condition(&s.conditions, "Deployed").is_some_and(|c| c.status == "False")
    })
    .await;
    let message = &condition(&status, "Deployed").message;
    assert!(
        message.contains("system:serviceaccount:cattle-fleet-system:deployer")
            && message.contains("forbidden"),
        "{message}"
    );

    // keepResources: deleting the BundleDeployment leaves its objects.
    let mut options = options_in("kept");
    options.keep_resources = true;
    let id = publish(
        &hub.client,
        "kept",
        &[("cm.yaml", &config_map("kept", "1"))],
        options,
        |_| {},
    )
    .await;
    wait_applied(&hub.client, "kept", &id, "applied").await;
    let bds: Api<BundleDeployment> = Api::namespaced(hub.client.clone(), CLUSTER_NS);
    bds.delete("kept", &DeleteParams::default()).await.unwrap();
    bds.delete("labelled", &DeleteParams::default())
        .await
        .unwrap();
    wait_for("labelled namespace deleted", || {
        let namespaces = namespaces.clone();
        async move {
            let ns = namespaces.get_opt("labelled").await.unwrap();
            (ns.is_none() || ns.is_some_and(|ns| ns.metadata.deletion_timestamp.is_some()))
                .then_some(())
        }
    })
    .await;
    let kept: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "kept");
    assert!(
        kept.get_opt("kept").await.unwrap().is_some(),
        "keepResources leaves the object"
    );
}

#[tokio::test]
async fn extra_objects_of_the_set_are_reported() {
    let (hub, downstream) = hub_with_agent().await;
    let id = publish_in(
        &hub.client,
        "set",
        &[("a.yaml", &config_map("a", "1"))],
        "apps",
    )
    .await;
    wait_status(&hub.client, "set", "applied", |s| {
        s.applied_deployment_id == id && s.ready
    })
    .await;

    // An object carrying this set's marks that the bundle does not deploy (e.g. a prune that failed).
    let scope = default_scope();
    let set_id = scope.set_id("set");
    let stray: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "stray",
        "annotations": {fleet_agent::scope::SET_ID_ANNOTATION: set_id},
        "labels": {fleet_agent::scope::SCOPE_LABEL: scope.label_value(),
                   fleet_agent::scope::SET_HASH_LABEL: Scope::set_hash(&set_id)}}}))
    .unwrap();
    Api::<ConfigMap>::namespaced(downstream.client.clone(), "apps")
        .create(&Default::default(), &stray)
        .await
        .unwrap();
    let status = wait_status(&hub.client, "set", "extra reported", |s| !s.non_modified).await;
    assert_eq!(status.resource_counts.orphaned, 1);
    assert_eq!(
        status.modified_status[0].to_string(),
        "configmap.v1 apps/stray extra"
    );
}
