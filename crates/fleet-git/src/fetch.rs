//! Shallow fetches: one commit (depth 1) into the cache's bare repository, asked for by its id so that a
//! branch moving in between cannot change what arrives. A commit already present costs no network at all.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use gix::remote::fetch::{Shallow, Status};

use crate::classify::Operation;
use crate::error::GitError;
use crate::remote::Session;
use crate::source::GitSource;

/// What one fetch transferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FetchStats {
    /// Size of the pack received (0 when the commit was already cached).
    pub bytes: u64,
    /// Number of objects in that pack.
    pub objects: u64,
    pub duration: Duration,
    /// Whether the commit was already in the cache, so nothing was fetched.
    pub already_present: bool,
}

/// The ref under which a fetched commit is kept in the cache, so that it stays reachable.
pub(crate) fn cache_ref(commit: &str) -> String {
    format!("refs/fleet/commits/{commit}")
}

/// The id of `commit`, which must be a full SHA.
pub(crate) fn parse_commit(source: &GitSource, commit: &str) -> Result<gix::ObjectId, GitError> {
    if !crate::resolve::is_full_sha(commit) {
        return Err(GitError::RefNotFound {
            url: source.display_url(),
            reference: format!("commit {commit:?} (a full 40-digit SHA is needed)"),
        });
    }
    gix::ObjectId::from_hex(commit.as_bytes()).map_err(|err| GitError::RefNotFound {
        url: source.display_url(),
        reference: format!("commit {commit:?} ({err})"),
    })
}

/// Fetches `commit` (depth 1) unless it is already present.
pub(crate) fn fetch(
    session: &Session,
    source: &GitSource,
    commit: &str,
) -> Result<FetchStats, GitError> {
    let started = Instant::now();
    let id = parse_commit(source, commit)?;
    if has_commit(&session.repo, id) {
        return Ok(FetchStats {
            already_present: true,
            duration: started.elapsed(),
            ..FetchStats::default()
        });
    }
    let commit = id.to_hex().to_string();
    let remote = session.remote(&[format!("+{commit}:{}", cache_ref(&commit))])?;
    let connection = session.connect(&remote, Operation::Fetch)?;
    // The handshake succeeded, so the remote is reachable and accepts us. A server refusing to serve a commit it
    // does not have ("not our ref") hangs up at once, and we may only see the hang-up while still sending the rest
    // of our request.
    let refused_or = |err: &gix::error::Error| {
        let refused = format!("{err} {err:?}")
            .to_ascii_lowercase()
            .contains("broken pipe");
        if refused {
            GitError::RefNotFound {
                url: source.display_url(),
                reference: format!("commit {commit} (the server hung up on the request)"),
            }
        } else {
            session.error(err, Operation::Fetch)
        }
    };
    let outcome = connection
        .prepare_fetch(gix::progress::Discard, Default::default())
        .map_err(|err| refused_or(&err))?
        .with_shallow(Shallow::DepthAtRemote(std::num::NonZeroU32::MIN))
        .receive(gix::progress::Discard, &AtomicBool::new(false))
        .map_err(|err| refused_or(&err))?;
    let (bytes, objects) = match &outcome.status {
        Status::Change {
            write_pack_bundle, ..
        } => (
            write_pack_bundle
                .data_path
                .as_ref()
                .and_then(|path| std::fs::metadata(path).ok())
                .map_or(0, |meta| meta.len()),
            u64::from(write_pack_bundle.index.num_objects),
        ),
        Status::NoPackReceived { .. } => (0, 0),
    };
    if !has_commit(&session.repo, id) {
        return Err(GitError::RefNotFound {
            url: source.display_url(),
            reference: format!("commit {commit}"),
        });
    }
    tracing::debug!(url = %source.display_url(), %commit, bytes, objects, "fetched");
    Ok(FetchStats {
        bytes,
        objects,
        duration: started.elapsed(),
        already_present: false,
    })
}

/// Whether `id` is a commit in `repo`'s object database.
pub(crate) fn has_commit(repo: &gix::Repository, id: gix::ObjectId) -> bool {
    repo.has_object(id) && repo.find_commit(id).is_ok()
}
