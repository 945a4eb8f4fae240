//! The examples under `examples/gitrepos/`: each folder holds a `gitrepo.yaml` (GitRepos, and the ClusterGroups they
//! target) and a `repo/` folder, the content of the git repository those GitRepos point to, with `spec.paths`
//! relative to it. Every GitRepo parses and its paths read into the expected bundles; bundle references
//! (`dependsOn`, cluster groups) resolve inside the example; the multi-cluster and Helm examples render differently
//! per environment.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use fleet_api::{Bundle, ClusterGroup, GitRepo};
use fleet_bundle::tree::LocalTree;
use fleet_bundle::{ReadOptions, read_bundles};
use fleet_render::test_cluster as target;

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/gitrepos")
}

/// The documents of an example's `gitrepo.yaml`, split by kind.
fn manifests(example: &str) -> (Vec<GitRepo>, Vec<ClusterGroup>) {
    let path = examples_dir().join(example).join("gitrepo.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let origin = path.to_string_lossy();
    let mut gitrepos = Vec::new();
    let mut groups = Vec::new();
    for document in fleet_yaml::parse::documents(&text, &origin).unwrap() {
        match document["kind"].as_str() {
            Some("GitRepo") => gitrepos.push(serde_json::from_value(document).unwrap()),
            Some("ClusterGroup") => groups.push(serde_json::from_value(document).unwrap()),
            other => panic!("{origin}: unexpected kind {other:?}"),
        }
    }
    (gitrepos, groups)
}

/// The bundles a GitRepo of the example reads from the example's `repo/` folder.
fn bundles_of(example: &str, repo: &GitRepo) -> Vec<Bundle> {
    let options = ReadOptions {
        repo_name: repo.metadata.name.clone().unwrap(),
        targets: Some(fleet_bundle::TargetsSpec::gitrepo_default()),
        ..ReadOptions::default()
    };
    let tree = LocalTree::new(examples_dir().join(example).join("repo"));
    read_bundles(&tree, &repo.spec.paths, &options).unwrap()
}

fn bundle_names(bundles: &[Bundle]) -> BTreeSet<String> {
    bundles
        .iter()
        .map(|b| b.metadata.name.clone().unwrap())
        .collect()
}

#[test]
fn every_example_reads_into_its_bundles() {
    let expected: &[(&str, &[&str])] = &[
        ("simple", &["simple"]),
        ("multi-cluster", &["multi-cluster"]),
        ("helm", &["helm"]),
        ("depends-on", &["depends-on-app", "depends-on-database"]),
        ("rollout", &["rollout"]),
        ("cluster-groups", &["cluster-groups"]),
        (
            "fleet-managing-fleet",
            &["hub-platform-hub", "platform-downstream"],
        ),
        ("placement", &["placement"]),
    ];
    let on_disk: BTreeSet<String> = std::fs::read_dir(examples_dir())
        .unwrap()
        .map(|entry| entry.unwrap())
        .filter(|entry| entry.file_type().unwrap().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    let listed: BTreeSet<String> = expected.iter().map(|(e, _)| e.to_string()).collect();
    assert_eq!(on_disk, listed, "every example folder is checked here");
    for (example, names) in expected {
        let (gitrepos, _) = manifests(example);
        assert!(!gitrepos.is_empty(), "{example}");
        let mut all = Vec::new();
        for repo in &gitrepos {
            assert!(!repo.spec.repo.is_empty(), "{example}");
            all.extend(bundles_of(example, repo));
        }
        let want: BTreeSet<String> = names.iter().map(|n| n.to_string()).collect();
        assert_eq!(bundle_names(&all), want, "{example}");
    }
}

#[test]
fn depends_on_names_a_bundle_of_the_same_example() {
    let (gitrepos, _) = manifests("depends-on");
    let bundles = bundles_of("depends-on", &gitrepos[0]);
    let names = bundle_names(&bundles);
    let app = bundles
        .iter()
        .find(|b| b.metadata.name.as_deref() == Some("depends-on-app"))
        .unwrap();
    let depends_on: Vec<_> = app.spec.depends_on.iter().map(|d| d.name.clone()).collect();
    assert_eq!(depends_on, ["depends-on-database"]);
    assert!(names.contains("depends-on-database"));
}

#[test]
fn cluster_group_targets_name_groups_defined_beside_them() {
    let (gitrepos, groups) = manifests("cluster-groups");
    let defined: BTreeSet<_> = groups
        .iter()
        .map(|g| g.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(
        defined,
        BTreeSet::from(["non-production".to_string(), "production".to_string()])
    );
    for target in &gitrepos[0].spec.targets {
        assert!(defined.contains(&target.cluster_group), "{target:?}");
    }
}

#[test]
fn rollout_example_has_one_partition_per_environment() {
    let (gitrepos, _) = manifests("rollout");
    let bundle = bundles_of("rollout", &gitrepos[0]).remove(0);
    let strategy = bundle.spec.rollout_strategy.unwrap();
    let partitions: Vec<_> = strategy.partitions.iter().map(|p| p.name.clone()).collect();
    assert_eq!(partitions, ["dev", "staging", "prod"]);
    assert_eq!(
        serde_json::to_value(&strategy.max_unavailable_partitions).unwrap(),
        serde_json::json!(0)
    );
}

#[test]
fn placement_example_picks_two_clusters() {
    let (gitrepos, _) = manifests("placement");
    let bundle = bundles_of("placement", &gitrepos[0]).remove(0);
    let placement = bundle.spec.placement.unwrap();
    assert_eq!(placement.placement_type, "PickN");
    assert_eq!(placement.number_of_clusters, Some(2));
    assert_eq!(
        placement.topology_spread_constraints[0].topology_key,
        "region"
    );
}

/// What `bundle` deploys on a cluster labelled `env=<env>`, after checking that the target customization named
/// after the environment is the one that matched.
fn render_for_env(bundle: &Bundle, env: &str) -> Vec<serde_json::Value> {
    let cluster = target::TestCluster {
        name: format!("{env}-1"),
        labels: [("env".to_string(), env.to_string())].into(),
        group: "default".to_string(),
        ..Default::default()
    };
    let matched = target::match_cluster(bundle, &cluster, None)
        .unwrap()
        .unwrap();
    assert_eq!(matched.display_name(), env);
    let name = bundle.metadata.name.as_deref().unwrap();
    fleet_render::render_bundle(&bundle.spec.resources, &matched.options, name).unwrap()
}

#[test]
fn multi_cluster_example_differs_per_environment() {
    let (gitrepos, _) = manifests("multi-cluster");
    let bundle = bundles_of("multi-cluster", &gitrepos[0]).remove(0);
    let mut replicas = Vec::new();
    for env in ["dev", "staging", "prod"] {
        let objects = render_for_env(&bundle, env);
        let config = objects.iter().find(|o| o["kind"] == "ConfigMap").unwrap();
        assert_eq!(config["data"]["environment"], env);
        assert!(
            objects
                .iter()
                .all(|o| o["metadata"]["namespace"] == "guestbook")
        );
        let deployment = objects.iter().find(|o| o["kind"] == "Deployment").unwrap();
        replicas.push(deployment["spec"]["replicas"].as_i64().unwrap());
    }
    assert_eq!(replicas, [1, 2, 5]);
}

#[test]
fn helm_example_renders_its_chart_per_environment() {
    let (gitrepos, _) = manifests("helm");
    let bundle = bundles_of("helm", &gitrepos[0]).remove(0);
    let mut rendered = Vec::new();
    for env in ["dev", "staging", "prod"] {
        let objects = render_for_env(&bundle, env);
        let kinds: Vec<_> = objects
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            ["ConfigMap", "Service", "Deployment"],
            "Helm's install order"
        );
        assert!(
            objects
                .iter()
                .all(|o| o["metadata"]["namespace"] == "guestbook")
        );
        assert!(objects.iter().all(|o| {
            o["metadata"]["name"]
                .as_str()
                .unwrap()
                .starts_with("guestbook")
        }));
        assert_eq!(objects[0]["data"]["environment"], env);
        let deployment = &objects[2];
        assert_eq!(deployment["metadata"]["labels"]["environment"], env);
        rendered.push((
            deployment["spec"]["replicas"].as_i64().unwrap(),
            objects[1]["spec"]["type"].as_str().unwrap().to_string(),
        ));
    }
    assert_eq!(
        rendered,
        [
            (1, "ClusterIP".to_string()),
            (2, "ClusterIP".to_string()),
            (5, "NodePort".to_string())
        ]
    );
}
