//! [`GitTree`]: a commit's tree read straight from the cache's object database, as a
//! [`fleet_bundle::tree::FileTree`] for the bundle reader. The directory structure is indexed once; file
//! contents are read from the object database on demand. Symlinks are reported as symlinks with their stored
//! target; submodules (gitlinks) are left out, as they have no content in this repository.

use std::collections::BTreeMap;

use fleet_bundle::tree::{DirEntry, FileTree, TreeError, TreePath};
use gix::objs::tree::EntryKind as GitKind;

use crate::error::GitError;

/// One entry of the indexed tree.
#[derive(Debug, Clone)]
enum Node {
    Dir,
    File { id: gix::ObjectId, mode: u32 },
    Symlink { target: String },
}

/// The files of one commit. Cheap to share across threads (`Send + Sync`).
pub struct GitTree {
    repo: gix::ThreadSafeRepository,
    commit: String,
    /// Every path (tree-relative, `/`-separated) except the root.
    nodes: BTreeMap<String, Node>,
    /// The sorted entries of each directory, keyed by its path (`""` for the root).
    dirs: BTreeMap<String, Vec<DirEntry>>,
}

impl GitTree {
    /// Indexes the tree of `commit`, which must be in `repo`. Errors carry `url` (already redacted).
    pub(crate) fn new(
        repo: &gix::Repository,
        commit: gix::ObjectId,
        url: &str,
    ) -> Result<Self, GitError> {
        let corrupt = |reason: String| GitError::Corrupt {
            url: url.to_string(),
            reason,
        };
        let tree_id = repo
            .find_commit(commit)
            .map_err(|err| corrupt(format!("commit {commit}: {err}")))?
            .tree_id()
            .map_err(|err| corrupt(format!("commit {commit}: {err}")))?;
        let mut index = Self {
            repo: repo.clone().into_sync(),
            commit: commit.to_hex().to_string(),
            nodes: BTreeMap::new(),
            dirs: BTreeMap::new(),
        };
        index
            .add_tree(repo, tree_id.detach(), String::new())
            .map_err(corrupt)?;
        Ok(index)
    }

    /// The commit this tree belongs to.
    pub fn commit(&self) -> &str {
        &self.commit
    }

    /// Every file path (not directories or symlinks), in order.
    pub fn file_paths(&self) -> impl Iterator<Item = &str> {
        self.nodes
            .iter()
            .filter(|(_, node)| matches!(node, Node::File { .. }))
            .map(|(path, _)| path.as_str())
    }

    fn add_tree(
        &mut self,
        repo: &gix::Repository,
        id: gix::ObjectId,
        dir: String,
    ) -> Result<(), String> {
        let tree = repo
            .find_tree(id)
            .map_err(|err| format!("tree {id}: {err}"))?;
        let decoded = tree.decode().map_err(|err| format!("tree {id}: {err}"))?;
        let mut entries = Vec::new();
        let mut subtrees = Vec::new();
        for entry in &decoded.entries {
            let name = String::from_utf8_lossy(entry.filename).into_owned();
            let path = if dir.is_empty() {
                name.clone()
            } else {
                format!("{dir}/{name}")
            };
            let oid = entry.oid.to_owned();
            let node = match entry.mode.kind() {
                GitKind::Tree => {
                    subtrees.push((oid, path.clone()));
                    Node::Dir
                }
                GitKind::Blob => Node::File {
                    id: oid,
                    mode: 0o644,
                },
                GitKind::BlobExecutable => Node::File {
                    id: oid,
                    mode: 0o755,
                },
                GitKind::Link => {
                    let blob = repo
                        .find_blob(oid)
                        .map_err(|err| format!("{path}: {err}"))?;
                    Node::Symlink {
                        target: String::from_utf8_lossy(&blob.data).into_owned(),
                    }
                }
                GitKind::Commit => {
                    tracing::debug!(%path, "skipping submodule");
                    continue;
                }
            };
            entries.push(dir_entry(&name, &node));
            self.nodes.insert(path, node);
        }
        entries.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        self.dirs.insert(dir, entries);
        for (oid, path) in subtrees {
            self.add_tree(repo, oid, path)?;
        }
        Ok(())
    }

    fn node(&self, path: &TreePath) -> Option<&Node> {
        if path.is_root() {
            return Some(&Node::Dir);
        }
        self.nodes.get(path.as_str())
    }
}

impl FileTree for GitTree {
    fn list_dir(&self, path: &TreePath) -> Result<Vec<DirEntry>, TreeError> {
        match self.node(path) {
            Some(Node::Dir) => Ok(self.dirs.get(path.as_str()).cloned().unwrap_or_default()),
            Some(_) => Err(TreeError::NotADirectory {
                path: path.to_string(),
            }),
            None => Err(TreeError::NotFound {
                path: path.to_string(),
            }),
        }
    }

    fn read_file(&self, path: &TreePath) -> Result<Vec<u8>, TreeError> {
        match self.node(path) {
            Some(Node::File { id, .. }) => {
                let repo = self.repo.to_thread_local();
                let blob = repo.find_blob(*id).map_err(|err| TreeError::Io {
                    path: path.to_string(),
                    message: format!("cannot read object {id} of commit {}: {err}", self.commit),
                })?;
                Ok(blob.detach().data)
            }
            Some(Node::Dir) => Err(TreeError::IsADirectory {
                path: path.to_string(),
            }),
            Some(Node::Symlink { target }) => Err(TreeError::Io {
                path: path.to_string(),
                message: format!("is a symlink to {target:?}: resolve it before reading"),
            }),
            None => Err(TreeError::NotFound {
                path: path.to_string(),
            }),
        }
    }

    fn entry(&self, path: &TreePath) -> Result<Option<DirEntry>, TreeError> {
        let Some(node) = self.node(path) else {
            return Ok(None);
        };
        Ok(Some(dir_entry(path.file_name(), node)))
    }
}

/// The kind and object id of each entry of the tree `id` (errors name the tree).
pub(crate) fn tree_entries(
    repo: &gix::Repository,
    id: gix::ObjectId,
) -> Result<Vec<(GitKind, gix::ObjectId)>, String> {
    let tree = repo
        .find_tree(id)
        .map_err(|err| format!("tree {id}: {err}"))?;
    Ok(tree
        .decode()
        .map_err(|err| format!("tree {id}: {err}"))?
        .entries
        .iter()
        .map(|entry| (entry.mode.kind(), entry.oid.to_owned()))
        .collect())
}

/// The listing entry for `node`, named `name`.
fn dir_entry(name: &str, node: &Node) -> DirEntry {
    match node {
        Node::Dir => DirEntry::dir(name),
        Node::File { mode, .. } => DirEntry::file(name, *mode),
        Node::Symlink { target } => DirEntry::symlink(name, target),
    }
}

impl std::fmt::Debug for GitTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitTree")
            .field("commit", &self.commit)
            .field("entries", &self.nodes.len())
            .finish()
    }
}
