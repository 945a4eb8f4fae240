//! The real `fleet` binary's `fleet target` on `testdata/target/<case>`: each case holds a `clusters.yaml`, its
//! bundles under `bundles/` and sometimes a GitRepo `targets.yaml`. Output is snapshotted, must be byte-identical
//! between runs, and needs no kubeconfig or cluster.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn case_dir(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/target")
        .join(case)
}

fn fleet_in(case: &str, args: &[&str]) -> Output {
    let mut all = vec!["target"];
    all.extend_from_slice(args);
    fleet_command_in(case, &all)
}

fn fleet_command_in(case: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fleet"))
        .args(args)
        .current_dir(case_dir(case))
        .env_remove("KUBECONFIG")
        .env("HOME", "/nonexistent")
        .output()
        .expect("the fleet binary runs")
}

/// The arguments every case runs with: its clusters file, its targets file when it has one, its bundles.
fn case_args(case: &str) -> Vec<&'static str> {
    let mut args = vec!["-c", "clusters.yaml"];
    if case_dir(case).join("targets.yaml").exists() {
        args.extend(["--targets-file", "targets.yaml"]);
    }
    args.push("bundles");
    args
}

/// Runs `fleet target` for a case twice, checks both runs print the same bytes, and returns the output.
fn stdout_of(case: &str, extra: &[&str]) -> String {
    let mut args = case_args(case);
    args.extend_from_slice(extra);
    let run = || {
        let output = fleet_in(case, &args);
        assert!(
            output.status.success(),
            "fleet target {args:?} in {case} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let first = run();
    assert_eq!(
        first,
        run(),
        "{case}: output must be byte-identical between runs"
    );
    first
}

fn failure_of(case: &str, args: &[&str]) -> String {
    let output = fleet_in(case, args);
    assert!(
        !output.status.success(),
        "fleet target {args:?} should fail"
    );
    assert!(output.stdout.is_empty(), "no partial output on failure");
    String::from_utf8(output.stderr).unwrap()
}

#[test]
fn label_targets_and_cluster_groups() {
    let out = stdout_of("label-targets", &[]);
    // staging-1 matches a targetCustomization, but the GitRepo's targets restrict the bundle to prod and edge.
    assert!(out.contains("skip    fleet-default/staging-1: not matched by the GitRepo's targets"));
    insta::assert_snapshot!("label_targets", out);
}

#[test]
fn target_customizations_with_do_not_deploy() {
    let out = stdout_of("do-not-deploy", &[]);
    assert!(
        out.contains("skip    fleet-default/eu-2: doNotDeploy on targetCustomization \"frozen\"")
    );
    insta::assert_snapshot!("do_not_deploy", out);
}

#[test]
fn pick_n_of_3_across_7_clusters_in_3_regions() {
    let out = stdout_of("pick-n-spread", &[]);
    insta::assert_snapshot!("pick_n_spread", out);
    // One cluster per region.
    let selected: Vec<&str> = out
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("deploy  fleet-default/"))
        .map(|l| &l[..2])
        .collect();
    assert_eq!(selected, ["ap", "eu", "us"]);
}

#[test]
fn pick_fixed_with_a_missing_cluster() {
    let out = stdout_of("pick-fixed-missing", &[]);
    assert!(out.contains("Scheduled: False (SchedulingPolicyUnfulfilled)"));
    assert!(out.contains("specified cluster \"db-3\" is not found"));
    insta::assert_snapshot!("pick_fixed_missing", out);
}

#[test]
fn no_schedule_taint_with_and_without_toleration() {
    let out = stdout_of("taints", &[]);
    insta::assert_snapshot!("taints", out);
}

#[test]
fn namespace_mapping_reaches_another_namespace() {
    let out = stdout_of("namespace-mapping", &[]);
    let team_a = out.split("bundle test-bundles-team-a-app").nth(1).unwrap();
    assert!(team_a.contains("deploy  team-a/a-1"), "{team_a}");
    assert!(team_a.contains("skip    team-b/b-1"), "{team_a}");
    insta::assert_snapshot!("namespace_mapping", out);
}

#[test]
fn json_and_yaml_carry_the_same_report() {
    let json = stdout_of("pick-fixed-missing", &["-o", "json"]);
    insta::assert_snapshot!("pick_fixed_missing_json", json);
    let yaml = stdout_of("taints", &["-o", "yaml"]);
    insta::assert_snapshot!("taints_yaml", yaml);
    for case in ["label-targets", "pick-n-spread", "taints"] {
        let from_json: serde_json::Value =
            serde_json::from_str(&stdout_of(case, &["-o", "json"])).unwrap();
        let from_yaml: serde_json::Value =
            fleet_yaml::parse::from_str(&stdout_of(case, &["-o", "yaml"]), "out").unwrap();
        assert_eq!(from_json, from_yaml, "{case}");
    }
}

#[test]
fn now_flag_overrides_the_file() {
    // 300 seconds later the toleration of c-4's NoSelect taint has run out (timeAdded + 300 < now).
    let out = stdout_of("taints", &["--now", "1700000300"]);
    assert!(out.starts_with("# scheduled at time 1700000300\n"));
    let tolerant = out.split("bundle test-bundles-tolerant").nth(1).unwrap();
    assert!(
        tolerant.contains("skip    fleet-default/c-4"),
        "the tolerant bundle leaves c-4 once tolerationSeconds ran out:\n{tolerant}"
    );
}

#[test]
fn a_bad_clusters_file_names_file_line_and_field() {
    let errors: Vec<String> = ["clusters.yaml", "duplicate.yaml", "unknown-placement.yaml"]
        .iter()
        .map(|file| failure_of("bad-clusters-file", &["-c", file, "bundles"]))
        .collect();
    insta::assert_snapshot!("bad_clusters_file", errors.join(""));
    let missing = failure_of("bad-clusters-file", &["-c", "nope.yaml", "bundles"]);
    assert!(
        missing.contains("reading clusters file nope.yaml"),
        "{missing}"
    );
}

#[test]
fn help_documents_the_clusters_file() {
    let output = Command::new(env!("CARGO_BIN_EXE_fleet"))
        .args(["target", "--help"])
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    let help = String::from_utf8(output.stdout).unwrap();
    for key in [
        "clusters:",
        "groups:",
        "placements:",
        "taints:",
        "health:",
        "now:",
    ] {
        assert!(help.contains(key), "--help lacks {key}");
    }
    insta::assert_snapshot!("help", help);
}

#[test]
fn bundle_files_from_fleet_apply_give_the_same_report() {
    let dir = tempfile::tempdir().unwrap();
    let exported = dir.path().join("bundles.yaml");
    let exported = exported.to_str().unwrap();
    let apply = fleet_command_in(
        "label-targets",
        &[
            "apply",
            "-o",
            exported,
            "-n",
            "fleet-default",
            "--targets-file",
            "targets.yaml",
            "--commit",
            "abc",
            "test",
            "bundles",
        ],
    );
    assert!(
        apply.status.success(),
        "{}",
        String::from_utf8_lossy(&apply.stderr)
    );
    let from_file = fleet_in("label-targets", &["-c", "clusters.yaml", "-b", exported]);
    assert!(
        from_file.status.success(),
        "{}",
        String::from_utf8_lossy(&from_file.stderr)
    );
    assert_eq!(
        String::from_utf8(from_file.stdout).unwrap(),
        stdout_of("label-targets", &[])
    );
    // The same bundle from a file and a directory is one bundle too many.
    let twice = failure_of(
        "label-targets",
        &[
            "-c",
            "clusters.yaml",
            "--targets-file",
            "targets.yaml",
            "-b",
            exported,
            "bundles",
        ],
    );
    assert_eq!(twice, "error: bundle test-bundles-app is given twice\n");
}

#[test]
fn a_bundle_file_must_hold_bundles() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cm.yaml");
    std::fs::write(&file, "apiVersion: v1\nkind: Bundle\nmetadata: {name: a}\nspec: {}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n").unwrap();
    let file = file.to_str().unwrap();
    let err = failure_of("label-targets", &["-c", "clusters.yaml", "-b", file]);
    assert_eq!(
        err,
        format!("error: {file}:6:1: kind \"ConfigMap\" is not a Bundle\n")
    );
}
