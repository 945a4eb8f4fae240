//! `MemoryTree`: a file tree held in memory, for tests, benchmarks and trees read from a git object database.

use std::collections::BTreeMap;

use super::{DirEntry, FileTree, TreeError, TreePath};

#[derive(Debug, Clone)]
enum Node {
    Dir,
    File {
        bytes: Vec<u8>,
        mode: u32,
    },
    Symlink {
        target: String,
    },
    /// A file whose reads fail with this message (models an unreadable file or a broken object).
    Unreadable {
        message: String,
    },
}

/// Files, directories and symlinks keyed by normalised path. Parent directories are created implicitly.
#[derive(Debug, Clone, Default)]
pub struct MemoryTree {
    nodes: BTreeMap<String, Node>,
}

impl MemoryTree {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a regular file (mode `0o644`).
    pub fn add_file(&mut self, path: &str, bytes: impl Into<Vec<u8>>) -> &mut Self {
        self.insert(
            path,
            Node::File {
                bytes: bytes.into(),
                mode: 0o644,
            },
        )
    }

    /// Adds a regular file with explicit permission bits.
    pub fn add_file_with_mode(
        &mut self,
        path: &str,
        bytes: impl Into<Vec<u8>>,
        mode: u32,
    ) -> &mut Self {
        self.insert(
            path,
            Node::File {
                bytes: bytes.into(),
                mode,
            },
        )
    }

    /// Adds a symlink whose target is stored verbatim.
    pub fn add_symlink(&mut self, path: &str, target: &str) -> &mut Self {
        self.insert(
            path,
            Node::Symlink {
                target: target.to_string(),
            },
        )
    }

    /// Adds an (otherwise empty) directory.
    pub fn add_dir(&mut self, path: &str) -> &mut Self {
        self.insert(path, Node::Dir)
    }

    /// Adds a file that exists but whose reads fail with an I/O error carrying `message`.
    pub fn add_unreadable(&mut self, path: &str, message: &str) -> &mut Self {
        self.insert(
            path,
            Node::Unreadable {
                message: message.to_string(),
            },
        )
    }

    fn insert(&mut self, path: &str, node: Node) -> &mut Self {
        let path = TreePath::new(path).unwrap_or_default();
        let mut parent = path.parent();
        while !parent.is_root() {
            self.nodes
                .entry(parent.as_str().to_string())
                .or_insert(Node::Dir);
            parent = parent.parent();
        }
        self.nodes.insert(path.as_str().to_string(), node);
        self
    }

    fn node(&self, path: &TreePath) -> Option<&Node> {
        if path.is_root() {
            return Some(&Node::Dir);
        }
        self.nodes.get(path.as_str())
    }
}

fn entry_of(name: &str, node: &Node) -> DirEntry {
    match node {
        Node::Dir => DirEntry::dir(name),
        Node::File { mode, .. } => DirEntry::file(name, *mode),
        Node::Symlink { target } => DirEntry::symlink(name, target),
        Node::Unreadable { .. } => DirEntry::file(name, 0),
    }
}

impl FileTree for MemoryTree {
    fn list_dir(&self, path: &TreePath) -> Result<Vec<DirEntry>, TreeError> {
        match self.node(path) {
            None => {
                return Err(TreeError::NotFound {
                    path: path.to_string(),
                });
            }
            Some(Node::Dir) => {}
            Some(_) => {
                return Err(TreeError::NotADirectory {
                    path: path.to_string(),
                });
            }
        }
        let prefix = if path.is_root() {
            String::new()
        } else {
            format!("{}/", path.as_str())
        };
        let entries = self
            .nodes
            .range(prefix.clone()..)
            .take_while(|(key, _)| key.starts_with(&prefix))
            .filter_map(|(key, node)| {
                let rest = &key[prefix.len()..];
                (!rest.contains('/')).then(|| entry_of(rest, node))
            })
            .collect();
        Ok(entries)
    }

    fn read_file(&self, path: &TreePath) -> Result<Vec<u8>, TreeError> {
        match self.node(path) {
            None => Err(TreeError::NotFound {
                path: path.to_string(),
            }),
            Some(Node::File { bytes, .. }) => Ok(bytes.clone()),
            Some(Node::Dir) => Err(TreeError::IsADirectory {
                path: path.to_string(),
            }),
            Some(Node::Symlink { .. }) => Err(TreeError::Io {
                path: path.to_string(),
                message: "is a symlink; resolve it first".to_string(),
            }),
            Some(Node::Unreadable { message }) => Err(TreeError::Io {
                path: path.to_string(),
                message: message.clone(),
            }),
        }
    }

    fn entry(&self, path: &TreePath) -> Result<Option<DirEntry>, TreeError> {
        Ok(self.node(path).map(|node| entry_of(path.file_name(), node)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::EntryKind;

    #[test]
    fn lists_direct_children_sorted() {
        let mut tree = MemoryTree::new();
        tree.add_file("b/x.yaml", "")
            .add_file("a.yaml", "")
            .add_file("b/c/d.yaml", "")
            .add_dir("e");
        let names: Vec<_> = tree
            .list_dir(&TreePath::root())
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, ["a.yaml", "b", "e"]);
        let inner = tree.list_dir(&TreePath::new("b").unwrap()).unwrap();
        assert_eq!(inner[0].name, "c");
        assert_eq!(inner[0].kind, EntryKind::Dir);
        assert_eq!(inner[1].name, "x.yaml");
        assert!(
            tree.list_dir(&TreePath::new("e").unwrap())
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn reports_errors() {
        let mut tree = MemoryTree::new();
        tree.add_file("a.yaml", "x")
            .add_unreadable("locked.yaml", "permission denied");
        assert_eq!(
            tree.read_file(&TreePath::new("locked.yaml").unwrap())
                .unwrap_err()
                .to_string(),
            "locked.yaml: permission denied"
        );
        assert!(matches!(
            tree.read_file(&TreePath::new("nope").unwrap()),
            Err(TreeError::NotFound { .. })
        ));
        assert!(matches!(
            tree.list_dir(&TreePath::new("a.yaml").unwrap()),
            Err(TreeError::NotADirectory { .. })
        ));
    }
}
