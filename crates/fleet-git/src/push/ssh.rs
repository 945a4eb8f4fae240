//! Pushing over ssh: the system client (through the wrapper script of [`crate::ssh`], with the secret's key
//! and `known_hosts`) runs `git-receive-pack '<path>'` on the server, and the receive-pack protocol is spoken
//! over its stdin and stdout — the advertisement, the update command and pack, the report.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::process::{Command, Stdio};

use crate::error::GitError;
use crate::push::protocol::{self, Advertisement, Report};
use crate::source::GitSource;
use crate::ssh::SshSession;

/// One receive-pack conversation.
pub(crate) struct SshRemote<'a> {
    source: &'a GitSource,
    session: SshSession,
    child: std::process::Child,
}

impl<'a> SshRemote<'a> {
    /// Starts `git-receive-pack` on the source's host.
    pub(crate) fn connect(source: &'a GitSource, program: &OsString) -> Result<Self, GitError> {
        let other = |reason: String| GitError::Other {
            url: source.display_url(),
            reason,
        };
        let url = gix::url::parse(source.url.trim().as_bytes())
            .map_err(|err| other(format!("not an ssh URL: {err}")))?;
        let host = url
            .host()
            .ok_or_else(|| other("the ssh URL names no host".to_string()))?;
        let target = match url.user() {
            Some(user) => format!("{user}@{host}"),
            None => host.to_string(),
        };
        let path = String::from_utf8_lossy(&url.path).into_owned();
        let session = SshSession::new(program, &source.auth)?;
        let mut command = Command::new(session.command());
        if let Some(port) = url.port {
            command.arg("-p").arg(port.to_string());
        }
        let child = command
            .arg(target)
            .arg(format!(
                "git-receive-pack '{}'",
                path.replace('\'', r"'\''")
            ))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|err| other(format!("cannot run the ssh client: {err}")))?;
        Ok(Self {
            source,
            session,
            child,
        })
    }

    /// The refs the server advertises.
    pub(crate) fn advertisement(&mut self) -> Result<Advertisement, GitError> {
        let raw = self.read_section()?;
        protocol::parse_advertisement(&raw).map_err(|reason| self.other(reason))
    }

    /// Sends the update command and pack; the server's report.
    pub(crate) fn receive_pack(mut self, body: &[u8], reference: &str) -> Result<Report, GitError> {
        let mut stdin = self
            .child
            .stdin
            .take()
            .ok_or_else(|| self.other("the ssh client has no stdin".to_string()))?;
        stdin
            .write_all(body)
            .and_then(|()| stdin.flush())
            .map_err(|err| self.failed(&format!("sending the pack: {err}")))?;
        drop(stdin);
        let raw = self.read_section()?;
        let _ = self.child.wait();
        protocol::parse_report(&raw, reference).map_err(|reason| self.other(reason))
    }

    /// The pkt-lines up to and including the next flush packet, as raw bytes.
    fn read_section(&mut self) -> Result<Vec<u8>, GitError> {
        let mut raw = Vec::new();
        loop {
            let mut head = [0u8; 4];
            let read = match self.child.stdout.as_mut() {
                Some(stdout) => stdout.read_exact(&mut head),
                None => return Err(self.other("the ssh client has no stdout".to_string())),
            };
            if let Err(err) = read {
                return Err(self.failed(&format!("the connection ended: {err}")));
            }
            raw.extend_from_slice(&head);
            let length = std::str::from_utf8(&head)
                .ok()
                .and_then(|text| usize::from_str_radix(text, 16).ok())
                .ok_or_else(|| self.other(format!("bad pkt-line length {head:?}")))?;
            if length == 0 {
                return Ok(raw);
            }
            let mut payload = vec![0u8; length.saturating_sub(4)];
            let read = match self.child.stdout.as_mut() {
                Some(stdout) => stdout.read_exact(&mut payload),
                None => return Err(self.other("the ssh client has no stdout".to_string())),
            };
            if let Err(err) = read {
                return Err(self.failed(&format!("the connection ended: {err}")));
            }
            raw.extend_from_slice(&payload);
        }
    }

    /// An error of the ssh client, classified by what it printed.
    fn failed(&mut self, what: &str) -> GitError {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let stderr = self.session.stderr().to_ascii_lowercase();
        let url = self.source.display_url();
        if stderr.contains("host key verification failed")
            || stderr.contains("remote host identification has changed")
        {
            GitError::HostKeyMismatch { url }
        } else if stderr.contains("permission denied") {
            GitError::AuthenticationFailed { url }
        } else if stderr.contains("connection refused")
            || stderr.contains("could not resolve")
            || stderr.contains("timed out")
        {
            GitError::Unreachable {
                url,
                reason: crate::classify::scrub(self.session.stderr().trim(), self.source),
            }
        } else if stderr.contains("does not appear to be a git repository")
            || stderr.contains("not found")
        {
            GitError::RepositoryNotFound { url }
        } else {
            self.other(format!(
                "{what}: {}",
                crate::classify::scrub(self.session.stderr().trim(), self.source)
            ))
        }
    }

    fn other(&self, reason: String) -> GitError {
        GitError::Other {
            url: self.source.display_url(),
            reason,
        }
    }
}

impl Drop for SshRemote<'_> {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
