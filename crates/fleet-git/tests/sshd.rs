//! The ssh transport against the real OpenSSH server (Debian's `openssh-server`; CI installs it): the test runs
//! `sshd` itself on a loopback port with a host key, an `authorized_keys` file and a configuration of its own
//! (no root login service, no PAM), as the user running the test, and fetches through the real `ssh` client
//! with a `kubernetes.io/ssh-auth` secret's key and `known_hosts`. A host key that is not the server's and a
//! key the server does not know are refused with messages that say so and show no key.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use fleet_bundle::tree::{FileTree, TreePath};
use fleet_git::{GitAuth, GitCache, GitError, GitSource, SSH_AUTH_SECRET_TYPE};
use support::Remote;

const SSHD: &str = "/usr/sbin/sshd";

/// A new ed25519 key pair in `dir`: (private key, public key line).
fn keygen(dir: &Path, name: &str) -> (String, String) {
    let path = dir.join(name);
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&path)
        .output()
        .expect("ssh-keygen runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        std::fs::read_to_string(&path).unwrap(),
        std::fs::read_to_string(path.with_extension("pub")).unwrap(),
    )
}

/// `sshd` on a free loopback port, accepting `authorized` for the current user; stopped when dropped.
struct Sshd {
    child: Child,
    port: u16,
    host_key: String,
    _dir: tempfile::TempDir,
}

impl Sshd {
    fn start(authorized: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (_, host_key) = keygen(dir.path(), "host");
        let authorized_keys = dir.path().join("authorized_keys");
        std::fs::write(&authorized_keys, authorized).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = dir.path().join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "ListenAddress 127.0.0.1\nPort {port}\nHostKey {host}\nAuthorizedKeysFile {keys}\n\
                 PidFile {pid}\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
                 StrictModes no\nPermitRootLogin prohibit-password\nLogLevel VERBOSE\n",
                host = dir.path().join("host").display(),
                keys = authorized_keys.display(),
                pid = dir.path().join("sshd.pid").display(),
            ),
        )
        .unwrap();
        let child = Command::new(SSHD)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("sshd.log")).unwrap())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("{SSHD} could not be started ({e}): install Debian's openssh-server")
            });
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Self {
                    child,
                    port,
                    host_key,
                    _dir: dir,
                };
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!(
            "sshd did not listen on 127.0.0.1:{port} (as root it needs /run/sshd, which scripts/install-tools.sh makes): {}",
            std::fs::read_to_string(dir.path().join("sshd.log")).unwrap_or_default()
        );
    }

    /// `known_hosts` line vouching for this server.
    fn known_hosts(&self) -> String {
        let mut parts = self.host_key.split_whitespace();
        let (kind, key) = (parts.next().unwrap(), parts.next().unwrap());
        format!("[127.0.0.1]:{} {kind} {key}\n", self.port)
    }

    fn url(&self, bare: &Path) -> String {
        let user = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string();
        format!("ssh://{user}@127.0.0.1:{}{}", self.port, bare.display())
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

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
