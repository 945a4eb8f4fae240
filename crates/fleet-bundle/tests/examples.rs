//! The example GitRepos under `examples/gitrepos/`: each `gitrepo.yaml` is a valid Fleet GitRepo whose paths
//! exist, and each repository content reads into bundles; the multi-cluster example renders differently per
//! environment.

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
    for example in ["simple", "multi-cluster"] {
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
