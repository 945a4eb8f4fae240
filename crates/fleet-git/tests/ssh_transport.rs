//! The ssh transport end to end through gix and our wrapper script, with the stand-in `ssh` client of
//! [`fleet_testing::ssh`].

mod support;

use std::path::Path;

use fleet_bundle::tree::{FileTree, TreePath};
use fleet_git::{GitAuth, GitCache, GitError, GitSource};
use fleet_testing::ssh::{FAKE_SSH_KEY, fake_ssh};
use support::Remote;

const KEY: &str = FAKE_SSH_KEY;
const HOST: &str = "git.test";

fn ssh_source(remote: &Remote, key: &str, known_hosts: Option<&str>, insecure: bool) -> GitSource {
    let mut source = GitSource::new(format!("git@{HOST}:{}", remote.bare().display()));
    source.branch = Some("main".into());
    source.auth = GitAuth::Ssh {
        private_key: key.into(),
        known_hosts: known_hosts.map(str::to_string),
        insecure_skip_host_key_checks: insecure,
    };
    source
}

struct Setup {
    remote: Remote,
    tools: tempfile::TempDir,
    cache_dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Self {
        let remote = Remote::new("over-ssh");
        remote.write("fleet.yaml", "namespace: ssh\n");
        remote.commit("first");
        Self {
            remote,
            tools: tempfile::tempdir().unwrap(),
            cache_dir: tempfile::tempdir().unwrap(),
        }
    }

    fn cache(&self) -> GitCache {
        GitCache::new(self.cache_dir.path()).with_ssh_program(fake_ssh(self.tools.path()))
    }

    fn args(&self) -> Vec<String> {
        std::fs::read_to_string(self.tools.path().join("args.log"))
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

#[test]
fn key_and_known_hosts_fetch() {
    let setup = Setup::new();
    let cache = setup.cache();
    let known = format!("{HOST} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeHostKey\n");
    let source = ssh_source(&setup.remote, KEY, Some(&known), false);
    let commit = cache.resolve(&source).unwrap();
    assert_eq!(commit, setup.remote.head());
    cache.fetch(&source, &commit).unwrap();
    let tree = cache.tree(&source, &commit).unwrap();
    assert_eq!(
        tree.read_file(&TreePath::new("fleet.yaml").unwrap())
            .unwrap(),
        b"namespace: ssh\n"
    );

    let args = setup.args();
    assert!(
        args.windows(2)
            .any(|w| w == ["-o", "StrictHostKeyChecking=yes"]),
        "{args:?}"
    );
    assert!(
        args.windows(2)
            .any(|w| w[0] == "-i" && w[1].ends_with("/id")),
        "{args:?}"
    );
    assert!(args.iter().any(|a| a == &format!("git@{HOST}")), "{args:?}");
    assert!(
        args.iter().all(|a| !a.contains("FAKE-KEY")),
        "the key is passed as a file only"
    );
    let key_file = args.windows(2).find(|w| w[0] == "-i").unwrap()[1].clone();
    assert!(
        !Path::new(&key_file).exists(),
        "the key file is removed after use"
    );
}

#[test]
fn an_unknown_host_key_is_host_key_mismatch() {
    let setup = Setup::new();
    let source = ssh_source(
        &setup.remote,
        KEY,
        Some("other.example ssh-ed25519 AAAA\n"),
        false,
    );
    let err = setup.cache().resolve(&source).unwrap_err();
    assert_eq!(
        err,
        GitError::HostKeyMismatch {
            url: source.url.clone()
        }
    );
    assert!(err.to_string().contains("known_hosts"), "{err}");

    let without_known_hosts = ssh_source(&setup.remote, KEY, None, false);
    assert!(matches!(
        setup.cache().resolve(&without_known_hosts),
        Err(GitError::HostKeyMismatch { .. })
    ));
}

#[test]
fn insecure_skip_host_key_checks_connects_without_known_hosts() {
    let setup = Setup::new();
    let source = ssh_source(&setup.remote, KEY, None, true);
    assert_eq!(setup.cache().resolve(&source).unwrap(), setup.remote.head());
    let args = setup.args();
    assert!(
        args.windows(2)
            .any(|w| w == ["-o", "StrictHostKeyChecking=no"]),
        "{args:?}"
    );
}

#[test]
fn a_wrong_key_is_authentication_failed_without_the_key() {
    let setup = Setup::new();
    let wrong_key = "-----BEGIN OPENSSH PRIVATE KEY-----\nNOT-THE-RIGHT-KEY-MATERIAL\n-----END OPENSSH PRIVATE KEY-----\n";
    let source = ssh_source(
        &setup.remote,
        wrong_key,
        Some(&format!("{HOST} ssh-ed25519 AAAA\n")),
        false,
    );
    let err = setup.cache().resolve(&source).unwrap_err();
    assert!(
        matches!(err, GitError::AuthenticationFailed { .. }),
        "{err:?}"
    );
    assert!(
        !format!("{err} {err:?}").contains("NOT-THE-RIGHT-KEY"),
        "{err:?}"
    );
}

#[test]
fn a_refused_connection_is_unreachable() {
    let setup = Setup::new();
    let mut source = ssh_source(&setup.remote, KEY, None, true);
    source.url = "ssh://git@unreachable.test/srv/repo.git".into();
    let err = setup.cache().resolve(&source).unwrap_err();
    assert_eq!(
        err,
        GitError::Unreachable {
            url: source.url.clone(),
            reason: "ssh: connect to host unreachable.test port 22: Connection refused".into()
        }
    );
}

/// A push over ssh runs `git-receive-pack` through the client with the secret's key: the real git sees the
/// commit; a stale base is refused; an unknown host key refuses the push before anything is sent.
#[test]
fn push_over_ssh() {
    let setup = Setup::new();
    let cache = setup.cache();
    let known = format!("{HOST} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeHostKey\n");
    let source = ssh_source(&setup.remote, KEY, Some(&known), false);
    let base = cache.resolve(&source).unwrap();
    cache.fetch(&source, &base).unwrap();
    let change = fleet_git::Change {
        files: [("fleet.yaml".to_string(), b"namespace: pushed\n".to_vec())].into(),
        author_name: "Fleet Bot".into(),
        author_email: "bot@fleet.example".into(),
        message: "update image".into(),
    };
    let outcome = cache.push(&source, &base, &change).unwrap();
    let fleet_git::PushOutcome::Pushed { commit } = outcome else {
        panic!("{outcome:?}");
    };
    let bare = setup.remote.bare();
    assert_eq!(
        fleet_testing::run_git(&bare, &["rev-parse", "main"]).trim(),
        commit
    );
    assert_eq!(
        fleet_testing::run_git(&bare, &["show", "main:fleet.yaml"]),
        "namespace: pushed\n"
    );
    assert!(
        setup
            .args()
            .iter()
            .any(|arg| arg.starts_with("git-receive-pack '")),
        "{:?}",
        setup.args()
    );
    let err = cache.push(&source, &base, &change).unwrap_err();
    assert!(matches!(err, GitError::PushRejected { .. }), "{err:?}");

    let unknown = ssh_source(
        &setup.remote,
        KEY,
        Some("other.test ssh-ed25519 AAAA\n"),
        false,
    );
    let again = fleet_git::Change {
        files: [("fleet.yaml".to_string(), b"namespace: again\n".to_vec())].into(),
        ..change
    };
    let err = cache.push(&unknown, &commit, &again).unwrap_err();
    assert!(matches!(err, GitError::HostKeyMismatch { .. }), "{err:?}");
}
