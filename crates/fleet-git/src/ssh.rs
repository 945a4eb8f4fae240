//! SSH through the system `ssh` client: the secret's key and `known_hosts` are written to a private temp dir
//! (0700, files 0600) and a small wrapper script there becomes gix's `core.sshCommand`. Host keys are checked
//! strictly unless `insecureSkipHostKeyChecks`; the client's stderr goes to a file so that failures can be
//! classified (host key mismatch, authentication, unreachable) without echoing anything secret.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::PathBuf;

use crate::error::GitError;
use crate::source::GitAuth;

/// The files of one ssh connection; removed when dropped.
pub(crate) struct SshSession {
    dir: tempfile::TempDir,
}

impl SshSession {
    /// Writes the key, `known_hosts` and the wrapper script for `auth`, running `program` (normally `ssh`).
    pub(crate) fn new(program: &OsString, auth: &GitAuth) -> Result<Self, GitError> {
        let dir = tempfile::Builder::new()
            .prefix("fleet-git-ssh-")
            .tempdir()
            .map_err(|err| io_error("create a private directory for ssh keys", &err))?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
            .map_err(|err| io_error("make the ssh key directory private", &err))?;
        let session = Self { dir };
        let mut options: Vec<String> = vec![
            "-F".into(),
            "/dev/null".into(),
            "-o".into(),
            "BatchMode=yes".into(),
            "-o".into(),
            "ConnectTimeout=30".into(),
        ];
        let (key, known_hosts, insecure) = match auth {
            GitAuth::Ssh {
                private_key,
                known_hosts,
                insecure_skip_host_key_checks,
            } => (
                Some(private_key.as_str()),
                known_hosts.as_deref(),
                *insecure_skip_host_key_checks,
            ),
            _ => (None, None, false),
        };
        if let Some(key) = key {
            let path = session.write_private("id", key)?;
            options.extend([
                "-o".into(),
                "IdentitiesOnly=yes".into(),
                "-i".into(),
                path.display().to_string(),
            ]);
        }
        if insecure {
            options.extend([
                "-o".into(),
                "StrictHostKeyChecking=no".into(),
                "-o".into(),
                "UserKnownHostsFile=/dev/null".into(),
            ]);
        } else {
            let path = session.write_private("known_hosts", known_hosts.unwrap_or(""))?;
            options.extend([
                "-o".into(),
                "StrictHostKeyChecking=yes".into(),
                "-o".into(),
                format!("UserKnownHostsFile={}", path.display()),
            ]);
        }
        let script = format!(
            "#!/bin/sh\nexec {} {} \"$@\" 2>>{}\n",
            shell_quote(&program.to_string_lossy()),
            options
                .iter()
                .map(|o| shell_quote(o))
                .collect::<Vec<_>>()
                .join(" "),
            shell_quote(&session.stderr_path().display().to_string()),
        );
        session.write_file("ssh", &script, 0o700)?;
        Ok(session)
    }

    /// The wrapper script to use as `core.sshCommand`.
    pub(crate) fn command(&self) -> PathBuf {
        self.dir.path().join("ssh")
    }

    /// What the ssh client printed on stderr so far.
    pub(crate) fn stderr(&self) -> String {
        std::fs::read_to_string(self.stderr_path()).unwrap_or_default()
    }

    fn stderr_path(&self) -> PathBuf {
        self.dir.path().join("stderr")
    }

    fn write_private(&self, name: &str, contents: &str) -> Result<PathBuf, GitError> {
        let mut contents = contents.to_string();
        if !contents.is_empty() && !contents.ends_with('\n') {
            // OpenSSH refuses a key without its final newline.
            contents.push('\n');
        }
        self.write_file(name, &contents, 0o600)
    }

    fn write_file(&self, name: &str, contents: &str, mode: u32) -> Result<PathBuf, GitError> {
        let path = self.dir.path().join(name);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&path)
            .map_err(|err| io_error("write an ssh file", &err))?;
        file.write_all(contents.as_bytes())
            .map_err(|err| io_error("write an ssh file", &err))?;
        Ok(path)
    }

    #[cfg(test)]
    fn dir(&self) -> &std::path::Path {
        self.dir.path()
    }
}

fn io_error(what: &str, err: &std::io::Error) -> GitError {
    GitError::Other {
        url: String::new(),
        reason: format!("cannot {what}: {err}"),
    }
}

/// `value` in single quotes for `sh`.
fn shell_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn key_and_known_hosts_are_private_and_checked_strictly() {
        let auth = GitAuth::Ssh {
            private_key:
                "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----".into(),
            known_hosts: Some("git.example ssh-ed25519 AAAAC3Nza".into()),
            insecure_skip_host_key_checks: false,
        };
        let session = SshSession::new(&OsString::from("ssh"), &auth).unwrap();
        let dir = session.dir().to_path_buf();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join("id")), 0o600);
        assert_eq!(mode(&dir.join("known_hosts")), 0o600);
        assert_eq!(mode(&session.command()), 0o700);
        assert!(
            std::fs::read_to_string(dir.join("id"))
                .unwrap()
                .ends_with("KEY-----\n")
        );
        let script = std::fs::read_to_string(session.command()).unwrap();
        let expected = format!(
            "#!/bin/sh\nexec 'ssh' '-F' '/dev/null' '-o' 'BatchMode=yes' '-o' 'ConnectTimeout=30' '-o' 'IdentitiesOnly=yes' \
             '-i' '{d}/id' '-o' 'StrictHostKeyChecking=yes' '-o' 'UserKnownHostsFile={d}/known_hosts' \"$@\" 2>>'{d}/stderr'\n",
            d = dir.display()
        );
        assert_eq!(script, expected);
        assert!(
            !script.contains("abc"),
            "the key itself is never on a command line"
        );
        drop(session);
        assert!(!dir.exists(), "key files are removed with the session");
    }

    #[test]
    fn insecure_skip_disables_host_key_checks() {
        let auth = GitAuth::Ssh {
            private_key: "k".into(),
            known_hosts: None,
            insecure_skip_host_key_checks: true,
        };
        let session = SshSession::new(&OsString::from("ssh"), &auth).unwrap();
        let script = std::fs::read_to_string(session.command()).unwrap();
        assert!(script.contains("'StrictHostKeyChecking=no' '-o' 'UserKnownHostsFile=/dev/null'"));
        assert!(!session.dir().join("known_hosts").exists());
    }

    #[test]
    fn quoting_survives_quotes() {
        assert_eq!(shell_quote("a'b"), r"'a'\''b'");
    }
}
