//! Pushing commits: over smart HTTPS (basic auth, a private CA) to the real `git http-backend`, and to a local
//! bare repository, checked with the real `git` (log, show, fsck). A branch that moved after the fetch is
//! refused as a non-fast-forward and the retry after a new fetch succeeds; a server-side refusal (a
//! pre-receive hook) is reported; identical content commits nothing; wrong credentials are named.

mod support;

use std::collections::BTreeMap;

use fleet_git::{Change, GitAuth, GitCache, GitError, GitSource, PushOutcome};
use fleet_testing::run_git;
use support::http::GitHttpServer;
use support::{Remote, fetch, new_cache};

const PASSWORD: &str = "push-token-7f3a";

fn remote() -> Remote {
    let remote = Remote::new("app");
    remote
        .write("deploy/app.yaml", "image: registry/app:1.0.0\n")
        .write("README.md", "app\n");
    remote.commit("first");
    // Pushing through http-backend is refused unless enabled (it also is when the server sets REMOTE_USER).
    run_git(&remote.bare(), &["config", "http.receivepack", "true"]);
    remote
}

fn change(files: &[(&str, &str)]) -> Change {
    Change {
        files: files
            .iter()
            .map(|(path, content)| (path.to_string(), content.as_bytes().to_vec()))
            .collect::<BTreeMap<_, _>>(),
        author_name: "Fleet Bot".into(),
        author_email: "bot@fleet.example".into(),
        message: "update image".into(),
    }
}

/// The change every successful push here makes: a new image in `deploy/app.yaml` and a new nested file
/// (what [`assert_pushed`] checks).
fn update() -> Change {
    change(&[
        ("deploy/app.yaml", "image: registry/app:2.0.0\n"),
        ("new/dir/file.yaml", "a: b\n"),
    ])
}

/// The `main` branch of `url`, without credentials.
fn main_branch(url: String) -> GitSource {
    let mut source = GitSource::new(url);
    source.branch = Some("main".into());
    source
}

fn https_source(server: &GitHttpServer, password: &str) -> GitSource {
    let mut source = main_branch(server.url("app"));
    source.auth = GitAuth::Basic {
        username: "fleet".into(),
        password: password.into(),
    };
    source.ca_bundle = server.certificate_pem.clone().map(String::into_bytes);
    source
}

/// Pushes `change` on `base`, which must make a new commit; that commit.
fn pushed(cache: &GitCache, source: &GitSource, base: &str, change: &Change) -> String {
    match cache.push(source, base, change).unwrap() {
        PushOutcome::Pushed { commit } => commit,
        outcome => panic!("not pushed: {outcome:?}"),
    }
}

fn bare_git(remote: &Remote, args: &[&str]) -> String {
    run_git(&remote.bare(), args).trim().to_string()
}

/// The pushed commit as the real git sees it on the bare repository: parent, author, message, files.
fn assert_pushed(remote: &Remote, commit: &str, base: &str) {
    assert_eq!(bare_git(remote, &["rev-parse", "main"]), commit);
    assert_eq!(bare_git(remote, &["rev-parse", "main^"]), base);
    assert_eq!(
        bare_git(remote, &["log", "-1", "--format=%an <%ae>|%cn|%s", "main"]),
        "Fleet Bot <bot@fleet.example>|Fleet Bot|update image"
    );
    assert_eq!(
        bare_git(remote, &["show", "main:deploy/app.yaml"]),
        "image: registry/app:2.0.0"
    );
    assert_eq!(
        bare_git(remote, &["show", "main:new/dir/file.yaml"]),
        "a: b"
    );
    assert_eq!(bare_git(remote, &["show", "main:README.md"]), "app");
    run_git(&remote.bare(), &["fsck", "--strict", "--no-dangling"]);
}

#[test]
fn push_over_https_is_seen_by_git() {
    let remote = remote();
    let server = GitHttpServer::start_tls(remote.root().to_path_buf(), Some(("fleet", PASSWORD)));
    let (_cache_dir, cache) = new_cache();
    let source = https_source(&server, PASSWORD);
    let base = fetch(&cache, &source);
    let commit = pushed(&cache, &source, &base, &update());
    assert_pushed(&remote, &commit, &base);
    // The cache can read its own commit without fetching it again.
    assert!(cache.fetch(&source, &commit).unwrap().already_present);

    // The same content again commits nothing.
    let again = cache
        .push(
            &source,
            &commit,
            &change(&[("deploy/app.yaml", "image: registry/app:2.0.0\n")]),
        )
        .unwrap();
    assert_eq!(again, PushOutcome::Unchanged);
    assert_eq!(bare_git(&remote, &["rev-parse", "main"]), commit);
}

#[test]
fn a_branch_that_moved_is_a_rejected_non_fast_forward_and_the_retry_succeeds() {
    let remote = remote();
    let server = GitHttpServer::start(remote.root().to_path_buf(), None);
    let (_cache_dir, cache) = new_cache();
    let source = main_branch(server.url("app"));
    let base = fetch(&cache, &source);

    // Someone else pushes meanwhile.
    remote.write("other.yaml", "x: 1\n");
    let theirs = remote.commit("theirs");
    let update = update();
    let err = cache.push(&source, &base, &update).unwrap_err();
    let GitError::PushRejected {
        reason, reference, ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(reference, "refs/heads/main");
    assert!(reason.contains("non-fast-forward"), "{err}");
    assert_eq!(bare_git(&remote, &["rev-parse", "main"]), theirs);

    // Fetched again, the change goes on top of their commit.
    let base = fetch(&cache, &source);
    assert_eq!(base, theirs);
    let commit = pushed(&cache, &source, &base, &update);
    assert_pushed(&remote, &commit, &theirs);
    assert_eq!(bare_git(&remote, &["show", "main:other.yaml"]), "x: 1");
}

#[test]
fn a_refusal_of_the_server_is_reported() {
    let remote = remote();
    let hook = remote.bare().join("hooks/pre-receive");
    std::fs::write(&hook, "#!/bin/sh\necho 'no pushes today' >&2\nexit 1\n").unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let server = GitHttpServer::start(remote.root().to_path_buf(), None);
    let (_cache_dir, cache) = new_cache();
    let source = main_branch(server.url("app"));
    let base = fetch(&cache, &source);
    let err = cache
        .push(
            &source,
            &base,
            &change(&[("deploy/app.yaml", "image: x\n")]),
        )
        .unwrap_err();
    assert!(
        matches!(&err, GitError::PushRejected { reason, .. } if reason.contains("pre-receive hook declined")),
        "{err:?}"
    );
    assert_eq!(bare_git(&remote, &["rev-parse", "main"]), base);
}

#[test]
fn wrong_credentials_are_named_and_never_echoed() {
    let remote = remote();
    let server = GitHttpServer::start_tls(remote.root().to_path_buf(), Some(("fleet", PASSWORD)));
    let (_cache_dir, cache) = new_cache();
    let base = fetch(&cache, &https_source(&server, PASSWORD));
    let wrong = https_source(&server, "wrong-password-123");
    let err = cache
        .push(&wrong, &base, &change(&[("deploy/app.yaml", "image: x\n")]))
        .unwrap_err();
    assert!(
        matches!(err, GitError::AuthenticationFailed { .. }),
        "{err:?}"
    );
    assert!(!format!("{err} {err:?}").contains("wrong-password-123"));
}

#[test]
fn push_to_a_local_repository() {
    let remote = remote();
    let (_cache_dir, cache) = new_cache();
    let source = main_branch(remote.url());
    let base = fetch(&cache, &source);
    let update = update();
    let commit = pushed(&cache, &source, &base, &update);
    assert_pushed(&remote, &commit, &base);

    // A stale base is refused here too.
    let err = cache
        .push(&source, &base, &change(&[("README.md", "changed\n")]))
        .unwrap_err();
    assert!(
        matches!(&err, GitError::PushRejected { reason, .. } if reason.contains("non-fast-forward")),
        "{err:?}"
    );
    assert_eq!(bare_git(&remote, &["rev-parse", "main"]), commit);
}
