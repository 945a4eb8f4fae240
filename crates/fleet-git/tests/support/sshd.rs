//! The real OpenSSH server for tests (Debian's `openssh-server`): [`Sshd`] runs `/usr/sbin/sshd` on a free
//! loopback port with a host key, an `authorized_keys` file and a configuration of its own (no PAM, no
//! passwords), as the user running the test; [`keygen`] makes ed25519 keys with the real `ssh-keygen`.

use std::path::Path;
use std::process::{Child, Command, Stdio};

const SSHD: &str = "/usr/sbin/sshd";

/// A new ed25519 key pair in `dir`: (private key, public key line).
pub fn keygen(dir: &Path, name: &str) -> (String, String) {
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
pub struct Sshd {
    child: Child,
    pub port: u16,
    host_key: String,
    _dir: tempfile::TempDir,
}

impl Sshd {
    pub fn start(authorized: &str) -> Self {
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
        let mut child = Command::new(SSHD)
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
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "sshd did not listen on 127.0.0.1:{port} (as root it needs /run/sshd, which scripts/install-tools.sh makes): {}",
            std::fs::read_to_string(dir.path().join("sshd.log")).unwrap_or_default()
        );
    }

    /// `known_hosts` line vouching for this server.
    pub fn known_hosts(&self) -> String {
        let mut parts = self.host_key.split_whitespace();
        let (kind, key) = (parts.next().unwrap(), parts.next().unwrap());
        format!("[127.0.0.1]:{} {kind} {key}\n", self.port)
    }

    pub fn url(&self, bare: &Path) -> String {
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
