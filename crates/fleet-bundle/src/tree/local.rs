//! `LocalTree`: a directory on the local filesystem. The only code in this crate that touches the disk.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::{DirEntry, EntryKind, FileTree, TreeError, TreePath};

/// A tree rooted at a local directory. Symlinks are reported as such, never followed by the tree itself.
#[derive(Debug, Clone)]
pub struct LocalTree {
    root: PathBuf,
}

impl LocalTree {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn full(&self, path: &TreePath) -> PathBuf {
        path.segments()
            .fold(self.root.clone(), |full, segment| full.join(segment))
    }
}

fn io_error(path: &TreePath, err: io::Error) -> TreeError {
    match err.kind() {
        io::ErrorKind::NotFound => TreeError::NotFound {
            path: path.to_string(),
        },
        io::ErrorKind::NotADirectory => TreeError::NotADirectory {
            path: path.to_string(),
        },
        io::ErrorKind::IsADirectory => TreeError::IsADirectory {
            path: path.to_string(),
        },
        _ => TreeError::Io {
            path: path.to_string(),
            message: strip_os_code(&err),
        },
    }
}

/// `io::Error`'s display ends with `(os error N)`; users need only the words.
fn strip_os_code(err: &io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(index) => text[..index].to_lowercase(),
        None => text,
    }
}

#[cfg(unix)]
fn mode_of(meta: &fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn mode_of(meta: &fs::Metadata) -> u32 {
    if meta.permissions().readonly() {
        0o444
    } else {
        0o644
    }
}

fn entry_from(
    name: String,
    full: &Path,
    meta: &fs::Metadata,
    path: &TreePath,
) -> Result<DirEntry, TreeError> {
    let kind = if meta.file_type().is_symlink() {
        let target = fs::read_link(full).map_err(|err| io_error(path, err))?;
        EntryKind::Symlink {
            target: target.to_string_lossy().replace('\\', "/"),
        }
    } else if meta.is_dir() {
        EntryKind::Dir
    } else {
        EntryKind::File
    };
    Ok(DirEntry {
        name,
        kind,
        mode: mode_of(meta),
    })
}

impl FileTree for LocalTree {
    fn list_dir(&self, path: &TreePath) -> Result<Vec<DirEntry>, TreeError> {
        let full = self.full(path);
        let reader = fs::read_dir(&full).map_err(|err| io_error(path, err))?;
        let mut entries = Vec::new();
        for item in reader {
            let item = item.map_err(|err| io_error(path, err))?;
            let name = item.file_name().to_string_lossy().into_owned();
            let child = path.child(&name);
            let meta = fs::symlink_metadata(item.path()).map_err(|err| io_error(&child, err))?;
            entries.push(entry_from(name, &item.path(), &meta, &child)?);
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(entries)
    }

    fn read_file(&self, path: &TreePath) -> Result<Vec<u8>, TreeError> {
        let full = self.full(path);
        let meta = fs::symlink_metadata(&full).map_err(|err| io_error(path, err))?;
        if meta.is_dir() {
            return Err(TreeError::IsADirectory {
                path: path.to_string(),
            });
        }
        fs::read(&full).map_err(|err| io_error(path, err))
    }

    fn entry(&self, path: &TreePath) -> Result<Option<DirEntry>, TreeError> {
        let full = self.full(path);
        match fs::symlink_metadata(&full) {
            Ok(meta) => entry_from(path.file_name().to_string(), &full, &meta, path).map(Some),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(io_error(path, err)),
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn reads_lists_and_reports_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        fs::write(dir.path().join("sub/a.yaml"), "a: 1\n").unwrap();
        std::os::unix::fs::symlink("sub/a.yaml", dir.path().join("link.yaml")).unwrap();
        let tree = LocalTree::new(dir.path());
        let entries = tree.list_dir(&TreePath::root()).unwrap();
        assert_eq!(entries[0].name, "link.yaml");
        assert_eq!(
            entries[0].kind,
            EntryKind::Symlink {
                target: "sub/a.yaml".into()
            }
        );
        assert_eq!(entries[1].kind, EntryKind::Dir);
        assert_eq!(
            tree.read_file(&TreePath::new("sub/a.yaml").unwrap())
                .unwrap(),
            b"a: 1\n"
        );
        assert!(
            tree.entry(&TreePath::new("missing").unwrap())
                .unwrap()
                .is_none()
        );
        assert!(matches!(
            tree.read_file(&TreePath::new("sub").unwrap()),
            Err(TreeError::IsADirectory { .. })
        ));
    }
}
