//! Local repositories need no `git` binary: the fixtures are made with git, then this test binary runs itself
//! again with an empty `PATH` (and no other environment) to resolve, fetch and read `file://` URLs, plain paths
//! and a non-bare work tree, before and after a force-push and a branch deletion, and to check the errors of a
//! deleted branch, an unknown revision, an unknown commit and a missing repository, and to push a commit.

mod support;

use std::collections::BTreeMap;
use std::process::Command;

use fleet_bundle::tree::{FileTree, LocalTree, TreePath};
use fleet_git::{GitCache, GitError, GitSource};
use support::{Remote, snapshot};

/// Set in the child process: which phase to run; the other `FLEET_NOGIT_*` variables carry the fixture.
const PHASE: &str = "FLEET_NOGIT_PHASE";

#[test]
fn local_repositories_are_read_without_git_on_path() {
    if let Ok(phase) = std::env::var(PHASE) {
        return child(&phase);
    }
    let remote = Remote::new("app");
    remote
        .write("fleet.yaml", "defaultNamespace: app\n")
        .write("manifests/cm.yaml", "kind: ConfigMap\n")
        .symlink("manifests/link.yaml", "cm.yaml");
    let first = remote.commit("first");
    remote.git(&["tag", "-a", "v1", "-m", "annotated release"]);
    remote.git(&["push", "-q", "origin", "--tags"]);
    remote.git(&["push", "-q", "origin", "main:feature"]);
    let cache = tempfile::tempdir().unwrap();
    let expected = snapshot(&LocalTree::new(remote.work()));
    let mut vars = BTreeMap::from([
        ("FLEET_NOGIT_URL", remote.url()),
        ("FLEET_NOGIT_PATH", remote.bare().display().to_string()),
        (
            "FLEET_NOGIT_WORK",
            format!("file://{}", remote.work().display()),
        ),
        ("FLEET_NOGIT_CACHE", cache.path().display().to_string()),
        ("FLEET_NOGIT_FIRST", first.clone()),
        (
            "FLEET_NOGIT_FILES",
            serde_json::to_string(&text(&expected)).unwrap(),
        ),
    ]);
    run_child("before", &vars);

    // History rewritten, the feature branch and the tag deleted and the old commit pruned, with git, between
    // the two git-less runs.
    remote.write("manifests/cm.yaml", "kind: ConfigMap\ndata: {a: b}\n");
    remote.git(&["add", "-A"]);
    remote.git(&["commit", "-q", "--amend", "-m", "rewritten"]);
    let rewritten = remote.head();
    remote.git(&["push", "-q", "-f", "origin", "main"]);
    remote.git(&["push", "-q", "origin", "--delete", "feature", "v1"]);
    remote.git(&[
        "-C",
        remote.bare().to_str().unwrap(),
        "gc",
        "-q",
        "--prune=now",
    ]);
    vars.insert("FLEET_NOGIT_REWRITTEN", rewritten.clone());
    run_child("after", &vars);

    // The git-less run pushed a commit on top of the rewritten one; the real git sees it.
    let bare = remote.bare();
    let log = fleet_testing::run_git(&bare, &["log", "-2", "--format=%P %s", "main"]);
    let pushed: Vec<&str> = log.lines().collect();
    assert_eq!(pushed[0], format!("{rewritten} pushed without git"));
    assert_eq!(
        fleet_testing::run_git(&bare, &["show", "main:manifests/pushed.yaml"]),
        "pushed: true\n"
    );
    fleet_testing::run_git(&bare, &["fsck", "--strict", "--no-dangling"]);
}

/// Runs this test again in a process whose `PATH` is an empty directory and whose environment holds only `vars`.
fn run_child(phase: &str, vars: &BTreeMap<&str, String>) {
    let empty = tempfile::tempdir().unwrap();
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "local_repositories_are_read_without_git_on_path",
            "--nocapture",
            "--test-threads=1",
        ])
        .env_clear()
        .env("PATH", empty.path())
        .env(PHASE, phase)
        .envs(vars.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap();
    let report = format!(
        "phase {phase}:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{report}");
    assert!(
        report.contains("1 passed"),
        "the child ran the test: {report}"
    );
}

fn child(phase: &str) {
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is set"));
    assert!(
        Command::new("git").arg("--version").output().is_err(),
        "git must not be runnable here"
    );
    let cache = GitCache::new(var("FLEET_NOGIT_CACHE"));
    let url = var("FLEET_NOGIT_URL");
    let first = var("FLEET_NOGIT_FIRST");
    let expected: BTreeMap<String, String> =
        serde_json::from_str(&var("FLEET_NOGIT_FILES")).unwrap();
    let cm = TreePath::new("manifests/cm.yaml").unwrap();
    match phase {
        "before" => {
            // A file:// URL of a bare repository: branch, annotated tag and SHA.
            let main = source(&url, Some("main"), None);
            assert_eq!(cache.resolve(&main).unwrap(), first);
            let stats = cache.fetch(&main, &first).unwrap();
            assert!(!stats.already_present && stats.objects > 0 && stats.bytes > 0);
            assert!(cache.fetch(&main, &first).unwrap().already_present);
            assert_eq!(
                text(&snapshot(&cache.tree(&main, &first).unwrap())),
                expected
            );
            let tag = source(&url, None, Some("v1"));
            assert_eq!(cache.resolve(&tag).unwrap(), first, "the tag is peeled");
            let by_sha = source(&url, Some("feature"), Some(&first));
            assert_eq!(cache.resolve(&by_sha).unwrap(), first);
            let feature = source(&url, Some("feature"), None);
            assert_eq!(cache.resolve(&feature).unwrap(), first);
            // A plain path, and a non-bare work tree.
            for other in [var("FLEET_NOGIT_PATH"), var("FLEET_NOGIT_WORK")] {
                let other = source(&other, Some("main"), None);
                assert_eq!(cache.resolve(&other).unwrap(), first);
                cache.fetch(&other, &first).unwrap();
                assert_eq!(
                    text(&snapshot(&cache.tree(&other, &first).unwrap())),
                    expected
                );
            }
        }
        "after" => {
            let main = source(&url, Some("main"), None);
            let rewritten = var("FLEET_NOGIT_REWRITTEN");
            assert_eq!(
                cache.resolve(&main).unwrap(),
                rewritten,
                "the force-push is followed"
            );
            let stats = cache.fetch(&main, &rewritten).unwrap();
            assert!(!stats.already_present);
            let tree = cache.tree(&main, &rewritten).unwrap();
            assert_eq!(
                tree.read_file(&cm).unwrap(),
                b"kind: ConfigMap\ndata: {a: b}\n"
            );
            // A push to the local repository, in-process.
            let change = fleet_git::Change {
                files: BTreeMap::from([(
                    "manifests/pushed.yaml".to_string(),
                    b"pushed: true\n".to_vec(),
                )]),
                author_name: "Fleet".into(),
                author_email: "fleet@example.invalid".into(),
                message: "pushed without git".into(),
            };
            assert!(matches!(
                cache.push(&main, &rewritten, &change).unwrap(),
                fleet_git::PushOutcome::Pushed { .. }
            ));
            // The abandoned commit was pruned from the source but stays readable in the cache.
            assert_eq!(
                cache.tree(&main, &first).unwrap().read_file(&cm).unwrap(),
                b"kind: ConfigMap\n"
            );
            let err = cache
                .resolve(&source(&url, Some("feature"), None))
                .unwrap_err();
            assert_eq!(
                err,
                GitError::RefNotFound {
                    url: url.clone(),
                    reference: "branch \"feature\"".into()
                }
            );
            let err = cache.resolve(&source(&url, None, Some("v9"))).unwrap_err();
            assert!(matches!(err, GitError::RefNotFound { .. }), "{err:?}");
            // A fresh cache cannot get the abandoned commit any more: the source pruned it.
            let fresh = tempfile::tempdir().unwrap();
            let err = GitCache::new(fresh.path())
                .fetch(&main, &first)
                .unwrap_err();
            assert_eq!(
                err,
                GitError::RefNotFound {
                    url: url.clone(),
                    reference: format!("commit {first}")
                }
            );
            let missing = format!("file://{}", fresh.path().join("nothing.git").display());
            let err = cache
                .resolve(&source(&missing, Some("main"), None))
                .unwrap_err();
            assert!(
                matches!(err, GitError::RepositoryNotFound { .. }),
                "{err:?}"
            );
        }
        other => panic!("unknown phase {other}"),
    }
}

fn source(url: &str, branch: Option<&str>, revision: Option<&str>) -> GitSource {
    let mut source = GitSource::new(url);
    source.branch = branch.map(str::to_string);
    source.revision = revision.map(str::to_string);
    source
}

/// A snapshot as text, to carry it through an environment variable.
fn text(files: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(path, bytes)| (path.clone(), String::from_utf8_lossy(bytes).into_owned()))
        .collect()
}
