//! Charts inside the repository, against the real Helm: a chart whose `file://` dependencies live inside and
//! outside the bundle directory is read (dependencies vendored as Fleet's dependency update would), and its render
//! must equal `helm dependency update` + `helm template` on a copy of the same repository; a packaged chart named
//! by `helm.chart: ./web-0.1.0.tgz` must render as `helm template` renders the archive. Fixtures:
//! `testdata/local-charts` (see its README).
//!
//! helm comes from `scripts/install-tools.sh` (`.tools/bin/helm`) or `$HELM`; these tests fail, never skip, when
//! it is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use fleet_bundle::discover::BundleLocation;
use fleet_bundle::read::read_bundle;
use fleet_bundle::tree::{LocalTree, TreePath};
use fleet_bundle::{ReadError, ReadOptions};
use fleet_render::helm;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/local-charts")
}

fn helm_path() -> PathBuf {
    let path = std::env::var_os("HELM")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/bin/helm"));
    assert!(
        path.exists(),
        "helm not found at {}: run scripts/install-tools.sh (or set HELM) before these tests",
        path.display()
    );
    path
}

/// Runs the real helm with its own empty home directories; returns stdout, panicking with stderr on failure.
fn run_helm(home: &Path, args: &[&str]) -> String {
    let output = Command::new(helm_path())
        .args(args)
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_DATA_HOME", home.join("data"))
        .output()
        .expect("helm runs");
    assert!(
        output.status.success(),
        "helm {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn read(root: &Path, dir: &str) -> Result<fleet_api::Bundle, ReadError> {
    let tree = LocalTree::new(root.to_path_buf());
    let location = BundleLocation {
        dir: TreePath::new(dir).unwrap(),
        options_file: None,
    };
    let options = ReadOptions {
        repo_name: "repo".into(),
        ..ReadOptions::default()
    };
    read_bundle(&tree, &location, &options).map(|bundle| bundle.expect("the bundle has resources"))
}

/// Our `helm template` text for a bundle with its own options.
fn our_render(bundle: &fleet_api::Bundle, options: &fleet_api::BundleDeploymentOptions) -> String {
    let files = fleet_render::decode_files(&bundle.spec.resources).unwrap();
    let chart = &options.helm.as_ref().unwrap().chart;
    helm::render_bundle_chart(
        &files,
        chart,
        options,
        bundle.metadata.name.as_deref().unwrap(),
    )
    .unwrap()
}

fn values_file(dir: &Path, options: &fleet_api::BundleDeploymentOptions) -> PathBuf {
    let values = options.helm.as_ref().unwrap().values.clone().unwrap();
    let path = dir.join("values.json");
    std::fs::write(&path, serde_json::to_string(&values).unwrap()).unwrap();
    path
}

#[test]
fn file_dependencies_are_vendored_and_render_as_helm_dependency_update_does() {
    let bundle = read(&fixture(), "app").unwrap();
    let names = bundle.spec.resource_names();
    for vendored in [
        "chart/charts/greeting/Chart.yaml",
        "chart/charts/greeting/templates/configmap.yaml",
        "chart/charts/greeting/values.yaml",
        "chart/charts/sidecar/Chart.yaml",
        "chart/charts/sidecar/templates/configmap.yaml",
    ] {
        assert!(names.contains(&vendored), "{vendored} not in {names:?}");
    }
    let ours = our_render(&bundle, &bundle.spec.options);

    let temp = tempfile::tempdir().unwrap();
    let repo = temp.path().join("repo");
    fleet_testing::copy_dir(&fixture(), &repo);
    let chart = repo.join("app/chart");
    run_helm(
        temp.path(),
        &["dependency", "update", chart.to_str().unwrap()],
    );
    let values = values_file(temp.path(), &bundle.spec.options);
    let golden = run_helm(
        temp.path(),
        &[
            "template",
            "rel",
            chart.to_str().unwrap(),
            "--namespace",
            "apps",
            "--kube-version",
            "v1.33.0",
            "-f",
            values.to_str().unwrap(),
        ],
    );
    assert!(golden.contains("name: rel-extra"), "{golden}");
    assert!(golden.contains("hello from the bundle"), "{golden}");
    assert_eq!(ours, golden);
}

#[test]
fn disabled_dependency_update_leaves_the_chart_unrenderable_as_helm_does() {
    let temp = tempfile::tempdir().unwrap();
    let repo = temp.path().join("repo");
    fleet_testing::copy_dir(&fixture(), &repo);
    let fleet_yaml = repo.join("app/fleet.yaml");
    let text = std::fs::read_to_string(&fleet_yaml).unwrap();
    std::fs::write(
        &fleet_yaml,
        text.replace("helm:\n", "helm:\n  disableDependencyUpdate: true\n"),
    )
    .unwrap();
    let bundle = read(&repo, "app").unwrap();
    assert!(
        !bundle
            .spec
            .resources
            .iter()
            .any(|r| r.name.starts_with("chart/charts/")),
        "nothing vendored"
    );
    let files = fleet_render::decode_files(&bundle.spec.resources).unwrap();
    let err = helm::render_bundle_chart(&files, "./chart", &bundle.spec.options, "b")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("found in Chart.yaml, but missing in charts/ directory: greeting, sidecar"),
        "{err}"
    );
}

#[test]
fn a_packaged_chart_in_the_bundle_renders_as_helm_renders_the_archive() {
    let bundle = read(&fixture(), "packaged").unwrap();
    let name = bundle.metadata.name.clone().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let archive = fixture().join("packaged/web-0.1.0.tgz");
    for options in [
        bundle.spec.options.clone(),
        bundle.spec.targets[0].options.clone(),
    ] {
        let ours = our_render(&bundle, &options);
        let values = values_file(temp.path(), &options);
        let golden = run_helm(
            temp.path(),
            &[
                "template",
                &name,
                archive.to_str().unwrap(),
                "--namespace",
                "default",
                "--kube-version",
                "v1.33.0",
                "-f",
                values.to_str().unwrap(),
            ],
        );
        assert_eq!(ours, golden);
    }
    // And through the whole render, as the agent and `fleet test` use it.
    let objects =
        fleet_render::render_bundle(&bundle.spec.resources, &bundle.spec.options, &name).unwrap();
    assert_eq!(objects.len(), 1);
    assert_eq!(objects[0]["kind"], "Service");
    assert_eq!(objects[0]["spec"]["ports"][0]["port"], 8080);
}
