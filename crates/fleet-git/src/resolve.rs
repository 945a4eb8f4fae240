//! `ls-remote`: which commit a source's branch or revision names right now, without fetching any object.
//! Rules as Fleet's: a revision wins over the branch; a full SHA revision is taken as is; a tag is peeled to
//! its commit; the branch defaults to `master`.

use crate::classify::Operation;
use crate::error::GitError;
use crate::remote::Session;
use crate::source::{DEFAULT_BRANCH, GitSource};

/// The full ref names that may satisfy the source, most specific first, or `Err(sha)` when the revision is
/// already a commit id.
pub(crate) fn candidates(source: &GitSource) -> Result<Vec<String>, String> {
    if let Some(revision) = source
        .revision
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty())
    {
        if is_full_sha(revision) {
            return Err(revision.to_ascii_lowercase());
        }
        if revision.starts_with("refs/") {
            return Ok(vec![revision.to_string()]);
        }
        return Ok(vec![
            format!("refs/tags/{revision}"),
            format!("refs/heads/{revision}"),
        ]);
    }
    let branch = source
        .branch
        .as_deref()
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .unwrap_or(DEFAULT_BRANCH);
    if branch.starts_with("refs/") {
        Ok(vec![branch.to_string()])
    } else {
        Ok(vec![format!("refs/heads/{branch}")])
    }
}

/// What the source's ref is called, for messages.
pub(crate) fn reference_name(source: &GitSource) -> String {
    match source.revision.as_deref().filter(|r| !r.trim().is_empty()) {
        Some(revision) => format!("revision {:?}", revision.trim()),
        None => format!(
            "branch {:?}",
            source
                .branch
                .as_deref()
                .filter(|b| !b.trim().is_empty())
                .unwrap_or(DEFAULT_BRANCH)
        ),
    }
}

/// Lists the remote's refs and picks the commit the source names.
pub(crate) fn resolve(session: &Session, source: &GitSource) -> Result<String, GitError> {
    let wanted = match candidates(source) {
        Err(sha) => return Ok(sha),
        Ok(wanted) => wanted,
    };
    let remote = session.remote(&wanted)?;
    let connection = session.connect(&remote, Operation::ListRefs)?;
    let (ref_map, _handshake) = connection
        .ref_map(gix::progress::Discard, Default::default())
        .map_err(|err| session.error(&err, Operation::ListRefs))?;
    for name in &wanted {
        let found = ref_map.remote_refs.iter().find_map(|remote_ref| {
            let (full_name, target, peeled) = remote_ref.unpack();
            let full_name: &[u8] = full_name.as_ref();
            (full_name == name.as_bytes())
                .then(|| peeled.or(target).map(|id| id.to_hex().to_string()))
                .flatten()
        });
        if let Some(commit) = found {
            return Ok(commit);
        }
    }
    Err(GitError::RefNotFound {
        url: source.display_url(),
        reference: reference_name(source),
    })
}

/// 40 hexadecimal digits (a SHA-1 commit id).
pub(crate) fn is_full_sha(value: &str) -> bool {
    value.len() == 40 && value.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(branch: Option<&str>, revision: Option<&str>) -> GitSource {
        let mut source = GitSource::new("file:///x");
        source.branch = branch.map(str::to_string);
        source.revision = revision.map(str::to_string);
        source
    }

    #[test]
    fn revision_wins_over_branch() {
        assert_eq!(
            candidates(&source(Some("main"), Some("v1.0"))).unwrap(),
            ["refs/tags/v1.0", "refs/heads/v1.0"]
        );
        let sha = "0123456789ABCDEF0123456789abcdef01234567";
        assert_eq!(
            candidates(&source(Some("main"), Some(sha))).unwrap_err(),
            sha.to_ascii_lowercase()
        );
    }

    #[test]
    fn branch_defaults_to_master() {
        assert_eq!(
            candidates(&source(None, None)).unwrap(),
            ["refs/heads/master"]
        );
        assert_eq!(
            candidates(&source(Some("dev"), Some(" "))).unwrap(),
            ["refs/heads/dev"]
        );
        assert_eq!(reference_name(&source(None, None)), "branch \"master\"");
    }
}
