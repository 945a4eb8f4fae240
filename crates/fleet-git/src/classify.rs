//! The classification of gix's errors (plus the ssh client's stderr) into [`GitError`], and the scrubbing of
//! credentials from every message that leaves this crate.

use crate::error::GitError;
use crate::source::GitSource;
use crate::url::redact_urls_in_text;

/// What the failing operation was doing, for classification: a missing object while fetching a pinned commit
/// means the ref is gone, not that the cache is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    ListRefs,
    Fetch,
    Read,
}

/// Turns a gix error (and what the ssh client printed, if anything) into a [`GitError`].
pub(crate) fn classify(
    err: &gix::error::Error,
    source: &GitSource,
    operation: Operation,
    ssh_stderr: &str,
) -> GitError {
    let url = source.display_url();
    let chain = describe(err);
    let reason = scrub(&chain, source);
    let lower = format!("{chain}\n{ssh_stderr}").to_ascii_lowercase();
    let contains = |needles: &[&str]| needles.iter().any(|needle| lower.contains(needle));

    if contains(&[
        "host key verification failed",
        "remote host identification has changed",
    ]) {
        return GitError::HostKeyMismatch { url };
    }
    if contains(&["clear text over http", "will not send credentials"]) {
        return GitError::InsecureCredentials { url };
    }
    if err.classify().is_unauthenticated()
        || contains(&[
            "authentication",
            "permission denied",
            "unauthorized",
            "forbidden",
        ])
        || has_word(&lower, "401")
        || has_word(&lower, "403")
    {
        return GitError::AuthenticationFailed { url };
    }
    if contains(&[
        "certificate",
        "unknownissuer",
        "invalid peer",
        "handshake failure",
    ]) || has_word(&lower, "tls")
    {
        return GitError::Tls {
            url,
            reason: first_line_with(&reason, &["certificate", "tls", "handshake"]),
        };
    }
    if contains(&["not our ref"]) && operation == Operation::Fetch {
        return GitError::RefNotFound {
            url,
            reference: "the requested commit".to_string(),
        };
    }
    if contains(&[
        "does not appear to be a git repository",
        "repository not found",
        "not a git repository",
        "valid git directory",
    ]) || has_word(&lower, "404")
    {
        return GitError::RepositoryNotFound { url };
    }
    if contains(&[
        "connection refused",
        "could not resolve",
        "resolve hostname",
        "failed to lookup",
        "dns error",
        "timed out",
        "no route to host",
        "network is unreachable",
        "connection reset",
        "error sending request",
        "connect to host",
        "connection closed",
    ]) {
        let ssh_line = scrub(ssh_stderr.lines().last().unwrap_or(""), source);
        return GitError::Unreachable {
            url,
            reason: if ssh_line.is_empty() {
                first_line_with(
                    &reason,
                    &["connect", "resolve", "timed out", "unreachable", "reset"],
                )
            } else {
                ssh_line
            },
        };
    }
    if operation == Operation::Read || err.classify().is_corrupted() || contains(&["corrupt"]) {
        return GitError::Corrupt { url, reason };
    }
    GitError::Other { url, reason }
}

/// Whether `word` occurs in `text` with no letter or digit on either side (so a SHA never matches "401").
fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// The messages of an error and its causes, joined with `: `, without consecutive repeats.
fn describe(err: &gix::error::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.iter_errors() {
        let text = cause.to_string();
        if text.is_empty() || parts.iter().any(|seen| seen.contains(&text)) {
            continue;
        }
        parts.push(text);
    }
    if parts.is_empty() {
        parts.push(err.to_string());
    }
    parts.join(": ")
}

/// The clause of `reason` that mentions one of `needles`, or all of it.
fn first_line_with(reason: &str, needles: &[&str]) -> String {
    reason
        .rsplit(": ")
        .find(|part| {
            let lower = part.to_ascii_lowercase();
            needles.iter().any(|needle| lower.contains(needle))
        })
        .unwrap_or(reason)
        .to_string()
}

/// Removes user info from URLs in `text` and every secret of `source`'s credentials.
pub(crate) fn scrub(text: &str, source: &GitSource) -> String {
    let mut text = redact_urls_in_text(text);
    for secret in source.auth.secrets() {
        for piece in secret_pieces(secret) {
            text = text.replace(piece, "<redacted>");
        }
    }
    text
}

/// A secret and, for multi-line keys, each of its substantial lines (a message may quote only one).
fn secret_pieces(secret: &str) -> impl Iterator<Item = &str> {
    std::iter::once(secret.trim())
        .chain(secret.lines().map(str::trim))
        .filter(|piece| piece.len() >= 4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::GitAuth;

    fn classified(message: &str, operation: Operation, ssh_stderr: &str) -> GitError {
        let err = gix::error::Error::from_error(std::io::Error::other(message.to_string()));
        let mut source = GitSource::new("https://fleet:hunter2@git.example/org/repo");
        source.auth = GitAuth::Basic {
            username: "fleet".into(),
            password: "hunter2".into(),
        };
        classify(&err, &source, operation, ssh_stderr)
    }

    #[test]
    fn messages_are_classified() {
        let url = "https://git.example/org/repo".to_string();
        assert_eq!(
            classified(
                "Will not send credentials in clear text over http",
                Operation::ListRefs,
                ""
            ),
            GitError::InsecureCredentials { url: url.clone() }
        );
        assert_eq!(
            classified(
                "early EOF",
                Operation::ListRefs,
                "Host key verification failed.\n"
            ),
            GitError::HostKeyMismatch { url: url.clone() }
        );
        assert_eq!(
            classified("HTTP status 401", Operation::Fetch, ""),
            GitError::AuthenticationFailed { url: url.clone() }
        );
        assert!(matches!(
            classified(
                "invalid peer certificate: UnknownIssuer",
                Operation::ListRefs,
                ""
            ),
            GitError::Tls { .. }
        ));
        assert_eq!(
            classified(
                "upload-pack: not our ref 4010000000000000000000000000000000000401",
                Operation::Fetch,
                ""
            ),
            GitError::RefNotFound {
                url: url.clone(),
                reference: "the requested commit".into()
            },
            "a SHA containing 401 is not an authentication failure"
        );
        assert!(matches!(
            classified("Connection refused (os error 111)", Operation::ListRefs, ""),
            GitError::Unreachable { .. }
        ));
        let other = classified(
            "server said hunter2 at https://fleet:hunter2@git.example",
            Operation::Fetch,
            "",
        );
        assert!(
            !format!("{other} {other:?}").contains("hunter2"),
            "{other:?}"
        );
    }

    #[test]
    fn scrub_removes_passwords_keys_and_userinfo() {
        let mut source = GitSource::new("https://u:hunter2@example.com/r");
        source.auth = GitAuth::Basic {
            username: "u".into(),
            password: "hunter2".into(),
        };
        assert_eq!(
            scrub("GET https://u:hunter2@example.com/r said hunter2", &source),
            "GET https://example.com/r said <redacted>"
        );
        source.auth = GitAuth::Ssh {
            private_key: "-----BEGIN KEY-----\nAAAAsecretline\n-----END KEY-----\n".into(),
            known_hosts: None,
            insecure_skip_host_key_checks: false,
        };
        assert!(!scrub("bad key AAAAsecretline", &source).contains("AAAAsecretline"));
    }
}
