//! The example GitRepos under `examples/gitrepos/`: each `gitrepo.yaml` is a valid Fleet GitRepo whose paths
//! exist, and each repository content reads into bundles; the multi-cluster example renders differently per
//! environment, and so does the Helm example (a local chart with per-environment values).

use std::path::{Path, PathBuf};

use fleet_api::GitRepo;
use fleet_bundle::render::{self, target};
use fleet_bundle::tree::LocalTree;
use fleet_bundle::{ReadOptions, read_bundles};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn gitrepo(example: &str) -> GitRepo {
    let path = workspace()
        .join("examples/gitrepos")
        .join(example)
        .join("gitrepo.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    fleet_yaml::parse::from_str(&text, &path.to_string_lossy()).unwrap()
}

#[test]
fn gitrepos_parse_and_their_paths_read_into_bundles() {
    for example in ["simple", "multi-cluster", "helm"] {
        let repo = gitrepo(example);
        assert!(!repo.spec.repo.is_empty());
        let options = ReadOptions {
            repo_name: repo.metadata.name.clone().unwrap(),
            ..ReadOptions::default()
        };
        let bundles =
            read_bundles(&LocalTree::new(workspace()), &repo.spec.paths, &options).unwrap();
        assert_eq!(bundles.len(), 1, "{example}");
    }
}

#[test]
fn multi_cluster_example_differs_per_environment() {
    let repo = gitrepo("multi-cluster");
    let options = ReadOptions {
        repo_name: "multi-cluster".to_string(),
        targets: Some(target::gitrepo_default_targets()),
        ..ReadOptions::default()
    };
    let bundle = read_bundles(&LocalTree::new(workspace()), &repo.spec.paths, &options)
        .unwrap()
        .remove(0);
    let mut replicas = Vec::new();
    for env in ["dev", "staging", "prod"] {
        let cluster = target::TestCluster {
            name: format!("{env}-1"),
            labels: [("env".to_string(), env.to_string())].into(),
            group: "default".to_string(),
            ..Default::default()
        };
        let matched = target::match_cluster(&bundle, &cluster, None)
            .unwrap()
            .unwrap();
        assert_eq!(matched.display_name(), env);
        let objects = render::render(&bundle.spec.resources, &matched.options).unwrap();
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
    let repo = gitrepo("helm");
    let options = ReadOptions {
        repo_name: "helm".to_string(),
        targets: Some(target::gitrepo_default_targets()),
        ..ReadOptions::default()
    };
    let bundle = read_bundles(&LocalTree::new(workspace()), &repo.spec.paths, &options)
        .unwrap()
        .remove(0);
    let mut rendered = Vec::new();
    for env in ["dev", "staging", "prod"] {
        let cluster = target::TestCluster {
            name: format!("{env}-1"),
            labels: [("env".to_string(), env.to_string())].into(),
            group: "default".to_string(),
            ..Default::default()
        };
        let matched = target::match_cluster(&bundle, &cluster, None)
            .unwrap()
            .unwrap();
        assert_eq!(matched.display_name(), env);
        let name = bundle.metadata.name.as_deref().unwrap();
        let objects =
            render::render_bundle(&bundle.spec.resources, &matched.options, name).unwrap();
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
            (5, "LoadBalancer".to_string())
        ]
    );
}
