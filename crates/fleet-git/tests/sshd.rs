//! The ssh transport against the real OpenSSH server (Debian's `openssh-server`; CI installs it): the test runs
//! `sshd` itself on a loopback port with a host key, an `authorized_keys` file and a configuration of its own
//! (no PAM, no passwords), as the user running the test, and fetches through the real `ssh` client
//! with a `kubernetes.io/ssh-auth` secret's key and `known_hosts`. A host key that is not the server's and a
//! key the server does not know are refused with messages that say so and show no key.

mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use fleet_bundle::tree::{FileTree, TreePath};
use fleet_git::{GitAuth, GitCache, GitError, GitSource, SSH_AUTH_SECRET_TYPE};
use support::Remote;
use support::sshd::{Sshd, keygen};

/// The source reading `url` with a `kubernetes.io/ssh-auth` secret holding `key` and `known_hosts`.
fn source(url: String, key: &str, known_hosts: &str) -> GitSource {
    let data: BTreeMap<String, Vec<u8>> = [
        ("ssh-privatekey", key.as_bytes().to_vec()),
        ("known_hosts", known_hosts.as_bytes().to_vec()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let mut source = GitSource::new(url);
    source.branch = Some("main".into());
    source.auth = GitAuth::from_secret(SSH_AUTH_SECRET_TYPE, &data).unwrap();
    source
}

fn remote() -> Remote {
    let remote = Remote::new("over-sshd");
    remote.write("app/fleet.yaml", "namespace: ssh\n");
    remote.commit("first");
    remote
}

fn cache() -> (GitCache, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("cache");
    (GitCache::new(&root), root, dir)
}

#[test]
fn a_known_server_and_an_authorized_key_fetch() {
    let remote = remote();
    let keys = tempfile::tempdir().unwrap();
    let (key, public) = keygen(keys.path(), "client");
    let sshd = Sshd::start(&public);
    let (cache, _, _dir) = cache();
    let source = source(sshd.url(&remote.bare()), &key, &sshd.known_hosts());
    let commit = cache.resolve(&source).unwrap();
    assert_eq!(commit, remote.head());
    cache.fetch(&source, &commit).unwrap();
    let tree = cache.tree(&source, &commit).unwrap();
    assert_eq!(
        tree.read_file(&TreePath::new("app/fleet.yaml").unwrap())
            .unwrap(),
        b"namespace: ssh\n"
    );
}

#[test]
fn an_unknown_host_key_and_an_unauthorized_key_are_refused() {
    let remote = remote();
    let keys = tempfile::tempdir().unwrap();
    let (key, public) = keygen(keys.path(), "client");
    let (stranger, _) = keygen(keys.path(), "stranger");
    let (_, other_host) = keygen(keys.path(), "other-host");
    let sshd = Sshd::start(&public);
    let (cache, _, _dir) = cache();
    let url = sshd.url(&remote.bare());

    // known_hosts vouches for another key under this server's name.
    let mut parts = other_host.split_whitespace();
    let wrong_hosts = format!(
        "[127.0.0.1]:{} {} {}\n",
        sshd.port,
        parts.next().unwrap(),
        parts.next().unwrap()
    );
    let err = cache
        .resolve(&source(url.clone(), &key, &wrong_hosts))
        .unwrap_err();
    assert_eq!(err, GitError::HostKeyMismatch { url: url.clone() });

    // The server does not know the key.
    let err = cache
        .resolve(&source(url.clone(), &stranger, &sshd.known_hosts()))
        .unwrap_err();
    assert_eq!(err, GitError::AuthenticationFailed { url: url.clone() });
    let message = format!("{err} {err:?}");
    let key_line = stranger.lines().nth(1).unwrap();
    assert!(!message.contains(key_line), "{message}");
}
