//! Test fixtures: a work repository that pushes to a bare "remote" repository, both made with the real `git`
//! in a temp dir, and (in `http`) a smart-HTTP server over `git http-backend`.

#![allow(dead_code)]

pub mod http;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use fleet_bundle::tree::{EntryKind, FileTree, TreePath};

/// A bare repository (`remote.git`) and a work tree (`work`) whose `origin` it is.
pub struct Remote {
    dir: tempfile::TempDir,
}

impl Remote {
    /// An empty bare repository named `name.git` and a work tree on branch `main`.
    pub fn new(name: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let remote = Self { dir };
        std::fs::write(remote.dir.path().join("name"), name).unwrap();
        std::fs::create_dir_all(remote.work()).unwrap();
        run_git(
            remote.dir.path(),
            &["init", "-q", "--bare", "-b", "main", &format!("{name}.git")],
        );
        remote.git(&["init", "-q", "-b", "main"]);
        remote.git(&["remote", "add", "origin", remote.bare().to_str().unwrap()]);
        remote
    }

    fn name(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("name")).unwrap()
    }

    /// The directory holding the bare repository (a `GIT_PROJECT_ROOT`).
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn bare(&self) -> PathBuf {
        self.dir.path().join(format!("{}.git", self.name()))
    }

    pub fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// `file://` URL of the bare repository.
    pub fn url(&self) -> String {
        format!("file://{}", self.bare().display())
    }

    pub fn write(&self, relative: &str, contents: &str) -> &Self {
        let path = self.work().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
        self
    }

    pub fn write_bytes(&self, relative: &str, contents: &[u8]) -> &Self {
        let path = self.work().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
        self
    }

    pub fn symlink(&self, relative: &str, target: &str) -> &Self {
        let path = self.work().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, path).unwrap();
        self
    }

    pub fn remove(&self, relative: &str) -> &Self {
        let path = self.work().join(relative);
        if path.is_dir() {
            std::fs::remove_dir_all(path).unwrap();
        } else {
            std::fs::remove_file(path).unwrap();
        }
        self
    }

    /// Commits everything in the work tree and force-pushes the current branch; returns the new SHA.
    pub fn commit(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        let branch = self.git(&["rev-parse", "--abbrev-ref", "HEAD"]);
        self.git(&["push", "-q", "-f", "origin", branch.trim()]);
        self.head()
    }

    pub fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"]).trim().to_string()
    }

    /// Runs `git` in the work tree with a fixed identity and no user config.
    pub fn git(&self, args: &[&str]) -> String {
        run_git(&self.work(), args)
    }
}

pub fn run_git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Fleet Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", "Fleet Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .output()
        .expect("run git");
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// What a tree holds: file path → contents, symlink path → `-> target`; `.git` is skipped.
pub fn snapshot(tree: &dyn FileTree) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    walk(tree, &TreePath::root(), &mut out);
    out
}

fn walk(tree: &dyn FileTree, dir: &TreePath, out: &mut BTreeMap<String, Vec<u8>>) {
    for entry in tree.list_dir(dir).unwrap() {
        if dir.is_root() && entry.name == ".git" {
            continue;
        }
        let path = dir.child(&entry.name);
        match entry.kind {
            EntryKind::Dir => walk(tree, &path, out),
            EntryKind::File => {
                out.insert(path.to_string(), tree.read_file(&path).unwrap());
            }
            EntryKind::Symlink { target } => {
                out.insert(path.to_string(), format!("-> {target}").into_bytes());
            }
        }
    }
}
