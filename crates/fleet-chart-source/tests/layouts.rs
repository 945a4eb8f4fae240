//! fleet-examples' Helm layouts with their chart URLs pointed at a local HTTPS chart repository (basic auth, a
//! private CA): `helm-external` (a chart URL with per-target values), `helm-multi-chart` (a local chart beside two
//! charts from a repository, with a build-metadata version) and `helm-kustomize` (a chart URL post-rendered by a
//! kustomization). Helm output is compared with the real `helm template` of the same chart reference and values;
//! the post-rendered objects with that output built by the real `kubectl kustomize` as Fleet's post-renderer
//! builds it.

mod servers;

use std::path::{Path, PathBuf};

use fleet_api::Bundle;
use fleet_bundle::ReadOptions;
use fleet_bundle::read::read_bundles_with_charts;
use fleet_bundle::tree::LocalTree;
use fleet_chart_source::{ChartSource, Credentials};
use fleet_render::test_cluster as target;
use fleet_render::{Style, decode_files, detect_style, helm::render_bundle_chart};
use servers::{ChartRepo, PASSWORD, USER, helm, index, package_versions, run};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Copies a fixture layout into `dest` with `@REPO@` replaced by the repository URL.
fn copy_layout(from: &Path, dest: &Path, repo: &str) {
    std::fs::create_dir_all(dest).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = dest.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_layout(&entry.path(), &target, repo);
        } else {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            std::fs::write(target, text.replace("@REPO@", repo)).unwrap();
        }
    }
}

struct Env {
    home: tempfile::TempDir,
    repo: ChartRepo,
    ca_file: PathBuf,
    source: ChartSource,
}

impl Env {
    fn start() -> Self {
        let home = tempfile::tempdir().unwrap();
        let served = home.path().join("served");
        run(helm(home.path())
            .arg("package")
            .arg(fixtures().join("guestbook"))
            .arg("-d")
            .arg(&served));
        for name in ["monitoring-crd", "monitoring"] {
            package_versions(
                home.path(),
                name,
                &["104.0.0+up56.0.0", "104.1.0+up57.0.3"],
                &served,
            );
        }
        index(home.path(), &served);
        let repo = ChartRepo::start(&served);
        let ca_file = home.path().join("ca.pem");
        std::fs::write(&ca_file, &repo.pki.ca).unwrap();
        Self {
            home,
            repo,
            ca_file,
            source: ChartSource::new(),
        }
    }

    fn read(&self, layout: &str) -> Vec<Bundle> {
        let dir = self.home.path().join("layouts").join(layout);
        copy_layout(&fixtures().join(layout), &dir, &self.repo.url());
        let credentials = Credentials {
            default: self.repo.auth(),
            url_regex: "https://127\\.0\\.0\\.1:".into(),
            ..Default::default()
        };
        let session = self.source.session(credentials);
        let fetcher = session.for_path(".");
        let options = ReadOptions {
            repo_name: layout.into(),
            targets: Some(fleet_bundle::TargetsSpec::gitrepo_default()),
            ..ReadOptions::default()
        };
        let bundles = read_bundles_with_charts(
            &LocalTree::new(dir),
            &[],
            &options,
            &fetcher,
            &mut |_, _| {},
        )
        .unwrap();
        let json = serde_json::to_string(&bundles).unwrap();
        assert!(!json.contains(PASSWORD), "a Bundle holds the password");
        bundles
    }

    /// The real `helm template` of a chart reference with `values` (JSON) as a values file.
    fn golden(
        &self,
        release: &str,
        namespace: &str,
        reference: &[&str],
        values: &serde_json::Value,
    ) -> String {
        let values_file = self.home.path().join("values.json");
        std::fs::write(&values_file, values.to_string()).unwrap();
        run(helm(self.home.path())
            .args(["template", release])
            .args(reference)
            .args(["-n", namespace, "--username", USER, "--password", PASSWORD])
            .arg("--ca-file")
            .arg(&self.ca_file)
            .arg("-f")
            .arg(&values_file))
    }
}

/// Our Helm output for `bundle` deployed with `options`.
fn ours(bundle: &Bundle, options: &fleet_api::BundleDeploymentOptions, release: &str) -> String {
    let files = decode_files(&bundle.spec.resources).unwrap();
    let Style::Helm { chart_dir } = detect_style(&files, options) else {
        panic!("not a Helm bundle");
    };
    render_bundle_chart(&files, &chart_dir, options, release).unwrap()
}

fn values(options: &fleet_api::BundleDeploymentOptions) -> serde_json::Value {
    options
        .helm
        .as_ref()
        .and_then(|h| h.values.as_ref())
        .map_or_else(
            || serde_json::json!({}),
            |v| serde_json::Value::Object(v.0.clone()),
        )
}

fn cluster(env: &str) -> target::TestCluster {
    target::TestCluster {
        name: format!("{env}-cluster"),
        labels: [("env".to_string(), env.to_string())].into(),
        group: "default".into(),
        group_labels: Default::default(),
    }
}

#[test]
fn fleet_examples_helm_layouts_render_as_helm_does() {
    let env = Env::start();
    let url = format!("{}/guestbook-0.0.1.tgz", env.repo.url());

    let external = env.read("helm-external").remove(0);
    for (name, replicas, slave) in [
        ("dev", "1", false),
        ("test", "3", true),
        ("prod", "3", true),
    ] {
        let matched = target::match_cluster(&external, &cluster(name), None)
            .unwrap()
            .unwrap();
        let output = ours(&external, &matched.options, "helm-external");
        let golden = env.golden(
            "helm-external",
            "fleet-mc-helm-external-example",
            &[&url],
            &values(&matched.options),
        );
        assert_eq!(output, golden, "target {name}");
        assert!(
            output.contains(&format!("replicas: {replicas}")),
            "{output}"
        );
        assert_eq!(output.contains("redis-slave"), slave, "{output}");
    }

    let multi = env.read("helm-multi-chart");
    let names: Vec<_> = multi
        .iter()
        .map(|b| b.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "helm-multi-chart-guestbook",
            "helm-multi-chart-monitoring",
            "helm-multi-chart-monitoring-crd"
        ]
    );
    for bundle in &multi[1..] {
        let helm = bundle.spec.options.helm.as_ref().unwrap();
        let output = ours(bundle, &bundle.spec.options, &helm.release_name);
        let golden = env.golden(
            &helm.release_name,
            "cattle-monitoring-system",
            &[
                &helm.chart,
                "--repo",
                &env.repo.url(),
                "--version",
                &helm.version,
            ],
            &serde_json::json!({}),
        );
        assert_eq!(output, golden, "{}", helm.chart);
        assert!(
            output.contains("chart: monitoring") && output.contains("104.1.0_up57.0.3"),
            "{output}"
        );
    }
    let guestbook = &multi[0];
    assert!(ours(guestbook, &guestbook.spec.options, "guestbook").contains("replicas: 2"));

    let kustomized = env.read("helm-kustomize").remove(0);
    let objects = fleet_render::render_bundle(
        &kustomized.spec.resources,
        &kustomized.spec.options,
        "helm-kustomize",
    )
    .unwrap();
    let slave_service = objects
        .iter()
        .find(|o| o["kind"] == "Service" && o["metadata"]["name"] == "redis-slave")
        .expect("the chart's redis-slave Service");
    assert_eq!(
        slave_service["spec"]["ports"][0]["port"], 1234,
        "patched by the overlay"
    );
    let slave = objects
        .iter()
        .find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == "redis-slave")
        .unwrap();
    assert_eq!(slave["spec"]["replicas"], 0);
    assert!(objects.iter().any(|o| o["metadata"]["name"] == "frontend"));

    // Byte for byte as Fleet renders it: the real helm's output written as `fleet-manifests.yaml`, first in the
    // overlay's resources, built by the real kubectl.
    let overlay = env.home.path().join("post-render/overlays/dev");
    copy_layout(
        &fixtures().join("helm-kustomize/overlays/dev"),
        &overlay,
        &env.repo.url(),
    );
    let helm_output = env.golden(
        "helm-kustomize",
        "fleet-helm-kustomize-example",
        &[&url],
        &serde_json::json!({}),
    );
    std::fs::write(overlay.join("fleet-manifests.yaml"), helm_output).unwrap();
    let kustomization = std::fs::read_to_string(overlay.join("kustomization.yaml")).unwrap();
    std::fs::write(
        overlay.join("kustomization.yaml"),
        format!("resources:\n- fleet-manifests.yaml\n{kustomization}"),
    )
    .unwrap();
    let built = run(
        std::process::Command::new(servers::repo_root().join(".tools/bin/kubectl"))
            .arg("kustomize")
            .arg(&overlay),
    );
    let expected = fleet_yaml::parse::documents_with(
        &fleet_yaml::parse::Options::kustomize(),
        &built,
        "kubectl kustomize",
    )
    .unwrap();
    let unplaced = fleet_render::render_without_namespaces(
        &kustomized.spec.resources,
        &kustomized.spec.options,
        "helm-kustomize",
    )
    .unwrap()
    .objects;
    assert_eq!(unplaced, expected);
}
