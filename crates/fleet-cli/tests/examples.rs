//! Every example under `examples/gitrepos/` run exactly as the README tells a user to run it — the built `fleet`
//! binary as its own process, `fleet dev --repo examples/gitrepos/<example> --exit-when-ready`, from the
//! repository root — must exit 0 with every GitRepo of its `gitrepo.yaml` Ready on at least one cluster. And a
//! plain git repository without targets (`fleet dev --repo .`) is deployed to every dev-mode cluster.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `fleet dev --repo <repo> --exit-when-ready` in `cwd`, with its data dir in a temp dir.
fn dev(cwd: &Path, repo: &str, data_dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fleet"))
        .current_dir(cwd)
        .args(["dev", "--repo", repo, "--exit-when-ready"])
        .arg("--data-dir")
        .arg(data_dir)
        .output()
        .expect("run fleet dev")
}

/// `(namespace, name)` of each GitRepo document of an example's `gitrepo.yaml`.
fn gitrepos(example: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(example.join("gitrepo.yaml")).unwrap();
    let documents = fleet_yaml::parse::documents(&text, "gitrepo.yaml").unwrap();
    documents
        .iter()
        .filter(|d| d["kind"] == "GitRepo")
        .map(|d| {
            let namespace = d["metadata"]["namespace"]
                .as_str()
                .unwrap_or("fleet-default");
            let name = d["metadata"]["name"].as_str().unwrap();
            (namespace.to_string(), name.to_string())
        })
        .collect()
}

/// The last state line dev mode printed for `gitrepo <namespace>/<name>`.
fn last_line<'a>(stdout: &'a str, id: &str) -> Option<&'a str> {
    stdout
        .lines()
        .rfind(|l| l.starts_with(&format!("gitrepo {id}: ")))
}

/// Whether a line says `N/N clusters ready` with N at least 1, and Ready.
fn ready_on_some_cluster(line: &str) -> bool {
    let Some((_, rest)) = line.split_once(": ") else {
        return false;
    };
    let Some((counts, _)) = rest.split_once(" clusters ready") else {
        return false;
    };
    let Some((ready, desired)) = counts.split_once('/') else {
        return false;
    };
    ready == desired && desired.parse::<u32>().is_ok_and(|n| n >= 1) && line.ends_with("Ready")
}

#[test]
fn every_example_is_deployed_to_ready_as_the_readme_runs_it() {
    let root = root();
    let mut examples: Vec<PathBuf> = std::fs::read_dir(root.join("examples/gitrepos"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("gitrepo.yaml").is_file())
        .collect();
    examples.sort();
    assert!(examples.len() >= 8, "{examples:?}");
    let mut failures = Vec::new();
    for example in &examples {
        let name = example.file_name().unwrap().to_str().unwrap();
        let temp = tempfile::tempdir().unwrap();
        let output = dev(
            &root,
            &format!("examples/gitrepos/{name}"),
            &temp.path().join("state"),
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            failures.push(format!(
                "{name}: exit {}\n{stdout}\n{stderr}",
                output.status
            ));
            continue;
        }
        for (namespace, repo) in gitrepos(example) {
            let id = format!("{namespace}/{repo}");
            match last_line(&stdout, &id) {
                Some(line) if ready_on_some_cluster(line) => {}
                other => failures.push(format!("{name}: gitrepo {id}: {other:?}\n{stdout}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=test", "-c", "user.email=test@example.com"])
        .args(args)
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

#[test]
fn a_plain_git_repository_is_deployed_to_every_dev_cluster() {
    let temp = tempfile::tempdir().unwrap();
    let repo = temp.path().join("my-app");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(
        repo.join("configmap.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\n  namespace: default\ndata:\n  a: b\n",
    )
    .unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    let output = dev(&repo, ".", &temp.path().join("state"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = last_line(&stdout, "fleet-default/my-app").unwrap_or_default();
    assert!(
        line.starts_with("gitrepo fleet-default/my-app: 3/3 clusters ready")
            && line.ends_with("Ready"),
        "{stdout}"
    );
}
