//! [`GitCache`]: a directory of bare repositories, one per normalized remote URL, and the three operations
//! the controller needs — resolve (ls-remote), fetch (shallow, by commit) and tree (read from the object
//! database). Operations on one repository are serialized; different repositories proceed in parallel.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use crate::error::GitError;
use crate::fetch::{FetchStats, has_commit, parse_commit};
use crate::local::{self, local_path};
use crate::remote::{Session, open_bare};
use crate::source::GitSource;
use crate::tree::GitTree;
use crate::url::normalize_url;

/// The cache of bare repositories. Blocking: call it from `spawn_blocking`.
pub struct GitCache {
    root: PathBuf,
    ssh_program: OsString,
    locks: Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>,
}

impl GitCache {
    /// A cache under `root` (created on first use).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            ssh_program: OsString::from("ssh"),
            locks: Mutex::new(HashMap::new()),
        }
    }

    /// Uses `program` instead of `ssh` from `PATH` for ssh remotes (it gets OpenSSH's arguments).
    pub fn with_ssh_program(mut self, program: impl Into<OsString>) -> Self {
        self.ssh_program = program.into();
        self
    }

    /// The cache's root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The bare repository that holds `url`'s objects: `<root>/<sha256 of the normalized URL, 16 digits>-<name>`.
    pub fn repo_dir(&self, url: &str) -> PathBuf {
        let normalized = normalize_url(url);
        let digest = hex::encode(Sha256::digest(normalized.as_bytes()));
        let name: String = normalized
            .rsplit('/')
            .find(|segment| !segment.is_empty())
            .unwrap_or("repo")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        self.root.join(format!("{}-{name}", &digest[..16]))
    }

    /// The commit the source's revision or branch names on the remote now. Lists refs only; fetches nothing.
    /// A local repository's refs are read directly.
    pub fn resolve(&self, source: &GitSource) -> Result<String, GitError> {
        if let Some(path) = local_path(&source.url) {
            return local::resolve(&local::open_source(&path, source)?, source);
        }
        self.with_session(source, |session| crate::resolve::resolve(session, source))
    }

    /// Fetches `commit` (a full SHA, normally from [`Self::resolve`]) with depth 1 into the cache; nothing is
    /// transferred when it is already there. A local repository's objects are copied in-process.
    pub fn fetch(&self, source: &GitSource, commit: &str) -> Result<FetchStats, GitError> {
        if let Some(path) = local_path(&source.url) {
            let id = parse_commit(source, commit)?;
            return self.locked(source, |dir| {
                let cache = open_recovering(dir, source, |dir| open_bare(dir, source, Vec::new()))?;
                local::fetch(&cache, || local::open_source(&path, source), source, id)
            });
        }
        self.with_session(source, |session| {
            crate::fetch::fetch(session, source, commit)
        })
    }

    /// Commits `change` on top of `base` (a fetched commit) and pushes it to the source's branch, which must
    /// still point at `base` ([`GitError::PushRejected`] otherwise). Smart HTTP(S), ssh and local repositories.
    pub fn push(
        &self,
        source: &GitSource,
        base: &str,
        change: &crate::push::Change,
    ) -> Result<crate::push::PushOutcome, GitError> {
        let id = parse_commit(source, base)?;
        self.locked(source, |dir| {
            let repo = open_bare(dir, source, Vec::new())?;
            if !has_commit(&repo, id) {
                return Err(GitError::NotFetched {
                    url: source.display_url(),
                    commit: base.to_string(),
                });
            }
            crate::push::push(&repo, &self.ssh_program, source, id, change)
        })
    }

    /// The files of `commit`, which must have been fetched.
    pub fn tree(&self, source: &GitSource, commit: &str) -> Result<GitTree, GitError> {
        let id = parse_commit(source, commit)?;
        let dir = self.repo_dir(&source.url);
        let lock = self.lock_for(&dir);
        let _guard = lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let repo = open_bare(&dir, source, Vec::new())?;
        if !has_commit(&repo, id) {
            return Err(GitError::NotFetched {
                url: source.display_url(),
                commit: commit.to_string(),
            });
        }
        GitTree::new(&repo, id, &source.display_url())
    }

    fn with_session<T>(
        &self,
        source: &GitSource,
        operation: impl FnOnce(&Session) -> Result<T, GitError>,
    ) -> Result<T, GitError> {
        self.locked(source, |dir| {
            let session = open_recovering(dir, source, |dir| {
                Session::open(dir, source, &self.ssh_program)
            })?;
            operation(&session)
        })
    }

    /// Runs `operation` on the source's cache directory while holding its lock.
    fn locked<T>(
        &self,
        source: &GitSource,
        operation: impl FnOnce(&Path) -> Result<T, GitError>,
    ) -> Result<T, GitError> {
        let dir = self.repo_dir(&source.url);
        let lock = self.lock_for(&dir);
        let _guard = lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        operation(&dir)
    }

    fn lock_for(&self, dir: &Path) -> Arc<Mutex<()>> {
        let mut locks = self
            .locks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        locks.entry(dir.to_path_buf()).or_default().clone()
    }
}

/// Runs `open` on the cache directory `dir`; when the cached repository there cannot be opened it is removed
/// and `open` runs once more on a fresh one (the cache holds nothing that cannot be fetched again).
fn open_recovering<T>(
    dir: &Path,
    source: &GitSource,
    open: impl Fn(&Path) -> Result<T, GitError>,
) -> Result<T, GitError> {
    match open(dir) {
        Err(GitError::Corrupt { reason, .. }) if dir.exists() => {
            tracing::warn!(%reason, "recreating an unreadable cached repository");
            std::fs::remove_dir_all(dir).map_err(|err| GitError::Corrupt {
                url: source.display_url(),
                reason: format!("{reason}; removing it failed: {err}"),
            })?;
            open(dir)
        }
        opened => opened,
    }
}

impl std::fmt::Debug for GitCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitCache")
            .field("root", &self.root)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_directory_per_normalized_url() {
        let cache = GitCache::new("/cache");
        let a = cache.repo_dir("https://github.com/Org/Repo.git");
        assert_eq!(a, cache.repo_dir("git@github.com:org/repo"));
        assert_ne!(a, cache.repo_dir("https://github.com/org/other"));
        assert!(
            a.file_name().unwrap().to_str().unwrap().ends_with("-repo"),
            "{a:?}"
        );
    }
}
