//! The real `fleet` binary on `testdata/bundles`: `fleet apply -o -` without any kubeconfig or cluster, and
//! `fleet test` with cluster labels, groups and targets. Output is snapshotted and must not vary between runs.

use std::path::Path;
use std::process::{Command, Output};

fn fleet(args: &[&str]) -> Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    Command::new(env!("CARGO_BIN_EXE_fleet"))
        .args(args)
        .current_dir(root)
        .env_remove("KUBECONFIG")
        .env_remove("COMMIT")
        .env_remove("NAMESPACE")
        .env("HOME", "/nonexistent")
        .output()
        .expect("the fleet binary runs")
}

fn stdout_of(args: &[&str]) -> String {
    let output = fleet(args);
    assert!(
        output.status.success(),
        "fleet {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn failure_of(args: &[&str]) -> String {
    let output = fleet(args);
    assert!(!output.status.success(), "fleet {args:?} should fail");
    assert!(output.stdout.is_empty(), "no partial output on failure");
    String::from_utf8(output.stderr).unwrap()
}

#[test]
fn apply_prints_bundles_offline_and_deterministically() {
    let args = [
        "apply",
        "-o",
        "-",
        "example",
        "testdata/bundles/simple",
        "--commit",
        "abc123",
    ];
    let first = stdout_of(&args);
    assert_eq!(
        first,
        stdout_of(&args),
        "output must be byte-identical between runs"
    );
    insta::assert_snapshot!("apply_simple", first);
}

/// fleet.yaml `imageScans` become ImageScans printed after the Bundle, named `imagescan-<bundle>-<position>`
/// (the entry without an image is skipped); without `--imagescan-enabled` they are refused, as Fleet's apply
/// refuses them.
#[test]
fn apply_prints_image_scans_only_when_enabled() {
    let mut args = vec![
        "apply",
        "-o",
        "-",
        "example",
        "testdata/bundles/image-scans",
        "--commit",
        "abc123",
        "-l",
        "team=a",
    ];
    let refused = failure_of(&args);
    assert!(
        refused.contains("imagescan is disabled") && refused.contains("--imagescan-enabled"),
        "{refused}"
    );
    args.push("--imagescan-enabled");
    insta::assert_snapshot!("apply_image_scans", stdout_of(&args));
}

#[test]
fn apply_shows_no_progress_when_stderr_is_not_a_terminal() {
    let output = fleet(&[
        "apply",
        "-o",
        "-",
        "--commit",
        "abc",
        "example",
        "testdata/bundles/nested",
    ]);
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "",
        "3 bundles, but stderr is a pipe"
    );
    let bundles = String::from_utf8(output.stdout).unwrap();
    assert_eq!(bundles.matches("kind: Bundle").count(), 3);
}

#[test]
fn apply_with_every_option_flag() {
    insta::assert_snapshot!(
        "apply_flags",
        stdout_of(&[
            "apply",
            "-o",
            "-",
            "-n",
            "team-a",
            "-l",
            "fleet.cattle.io/repo-name=example",
            "-l",
            "env=ci",
            "--target-namespace",
            "forced",
            "--service-account",
            "deployer",
            "--paused",
            "--keep-resources",
            "--delete-namespace",
            "--correct-drift",
            "--commit",
            "abc123",
            "example",
            "testdata/bundles/nested",
        ])
    );
}

#[test]
fn apply_with_targets_file_and_compression() {
    let out = stdout_of(&[
        "apply",
        "-o",
        "-",
        "-c",
        "--commit",
        "abc123",
        "--targets-file",
        "testdata/bundles/targets-file/.targets.yaml",
        "example",
        "testdata/bundles/targets-file",
    ]);
    assert!(out.contains("encoding: base64+gz"), "{out}");
    insta::assert_snapshot!("apply_targets_file", out);
}

#[test]
fn apply_labels_the_checked_out_commit_by_default() {
    // A checkout of its own, so the expectation does not depend on the state of this repository.
    let checkout = tempfile::tempdir().unwrap();
    let git = checkout.path().join(".git");
    std::fs::create_dir_all(git.join("refs/heads")).unwrap();
    std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let sha = "89abcdef0123456789abcdef0123456789abcdef";
    std::fs::write(git.join("refs/heads/main"), format!("{sha}\n")).unwrap();
    std::fs::write(checkout.path().join("cm.yaml"), "kind: ConfigMap\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_fleet"))
        .args(["apply", "-o", "-", "example"])
        .current_dir(checkout.path())
        .env_remove("COMMIT")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let out = String::from_utf8(output.stdout).unwrap();
    assert!(
        out.contains(&format!("    fleet.cattle.io/commit: {sha}\n")),
        "{out}"
    );
    // An explicit commit wins.
    let output = Command::new(env!("CARGO_BIN_EXE_fleet"))
        .args(["apply", "-o", "-", "example"])
        .current_dir(checkout.path())
        .env("COMMIT", "from-env")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stdout).contains("fleet.cattle.io/commit: from-env\n"));
}

#[test]
fn apply_errors_name_the_file() {
    let err = failure_of(&[
        "apply",
        "-o",
        "-",
        "example",
        "testdata/bundles/error-unknown-key",
    ]);
    assert_eq!(
        err,
        "error: testdata/bundles/error-unknown-key/fleet.yaml:1:1: unknown key `defaultNamspace`: did you mean \
         `defaultNamespace`?\ntestdata/bundles/error-unknown-key/fleet.yaml:3:3: unknown key `helm.releaseNam`: did \
         you mean `releaseName`?\n"
    );
    let err = failure_of(&[
        "apply",
        "-o",
        "-",
        "example",
        "testdata/bundles/error-nothing-found",
    ]);
    assert_eq!(
        err,
        "error: no resource found at the following paths to deploy: [testdata/bundles/error-nothing-found]\n"
    );
    let err = failure_of(&["apply", "example", "testdata/bundles/simple"]);
    assert!(err.contains("use `-o -`"), "{err}");
}

#[test]
fn test_renders_the_matching_customization() {
    let output = fleet(&["test", "testdata/bundles/overlays", "-l", "env=prod"]);
    assert!(output.status.success());
    assert_eq!(String::from_utf8_lossy(&output.stderr), "# Matched: prod\n");
    insta::assert_snapshot!(
        "test_overlays_prod",
        String::from_utf8(output.stdout).unwrap()
    );

    let output = fleet(&[
        "test",
        "testdata/bundles/customizations-all-matches",
        "-l",
        "env=dev",
        "-L",
        "tier=edge",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "# Matched: dev,edge\n"
    );
    insta::assert_snapshot!(
        "test_all_matches",
        String::from_utf8(output.stdout).unwrap()
    );

    let output = fleet(&[
        "test",
        "testdata/bundles/customizations-first-match",
        "-l",
        "env=dev",
        "-L",
        "tier=edge",
    ]);
    assert_eq!(String::from_utf8_lossy(&output.stderr), "# Matched: dev\n");
}

#[test]
fn test_groups_names_and_targets() {
    // Not in the default group: nothing matches.
    let err = failure_of(&["test", "testdata/bundles/simple", "-g", "other"]);
    assert_eq!(err, "error: no target of the bundle matches the cluster\n");
    let output = fleet(&[
        "test",
        "testdata/bundles/simple",
        "-N",
        "local",
        "-t",
        "default",
    ]);
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "# Matched: default\n"
    );
}

#[test]
fn test_renders_helm_charts_per_customization() {
    for (env, matched, snapshot) in [
        ("dev", "dev", "test_helm_local_chart_dev"),
        ("prod", "prod", "test_helm_local_chart_prod"),
    ] {
        let output = fleet(&[
            "test",
            "testdata/bundles/helm-local-chart",
            "-l",
            &format!("env={env}"),
        ]);
        assert!(output.status.success());
        assert_eq!(
            String::from_utf8_lossy(&output.stderr),
            format!("# Matched: {matched}\n")
        );
        insta::assert_snapshot!(snapshot, String::from_utf8(output.stdout).unwrap());
    }
    insta::assert_snapshot!(
        "test_raw_templates",
        stdout_of(&["test", "testdata/bundles/raw-templates"])
    );
    insta::assert_snapshot!(
        "test_helm_values_files",
        stdout_of(&["test", "testdata/bundles/helm-values-files"])
    );
}

#[test]
fn test_renders_kustomize_overlays_and_helm_post_rendering() {
    insta::assert_snapshot!(
        "test_kustomize_overlays_default",
        stdout_of(&["test", "testdata/bundles/kustomize-overlays"])
    );
    insta::assert_snapshot!(
        "test_kustomize_overlays_prod",
        stdout_of(&[
            "test",
            "testdata/bundles/kustomize-overlays",
            "-l",
            "env=prod"
        ])
    );
    insta::assert_snapshot!(
        "test_helm_kustomize_default",
        stdout_of(&["test", "testdata/bundles/helm-kustomize"])
    );
    insta::assert_snapshot!(
        "test_helm_kustomize_prod",
        stdout_of(&["test", "testdata/bundles/helm-kustomize", "-l", "env=prod"])
    );
    insta::assert_snapshot!(
        "test_kustomize",
        stdout_of(&["test", "testdata/bundles/kustomize"])
    );
}

#[test]
fn test_warns_about_a_kustomize_patch_that_matches_nothing() {
    let output = fleet(&["test", "testdata/bundles/kustomize-unmatched-patch"]);
    assert!(output.status.success(), "kubectl kustomize builds it too");
    let stderr = String::from_utf8(output.stderr).unwrap();
    let warning = stderr
        .lines()
        .find(|line| line.starts_with("# Warning: "))
        .unwrap_or_else(|| panic!("no warning in {stderr}"));
    assert!(warning.contains("kustomization.yaml"), "{warning}");
    assert!(warning.contains("not-in-this-bundle"), "{warning}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("name: settings"), "{stdout}");
}

#[test]
fn test_render_errors_name_the_file() {
    let err = failure_of(&["test", "testdata/bundles/error-helm-template"]);
    assert_eq!(
        err,
        "# Matched: default\nerror: helm chart \".\": execution error at (broken/templates/cm.yaml:6:11): \
         set .Values.host in fleet.yaml helm.values\n"
    );
    let err = failure_of(&["test", "--offline", "testdata/bundles/error-remote-chart"]);
    assert!(
        err.contains(
            "helm chart \"web\" from \"https://charts.example.com\" version \"1.2.3\": the chart is not in \
             the bundle and this reader has no network access"
        ),
        "{err}"
    );
    let err = failure_of(&["test", "testdata/bundles/error-malformed-manifest"]);
    assert_eq!(
        err,
        "# Matched: default\nerror: cm.yaml:10:22: unclosed bracket '['\n"
    );
}

#[test]
fn test_quiet_prints_only_the_match() {
    let output = fleet(&["test", "-q", "testdata/bundles/overlays", "-l", "env=prod"]);
    assert!(output.status.success());
    assert_eq!(String::from_utf8_lossy(&output.stderr), "# Matched: prod\n");
    assert!(output.stdout.is_empty(), "-q renders nothing");
    // A render error is not reached either: -q only matches.
    let output = fleet(&["test", "-q", "testdata/bundles/error-helm-template"]);
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "# Matched: default\n"
    );
}

#[test]
fn test_reads_another_options_file_with_f() {
    let dir = "testdata/bundles/test-options-file";
    let plain = stdout_of(&["test", dir, "-l", "size=big"]);
    assert!(plain.contains("namespace: from-fleet-yaml"), "{plain}");
    assert!(plain.contains("size: small"), "{plain}");
    let output = fleet(&["test", dir, "-f", "fleet-prod.yaml", "-l", "size=big"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stderr), "# Matched: big\n");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("namespace: from-prod-options"), "{stdout}");
    assert!(stdout.contains("size: big"), "{stdout}");
    let err = failure_of(&["test", dir, "-f", "nope.yaml"]);
    assert!(err.contains("nope.yaml"), "{err}");
}

#[test]
fn test_reads_a_bundle_resource_with_b() {
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("bundle.yaml");
    std::fs::write(
        &file,
        stdout_of(&["apply", "-o", "-", "test", "testdata/bundles/overlays"]),
    )
    .unwrap();
    let from_dir = fleet(&["test", "testdata/bundles/overlays", "-l", "env=prod"]);
    let from_file = fleet(&["test", "-b", file.to_str().unwrap(), "-l", "env=prod"]);
    assert!(
        from_file.status.success(),
        "{}",
        String::from_utf8_lossy(&from_file.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&from_file.stderr),
        "# Matched: prod\n"
    );
    assert_eq!(from_file.stdout, from_dir.stdout);
    let two = temp.path().join("two.yaml");
    std::fs::write(
        &two,
        stdout_of(&["apply", "-o", "-", "test", "testdata/bundles/nested"]),
    )
    .unwrap();
    let err = failure_of(&["test", "-b", two.to_str().unwrap()]);
    assert!(err.contains("fleet test takes one"), "{err}");
}

#[test]
fn test_renders_charts_packaged_and_with_file_dependencies_in_the_repository() {
    let output = stdout_of(&["test", "testdata/local-charts/packaged", "-l", "env=prod"]);
    assert!(output.contains("kind: Service"), "{output}");
    assert!(output.contains("port: 443"), "{output}");
    let output = stdout_of(&["test", "testdata/local-charts/app"]);
    for name in ["name: rel-extra", "name: rel-greeting", "name: rel-app"] {
        assert!(output.contains(name), "{name} in {output}");
    }
    let err = failure_of(&["test", "testdata/bundles/error-missing-chart"]);
    assert_eq!(
        err,
        "error: testdata/bundles/error-missing-chart/fleet.yaml: helm.chart: chart \"./chart-0.2.0.tgz\": \
         testdata/bundles/error-missing-chart/chart-0.2.0.tgz not found\n"
    );
}
