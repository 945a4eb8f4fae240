//! The abstract file tree the bundle reader works on: a checkout on disk ([`LocalTree`]), files held in memory
//! ([`MemoryTree`]), or, later, a tree read straight from a git object database. Paths are relative,
//! `/`-separated and normalised ([`TreePath`]); symlink targets are resolved here so that no link can lead a
//! reader outside the root it was given.

mod local;
mod memory;
mod path;

pub use local::LocalTree;
pub use memory::MemoryTree;
pub use path::TreePath;

/// What a directory entry is. Symlinks carry their raw target as stored (relative or absolute).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink { target: String },
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub kind: EntryKind,
    /// Unix permission bits (e.g. `0o644`, `0o755`); `0` when the source has none.
    pub mode: u32,
}

impl DirEntry {
    /// A directory, listed with mode `0o755` as the trees that store no directory modes (git, memory) list it.
    pub fn dir(name: &str) -> Self {
        Self::new(name, EntryKind::Dir, 0o755)
    }

    /// A file with permission bits `mode`.
    pub fn file(name: &str, mode: u32) -> Self {
        Self::new(name, EntryKind::File, mode)
    }

    /// A symlink to `target`, listed with mode `0o777` as symlinks are.
    pub fn symlink(name: &str, target: &str) -> Self {
        let target = target.to_string();
        Self::new(name, EntryKind::Symlink { target }, 0o777)
    }

    fn new(name: &str, kind: EntryKind, mode: u32) -> Self {
        Self {
            name: name.to_string(),
            kind,
            mode,
        }
    }
}

/// Errors a tree reports. Paths are the tree-relative paths the caller asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TreeError {
    #[error("{path}: no such file or directory")]
    NotFound { path: String },
    #[error("{path}: not a directory")]
    NotADirectory { path: String },
    #[error("{path}: is a directory")]
    IsADirectory { path: String },
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("{path}: symlink to {target:?} points outside the bundle root {root:?}")]
    SymlinkEscapes {
        path: String,
        target: String,
        root: String,
    },
    #[error("{path}: too many levels of symbolic links")]
    SymlinkLoop { path: String },
}

/// A read-only file tree. Implementations must list directories in byte order of their names so that every
/// reader over them is deterministic.
pub trait FileTree: Send + Sync {
    /// The entries of the directory at `path` (the root is [`TreePath::root`]), sorted by name.
    fn list_dir(&self, path: &TreePath) -> Result<Vec<DirEntry>, TreeError>;
    /// The bytes of the regular file at `path`. Symlinks are not followed here: resolve them first.
    fn read_file(&self, path: &TreePath) -> Result<Vec<u8>, TreeError>;
    /// What is at `path` without following a final symlink, or `None` when nothing is there.
    fn entry(&self, path: &TreePath) -> Result<Option<DirEntry>, TreeError>;
}

/// How many links one lookup may follow before it is treated as a loop.
const MAX_SYMLINK_HOPS: usize = 40;

/// Follows `path` through any symlinks (in its last component, repeatedly) and returns the final non-link path
/// and its entry. Every hop must stay under `root`; otherwise [`TreeError::SymlinkEscapes`].
pub fn resolve(
    tree: &dyn FileTree,
    root: &TreePath,
    path: &TreePath,
) -> Result<(TreePath, DirEntry), TreeError> {
    let mut current = path.clone();
    for _ in 0..MAX_SYMLINK_HOPS {
        let entry = tree.entry(&current)?.ok_or_else(|| TreeError::NotFound {
            path: current.to_string(),
        })?;
        let EntryKind::Symlink { target } = &entry.kind else {
            return Ok((current, entry));
        };
        let escapes = || TreeError::SymlinkEscapes {
            path: path.to_string(),
            target: target.clone(),
            root: root.display_root(),
        };
        if target.starts_with('/') {
            return Err(escapes());
        }
        let joined = current.parent().join_relative(target).ok_or_else(escapes)?;
        if !joined.starts_with(root) {
            return Err(escapes());
        }
        current = joined;
    }
    Err(TreeError::SymlinkLoop {
        path: path.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> MemoryTree {
        let mut tree = MemoryTree::new();
        tree.add_file("b/real.yaml", "a: 1\n");
        tree.add_symlink("b/inside.yaml", "real.yaml");
        tree.add_symlink("b/up.yaml", "../outside.yaml");
        tree.add_file("outside.yaml", "x: 1\n");
        tree.add_symlink("b/abs.yaml", "/etc/passwd");
        tree.add_symlink("b/loop1", "loop2");
        tree.add_symlink("b/loop2", "loop1");
        tree
    }

    #[test]
    fn symlink_inside_root_resolves() {
        let tree = tree();
        let root = TreePath::new("b").unwrap();
        let (path, entry) =
            resolve(&tree, &root, &TreePath::new("b/inside.yaml").unwrap()).unwrap();
        assert_eq!(path.as_str(), "b/real.yaml");
        assert_eq!(entry.kind, EntryKind::File);
    }

    #[test]
    fn symlink_outside_root_is_rejected() {
        let tree = tree();
        let root = TreePath::new("b").unwrap();
        let err = resolve(&tree, &root, &TreePath::new("b/up.yaml").unwrap()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "b/up.yaml: symlink to \"../outside.yaml\" points outside the bundle root \"b\""
        );
        // The same link is fine when the root is the whole tree.
        let (path, _) = resolve(
            &tree,
            &TreePath::root(),
            &TreePath::new("b/up.yaml").unwrap(),
        )
        .unwrap();
        assert_eq!(path.as_str(), "outside.yaml");
    }

    #[test]
    fn absolute_symlink_is_rejected() {
        let err = resolve(
            &tree(),
            &TreePath::root(),
            &TreePath::new("b/abs.yaml").unwrap(),
        )
        .unwrap_err();
        assert!(matches!(err, TreeError::SymlinkEscapes { .. }), "{err}");
    }

    #[test]
    fn symlink_loop_is_detected() {
        let err = resolve(
            &tree(),
            &TreePath::root(),
            &TreePath::new("b/loop1").unwrap(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "b/loop1: too many levels of symbolic links"
        );
    }
}
