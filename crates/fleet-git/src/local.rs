//! Local repositories (`file://` URLs and plain paths), read in-process with gix: the source repository is
//! opened directly, its refs resolved there as an ls-remote would report them, and one commit's objects (the
//! commit, its trees and blobs, not its history) copied into the cache's bare repository. No `git upload-pack`
//! runs, so the controller and dev mode need no `git` binary.

use std::path::PathBuf;
use std::time::Instant;

use gix::objs::Write as _;
use gix::objs::tree::EntryKind;

use crate::error::GitError;
use crate::fetch::{FetchStats, cache_ref, has_commit};
use crate::resolve::{candidates, reference_name};
use crate::source::GitSource;
use crate::tree::tree_entries;

/// The directory of a local repository URL (`file://…` or a path), `None` for a network URL.
pub(crate) fn local_path(url: &str) -> Option<PathBuf> {
    let url = url.trim();
    let parsed = gix::url::parse(url.as_bytes()).ok()?;
    (parsed.scheme == gix::url::Scheme::File)
        .then(|| gix::path::from_bstring(parsed.path).ok())
        .flatten()
}

/// Opens the source repository (bare or with a work tree) without reading user or system configuration.
pub(crate) fn open_source(
    path: &std::path::Path,
    source: &GitSource,
) -> Result<gix::Repository, GitError> {
    let options = gix::open::Options::isolated();
    gix::open_opts(path, options).map_err(|err| {
        tracing::debug!(url = %source.display_url(), %err, "cannot open local repository");
        GitError::RepositoryNotFound {
            url: source.display_url(),
        }
    })
}

/// The commit the source's revision or branch names in `repo`, tags peeled, by the rules of
/// [`crate::resolve::candidates`].
pub(crate) fn resolve(repo: &gix::Repository, source: &GitSource) -> Result<String, GitError> {
    let wanted = match candidates(source) {
        Err(sha) => return Ok(sha),
        Ok(wanted) => wanted,
    };
    let read_error = |err: &dyn std::fmt::Display| GitError::Other {
        url: source.display_url(),
        reason: format!("reading refs: {err}"),
    };
    for name in &wanted {
        let Some(mut reference) = repo
            .try_find_reference(name.as_str())
            .map_err(|err| read_error(&err))?
        else {
            continue;
        };
        let id = reference.peel_to_id().map_err(|err| read_error(&err))?;
        return Ok(id.detach().to_hex().to_string());
    }
    Err(GitError::RefNotFound {
        url: source.display_url(),
        reference: reference_name(source),
    })
}

/// Copies commit `id` from the source repository (opened by `open_source` only when the commit is not in the
/// cache yet) into the cache repository `into`, and points the cache's ref for it at it.
pub(crate) fn fetch(
    into: &gix::Repository,
    open_source: impl FnOnce() -> Result<gix::Repository, GitError>,
    source: &GitSource,
    id: gix::ObjectId,
) -> Result<FetchStats, GitError> {
    let started = Instant::now();
    if has_commit(into, id) {
        return Ok(FetchStats {
            already_present: true,
            duration: started.elapsed(),
            ..FetchStats::default()
        });
    }
    let from = &open_source()?;
    let commit = id.to_hex().to_string();
    let tree = match from.find_commit(id) {
        Ok(found) => found.tree_id().map_err(|err| GitError::Corrupt {
            url: source.display_url(),
            reason: format!("commit {commit}: {err}"),
        })?,
        Err(_) => {
            return Err(GitError::RefNotFound {
                url: source.display_url(),
                reference: format!("commit {commit}"),
            });
        }
    };
    let mut copy = Copy {
        into,
        from,
        source,
        stats: FetchStats::default(),
    };
    // Children before parents: a tree (and the commit) is written only once everything below it is, so an
    // object present in the cache always comes with all it refers to.
    copy.tree(tree.detach())?;
    copy.object(id)?;
    into.reference(
        cache_ref(&commit),
        id,
        gix::refs::transaction::PreviousValue::Any,
        "fleet: copied from a local repository",
    )
    .map_err(|err| copy.corrupt(format!("writing ref {}: {err}", cache_ref(&commit))))?;
    tracing::debug!(url = %source.display_url(), %commit, bytes = copy.stats.bytes, objects = copy.stats.objects, "copied");
    Ok(FetchStats {
        duration: started.elapsed(),
        ..copy.stats
    })
}

/// One copy of objects between two repositories, counting what it wrote.
struct Copy<'a> {
    into: &'a gix::Repository,
    from: &'a gix::Repository,
    source: &'a GitSource,
    stats: FetchStats,
}

impl Copy<'_> {
    /// Copies the tree `id` and everything under it that the cache lacks.
    fn tree(&mut self, id: gix::ObjectId) -> Result<(), GitError> {
        if self.into.has_object(id) {
            return Ok(());
        }
        let entries = tree_entries(self.from, id).map_err(|err| self.corrupt(err))?;
        for (kind, oid) in entries {
            match kind {
                EntryKind::Tree => self.tree(oid)?,
                // A submodule's commit lives in another repository.
                EntryKind::Commit => {}
                EntryKind::Blob | EntryKind::BlobExecutable | EntryKind::Link => {
                    if !self.into.has_object(oid) {
                        self.object(oid)?;
                    }
                }
            }
        }
        self.object(id)
    }

    /// Copies the single object `id`, checking that its content hashes to `id`.
    fn object(&mut self, id: gix::ObjectId) -> Result<(), GitError> {
        let object = self
            .from
            .find_object(id)
            .map_err(|err| self.corrupt(format!("object {id}: {err}")))?;
        let written = self
            .into
            .objects
            .write_buf(object.kind, &object.data)
            .map_err(|err| self.corrupt(format!("writing object {id} into the cache: {err}")))?;
        if written != id {
            return Err(self.corrupt(format!("object {id} hashes to {written}")));
        }
        self.stats.bytes += object.data.len() as u64;
        self.stats.objects += 1;
        Ok(())
    }

    fn corrupt(&self, reason: String) -> GitError {
        GitError::Corrupt {
            url: self.source.display_url(),
            reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_urls_and_paths() {
        assert_eq!(
            local_path("file:///srv/git/app.git"),
            Some(PathBuf::from("/srv/git/app.git"))
        );
        assert_eq!(
            local_path("/srv/git/app"),
            Some(PathBuf::from("/srv/git/app"))
        );
        assert_eq!(local_path("./repo"), Some(PathBuf::from("./repo")));
        for remote in [
            "https://github.com/org/repo",
            "http://git.example/x",
            "ssh://git@host/x",
            "git@github.com:org/repo.git",
        ] {
            assert_eq!(local_path(remote), None, "{remote}");
        }
    }
}
