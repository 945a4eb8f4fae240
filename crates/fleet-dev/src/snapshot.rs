//! A local bare git repository holding snapshots of a folder, written with gix (no `git` binary): each
//! [`SnapshotRepo::commit_dir`] stores the folder's files as a tree and, when the tree differs from the
//! branch's last commit, commits it on every given branch. Hidden `.git` entries are skipped, symlinks are
//! stored as links, and the executable bit is kept.

use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::objs::tree::{Entry, EntryKind};

use crate::error::{Error, Result};

/// The identity of dev-mode snapshots.
const AUTHOR: (&str, &str) = ("fleet dev", "fleet-dev@localhost");

/// A bare repository of folder snapshots.
#[derive(Debug, Clone)]
pub struct SnapshotRepo {
    git_dir: PathBuf,
}

impl SnapshotRepo {
    /// Creates an empty bare repository at `git_dir` (which must not exist yet).
    pub fn init(git_dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(git_dir).map_err(|e| Error::io(git_dir, e))?;
        gix::init_bare(git_dir).map_err(|e| Error::git(git_dir, e))?;
        Ok(SnapshotRepo {
            git_dir: git_dir.to_path_buf(),
        })
    }

    /// The repository's `file://` URL (what a GitRepo's `spec.repo` gets).
    pub fn url(&self) -> String {
        format!("file://{}", self.git_dir.display())
    }

    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// Commits the contents of `dir` on each branch whose last commit has another tree; returns the new
    /// commit (hex) when at least one branch moved.
    pub fn commit_dir(
        &self,
        dir: &Path,
        branches: &[String],
        message: &str,
    ) -> Result<Option<String>> {
        let repo = gix::open(&self.git_dir).map_err(|e| Error::git(&self.git_dir, e))?;
        let tree = write_tree(&repo, dir)?;
        let mut moved = None;
        for branch in branches {
            let reference = format!("refs/heads/{branch}");
            let parent = repo
                .try_find_reference(reference.as_str())
                .map_err(|e| Error::git(&self.git_dir, e))?
                .map(|mut r| r.peel_to_id().map(|id| id.detach()))
                .transpose()
                .map_err(|e| Error::git(&self.git_dir, e))?;
            if let Some(parent) = parent {
                let parent_tree = repo
                    .find_commit(parent)
                    .and_then(|c| c.tree_id())
                    .map_err(|e| Error::git(&self.git_dir, e))?;
                if parent_tree == tree {
                    continue;
                }
            }
            let signature = gix::actor::Signature {
                name: AUTHOR.0.into(),
                email: AUTHOR.1.into(),
                time: gix::date::Time::now_utc(),
            };
            let mut time = gix::date::parse::TimeBuf::default();
            let signature = signature.to_ref(&mut time);
            let commit = repo
                .commit_as(
                    signature,
                    signature,
                    reference.as_str(),
                    message,
                    tree,
                    parent,
                )
                .map_err(|e| Error::git(&self.git_dir, e))?;
            moved = Some(commit.detach().to_hex().to_string());
        }
        Ok(moved)
    }
}

/// Writes the tree of `dir` (recursively) into the repository's object database.
fn write_tree(repo: &gix::Repository, dir: &Path) -> Result<ObjectId> {
    let mut entries = Vec::new();
    let listing = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in listing {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        let path = entry.path();
        let Some(filename) = name.to_str() else {
            return Err(Error::git(
                dir,
                format!("{}: the file name is not UTF-8", path.display()),
            ));
        };
        let kind = entry.file_type().map_err(|e| Error::io(&path, e))?;
        let (mode, oid) = if kind.is_symlink() {
            let target = std::fs::read_link(&path).map_err(|e| Error::io(&path, e))?;
            let blob = repo
                .write_blob(target.to_string_lossy().as_bytes())
                .map_err(|e| Error::git(&path, e))?;
            (EntryKind::Link, blob.detach())
        } else if kind.is_dir() {
            let tree = write_tree(repo, &path)?;
            if tree == ObjectId::empty_tree(repo.object_hash()) {
                continue; // git stores no empty directories
            }
            (EntryKind::Tree, tree)
        } else {
            let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
            let blob = repo.write_blob(bytes).map_err(|e| Error::git(&path, e))?;
            (file_mode(&entry), blob.detach())
        };
        entries.push(Entry {
            mode: mode.into(),
            filename: filename.into(),
            oid,
        });
    }
    // Git's order: names compared bytewise, a tree's name as if it ended in '/'.
    entries.sort_by_key(|entry| {
        let mut key = entry.filename.to_vec();
        if entry.mode.is_tree() {
            key.push(b'/');
        }
        key
    });
    let tree = gix::objs::Tree { entries };
    repo.write_object(&tree)
        .map(|id| id.detach())
        .map_err(|e| Error::git(dir, e))
}

#[cfg(unix)]
fn file_mode(entry: &std::fs::DirEntry) -> EntryKind {
    use std::os::unix::fs::PermissionsExt;
    match entry.metadata() {
        Ok(meta) if meta.permissions().mode() & 0o111 != 0 => EntryKind::BlobExecutable,
        _ => EntryKind::Blob,
    }
}

#[cfg(not(unix))]
fn file_mode(_entry: &std::fs::DirEntry) -> EntryKind {
    EntryKind::Blob
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_commit_only_changes_and_read_back() {
        let temp = tempfile::tempdir().unwrap();
        let folder = temp.path().join("folder");
        std::fs::create_dir_all(folder.join("sub/empty")).unwrap();
        std::fs::write(folder.join("a.yaml"), "a: 1\n").unwrap();
        std::fs::write(folder.join("sub/b.yaml"), "b: 2\n").unwrap();
        std::fs::write(folder.join("sub.yaml"), "c: 3\n").unwrap();
        let repo = SnapshotRepo::init(&temp.path().join("r.git")).unwrap();
        let branches = vec!["main".to_string()];
        let first = repo.commit_dir(&folder, &branches, "one").unwrap();
        assert!(first.is_some());
        assert_eq!(repo.commit_dir(&folder, &branches, "same").unwrap(), None);
        std::fs::write(folder.join("sub/b.yaml"), "b: 3\n").unwrap();
        let second = repo.commit_dir(&folder, &branches, "two").unwrap().unwrap();
        assert_ne!(Some(second.clone()), first);

        let git = gix::open(repo.git_dir()).unwrap();
        let commit = git
            .find_commit(ObjectId::from_hex(second.as_bytes()).unwrap())
            .unwrap();
        assert_eq!(commit.parent_ids().count(), 1);
        let tree = commit.tree().unwrap();
        let names: Vec<String> = tree
            .iter()
            .map(|e| e.unwrap().filename().to_string())
            .collect();
        // `sub.yaml` sorts before `sub/` because '.' < '/'; the empty directory is not stored.
        assert_eq!(names, ["a.yaml", "sub.yaml", "sub"]);
        let blob = tree
            .lookup_entry_by_path("sub/b.yaml")
            .unwrap()
            .unwrap()
            .object()
            .unwrap();
        assert_eq!(blob.data, b"b: 3\n");
    }
}
