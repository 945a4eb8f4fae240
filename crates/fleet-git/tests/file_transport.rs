//! resolve / fetch / tree over `file://` and plain paths against repositories made with `git`: branches,
//! tags, annotated tags, SHAs, new commits, force-pushes, deleted branches, symlinks, and error messages.

mod support;

use fleet_bundle::tree::{EntryKind, FileTree, LocalTree, TreePath};
use fleet_git::{GitCache, GitError, GitSource};
use support::{Remote, fetch, new_cache, snapshot};

fn source(url: String, branch: Option<&str>, revision: Option<&str>) -> GitSource {
    let mut source = GitSource::new(url);
    source.branch = branch.map(str::to_string);
    source.revision = revision.map(str::to_string);
    source
}

fn sample_remote() -> Remote {
    let remote = Remote::new("app");
    remote
        .write("fleet.yaml", "defaultNamespace: app\n")
        .write("manifests/deploy.yaml", "kind: Deployment\n")
        .write("manifests/svc.yaml", "kind: Service\n")
        .write_bytes("bin/run.sh", b"#!/bin/sh\necho hi\n")
        .symlink("manifests/link.yaml", "deploy.yaml");
    std::fs::set_permissions(
        remote.work().join("bin/run.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    remote.commit("first");
    remote
}

#[test]
fn resolve_fetch_and_read_a_branch() {
    let remote = sample_remote();
    let (_cache_dir, cache) = new_cache();
    let source = source(remote.url(), Some("main"), None);

    let commit = cache.resolve(&source).unwrap();
    assert_eq!(commit, remote.head());
    assert!(
        matches!(
            cache.tree(&source, &commit),
            Err(GitError::NotFetched { .. })
        ),
        "resolve fetches nothing"
    );

    let stats = cache.fetch(&source, &commit).unwrap();
    assert!(!stats.already_present);
    assert!(stats.bytes > 0 && stats.objects > 0, "{stats:?}");
    let again = cache.fetch(&source, &commit).unwrap();
    assert!(again.already_present);
    assert_eq!(again.bytes, 0);

    let tree = cache.tree(&source, &commit).unwrap();
    assert_eq!(tree.commit(), commit);
    // The tree read from the object database equals the checked-out work tree, symlinks included.
    assert_eq!(snapshot(&tree), snapshot(&LocalTree::new(remote.work())));
    let link = tree
        .entry(&TreePath::new("manifests/link.yaml").unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(
        link.kind,
        EntryKind::Symlink {
            target: "deploy.yaml".into()
        }
    );
    let script = tree
        .entry(&TreePath::new("bin/run.sh").unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(script.mode, 0o755);
    let names: Vec<String> = tree
        .list_dir(&TreePath::root())
        .unwrap()
        .into_iter()
        .map(|entry| entry.name)
        .collect();
    assert_eq!(names, ["bin", "fleet.yaml", "manifests"]);
    assert!(matches!(
        tree.read_file(&TreePath::new("manifests").unwrap()),
        Err(fleet_bundle::tree::TreeError::IsADirectory { .. })
    ));
    assert!(matches!(
        tree.list_dir(&TreePath::new("missing").unwrap()),
        Err(fleet_bundle::tree::TreeError::NotFound { .. })
    ));
}

#[test]
fn the_bundle_reader_resolves_symlinks_in_a_git_tree() {
    let remote = sample_remote();
    let (_cache_dir, cache) = new_cache();
    let source = source(remote.url(), Some("main"), None);
    let commit = fetch(&cache, &source);
    let tree = cache.tree(&source, &commit).unwrap();
    let (path, _) = fleet_bundle::tree::resolve(
        &tree,
        &TreePath::root(),
        &TreePath::new("manifests/link.yaml").unwrap(),
    )
    .unwrap();
    assert_eq!(tree.read_file(&path).unwrap(), b"kind: Deployment\n");
}

#[test]
fn plain_local_paths_work() {
    let remote = sample_remote();
    let (_cache_dir, cache) = new_cache();
    let source = source(remote.bare().display().to_string(), Some("main"), None);
    let commit = fetch(&cache, &source);
    assert_eq!(commit, remote.head());
    assert_eq!(
        cache.tree(&source, &commit).unwrap().file_paths().count(),
        4
    );
}

#[test]
fn a_new_commit_gives_a_new_sha_and_fetches_only_new_objects() {
    let remote = Remote::new("grow");
    // A large file that does not change: the second fetch must not carry it again.
    let big: String = (0..20_000)
        .map(|i| format!("line {i} of a large unchanging file\n"))
        .collect();
    remote
        .write("big.txt", &big)
        .write("app.yaml", "replicas: 1\n");
    let first = remote.commit("first");
    let (_cache_dir, cache) = new_cache();
    let source = source(remote.url(), Some("main"), None);
    assert_eq!(cache.resolve(&source).unwrap(), first);
    let first_stats = cache.fetch(&source, &first).unwrap();

    remote.write("app.yaml", "replicas: 2\n");
    let second = remote.commit("second");
    assert_ne!(second, first);
    assert_eq!(cache.resolve(&source).unwrap(), second);
    let second_stats = cache.fetch(&source, &second).unwrap();
    assert_eq!(
        second_stats.objects, 3,
        "only the new commit, its root tree and the changed blob: {second_stats:?}"
    );
    assert!(
        second_stats.bytes * 10 < first_stats.bytes,
        "the unchanged large file is not fetched again: {first_stats:?} then {second_stats:?}"
    );
    let tree = cache.tree(&source, &second).unwrap();
    assert_eq!(
        tree.read_file(&TreePath::new("app.yaml").unwrap()).unwrap(),
        b"replicas: 2\n"
    );
    // The old commit stays readable.
    let old = cache.tree(&source, &first).unwrap();
    assert_eq!(
        old.read_file(&TreePath::new("app.yaml").unwrap()).unwrap(),
        b"replicas: 1\n"
    );
}

#[test]
fn a_force_push_is_followed() {
    let remote = Remote::new("forced");
    remote.write("a.yaml", "a: 1\n");
    remote.commit("base");
    remote.write("a.yaml", "a: 2\n");
    let abandoned = remote.commit("to be rewritten");
    let (_cache_dir, cache) = new_cache();
    let source = source(remote.url(), Some("main"), None);
    assert_eq!(cache.resolve(&source).unwrap(), abandoned);
    cache.fetch(&source, &abandoned).unwrap();

    remote.git(&["reset", "-q", "--hard", "HEAD~1"]);
    remote.write("a.yaml", "a: 3\n");
    let rewritten = remote.commit("rewritten history");
    let resolved = fetch(&cache, &source);
    assert_eq!(resolved, rewritten);
    let tree = cache.tree(&source, &resolved).unwrap();
    assert_eq!(
        tree.read_file(&TreePath::new("a.yaml").unwrap()).unwrap(),
        b"a: 3\n"
    );
}

#[test]
fn a_deleted_branch_is_ref_not_found() {
    let remote = sample_remote();
    remote.git(&["push", "-q", "origin", "main:feature"]);
    let (_cache_dir, cache) = new_cache();
    let feature = source(remote.url(), Some("feature"), None);
    assert_eq!(cache.resolve(&feature).unwrap(), remote.head());

    remote.git(&["push", "-q", "origin", "--delete", "feature"]);
    let err = cache.resolve(&feature).unwrap_err();
    assert_eq!(
        err,
        GitError::RefNotFound {
            url: remote.url(),
            reference: "branch \"feature\"".into()
        }
    );
    assert!(
        err.to_string()
            .contains("check the GitRepo's branch or revision"),
        "{err}"
    );
    // No branch and no revision means Fleet's default branch, which this repository does not have.
    let err = cache
        .resolve(&source(remote.url(), None, None))
        .unwrap_err();
    assert!(err.to_string().contains("branch \"master\""), "{err}");
}

#[test]
fn tags_annotated_tags_and_shas() {
    let remote = sample_remote();
    let tagged = remote.head();
    remote.git(&["tag", "v1.0.0"]);
    remote.git(&["tag", "-a", "v1.1.0", "-m", "annotated release"]);
    remote.write("later.yaml", "x: 1\n");
    let later = remote.commit("after the tags");
    remote.git(&["push", "-q", "origin", "--tags"]);
    let (_cache_dir, cache) = new_cache();

    let light = source(remote.url(), Some("main"), Some("v1.0.0"));
    assert_eq!(
        cache.resolve(&light).unwrap(),
        tagged,
        "the revision wins over the branch"
    );
    let annotated = source(remote.url(), None, Some("v1.1.0"));
    let resolved = fetch(&cache, &annotated);
    assert_eq!(resolved, tagged, "an annotated tag is peeled to its commit");
    assert!(
        cache
            .tree(&annotated, &resolved)
            .unwrap()
            .file_paths()
            .all(|p| p != "later.yaml")
    );

    let by_sha = source(remote.url(), None, Some(&later));
    assert_eq!(cache.resolve(&by_sha).unwrap(), later);
    cache.fetch(&by_sha, &later).unwrap();
    assert!(
        cache
            .tree(&by_sha, &later)
            .unwrap()
            .file_paths()
            .any(|p| p == "later.yaml")
    );

    let missing = source(remote.url(), None, Some("v9"));
    assert!(matches!(
        cache.resolve(&missing),
        Err(GitError::RefNotFound { .. })
    ));
}

#[test]
fn fetching_an_unknown_commit_is_ref_not_found() {
    let remote = sample_remote();
    let (_cache_dir, cache) = new_cache();
    let source = source(remote.url(), Some("main"), None);
    let err = cache
        .fetch(&source, "1111111111111111111111111111111111111111")
        .unwrap_err();
    assert!(matches!(err, GitError::RefNotFound { .. }), "{err:?}");
    let err = cache.fetch(&source, "abc123").unwrap_err();
    assert!(err.to_string().contains("full 40-digit SHA"), "{err}");
}

#[test]
fn a_missing_repository_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let cache = GitCache::new(dir.path().join("cache"));
    let url = format!("file://{}/does-not-exist.git", dir.path().display());
    let err = cache.resolve(&source(url, Some("main"), None)).unwrap_err();
    assert!(
        matches!(
            err,
            GitError::RepositoryNotFound { .. } | GitError::Unreachable { .. }
        ),
        "{err:?}"
    );
}

#[test]
fn concurrent_fetches_of_one_repository_are_serialized() {
    let remote = sample_remote();
    let (_cache_dir, cache) = new_cache();
    let source = source(remote.url(), Some("main"), None);
    let expected = snapshot(&LocalTree::new(remote.work()));
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    let commit = fetch(&cache, &source);
                    snapshot(&cache.tree(&source, &commit).unwrap())
                })
            })
            .collect();
        for worker in workers {
            assert_eq!(worker.join().unwrap(), expected);
        }
    });
}

#[test]
fn an_unreadable_cache_is_recreated() {
    let remote = sample_remote();
    let (_cache_dir, cache) = new_cache();
    let source = source(remote.url(), Some("main"), None);
    let commit = fetch(&cache, &source);

    let repo_dir = cache.repo_dir(&source.url);
    std::fs::remove_dir_all(repo_dir.join("objects")).unwrap();
    std::fs::write(repo_dir.join("config"), "[core\nthis is not git config").unwrap();
    let stats = cache.fetch(&source, &commit).unwrap();
    assert!(
        !stats.already_present,
        "the cache was rebuilt and the commit fetched again"
    );
    assert_eq!(
        snapshot(&cache.tree(&source, &commit).unwrap()),
        snapshot(&LocalTree::new(remote.work()))
    );
}
