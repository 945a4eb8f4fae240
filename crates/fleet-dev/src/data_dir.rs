//! The dev-mode state directory (default `.fleet-dev/`): kubeconfigs for the hub and each cluster, the
//! local git repositories made from example folders, the controller's git cache and the log. Every start
//! is fresh: a directory that holds the marker file of an earlier dev mode is emptied; an empty or missing
//! one is created; any other directory is refused, so that a mistyped `--data-dir` never deletes user files.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The file that marks a directory as made by dev mode.
pub const MARKER: &str = ".fleet-dev";

/// The prepared directory.
#[derive(Debug, Clone)]
pub struct DataDir {
    root: PathBuf,
}

impl DataDir {
    /// Creates or empties `root` (see the module docs) and marks it.
    pub fn prepare(root: &Path) -> Result<Self> {
        let refuse = |message: &str| Error::DataDir {
            path: root.to_path_buf(),
            message: message.to_string(),
        };
        if root.exists() {
            if !root.is_dir() {
                return Err(refuse("exists and is not a directory"));
            }
            let entries: Vec<_> = std::fs::read_dir(root)
                .map_err(|e| Error::io(root, e))?
                .collect::<std::io::Result<_>>()
                .map_err(|e| Error::io(root, e))?;
            if !entries.is_empty() && !root.join(MARKER).is_file() {
                return Err(refuse(
                    "exists, is not empty and was not made by fleet dev; remove it or choose another --data-dir",
                ));
            }
            for entry in entries {
                let path = entry.path();
                let removed = if path.is_dir() && !path.is_symlink() {
                    std::fs::remove_dir_all(&path)
                } else {
                    std::fs::remove_file(&path)
                };
                removed.map_err(|e| Error::io(&path, e))?;
            }
        } else {
            std::fs::create_dir_all(root).map_err(|e| Error::io(root, e))?;
        }
        let root = std::fs::canonicalize(root).map_err(|e| Error::io(root, e))?;
        let marker = root.join(MARKER);
        std::fs::write(&marker, "made by `fleet dev`; emptied at its next start\n")
            .map_err(|e| Error::io(&marker, e))?;
        Ok(DataDir { root })
    }

    /// The (absolute) directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<root>/<name>.kubeconfig`.
    pub fn kubeconfig_path(&self, name: &str) -> PathBuf {
        self.root.join(format!("{name}.kubeconfig"))
    }

    /// Writes a kubeconfig only its owner can read (it holds an admin token); returns its path.
    pub fn write_kubeconfig(&self, name: &str, content: &str) -> Result<PathBuf> {
        let path = self.kubeconfig_path(name);
        fleet_apiserver::standalone::write_private(&path, content)
            .map_err(|e| Error::io(&path, e))?;
        Ok(path)
    }

    /// Where local git repositories made from example folders live.
    pub fn git_dir(&self, name: &str) -> PathBuf {
        self.root.join("git").join(format!("{name}.git"))
    }

    /// The controller's git cache.
    pub fn git_cache(&self) -> PathBuf {
        self.root.join("git-cache")
    }

    /// The log file of the dev-mode process.
    pub fn log_path(&self) -> PathBuf {
        self.root.join("fleet-dev.log")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_directory_is_created_and_marked() {
        let temp = tempfile::tempdir().unwrap();
        let dir = DataDir::prepare(&temp.path().join("state")).unwrap();
        assert!(dir.root().join(MARKER).is_file());
    }

    #[test]
    fn an_earlier_dev_state_is_emptied() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("state");
        let dir = DataDir::prepare(&root).unwrap();
        dir.write_kubeconfig("hub", "old").unwrap();
        std::fs::create_dir_all(root.join("git/x.git")).unwrap();
        let dir = DataDir::prepare(&root).unwrap();
        assert!(!dir.kubeconfig_path("hub").exists());
        assert!(!root.join("git").exists());
        assert!(root.join(MARKER).is_file());
    }

    #[test]
    fn a_foreign_directory_is_refused_and_left_alone() {
        let temp = tempfile::tempdir().unwrap();
        std::fs::write(temp.path().join("precious.txt"), "keep").unwrap();
        let err = DataDir::prepare(temp.path()).unwrap_err().to_string();
        assert!(err.contains("was not made by fleet dev"), "{err}");
        assert!(temp.path().join("precious.txt").is_file());
    }
}
