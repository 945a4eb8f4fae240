//! Test fixtures: a work repository that pushes to a bare "remote" repository, both made with the real `git`
//! in a temp dir, and (in `http`) a smart-HTTP server over `git http-backend`.

#![allow(dead_code)]

pub mod http;
pub mod sshd;

use std::collections::BTreeMap;
use std::ops::Deref;
use std::path::{Path, PathBuf};

use fleet_bundle::tree::{EntryKind, FileTree, TreePath};
use fleet_git::{GitCache, GitSource};
use fleet_testing::{GitFixture, run_git};

/// A bare repository (`<name>.git`) and a work tree ([`GitFixture`], reached through `Deref`) whose `origin` it is.
pub struct Remote {
    work: GitFixture,
    root: tempfile::TempDir,
    name: String,
}

impl Remote {
    /// An empty bare repository named `name.git` and a work tree on branch `main`.
    pub fn new(name: &str) -> Self {
        let root = tempfile::tempdir().expect("temp dir");
        run_git(
            root.path(),
            &["init", "-q", "--bare", "-b", "main", &format!("{name}.git")],
        );
        let remote = Self {
            work: GitFixture::new(),
            root,
            name: name.to_string(),
        };
        remote.git(&["remote", "add", "origin", remote.bare().to_str().unwrap()]);
        remote
    }

    /// The directory holding the bare repository (a `GIT_PROJECT_ROOT`).
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    pub fn bare(&self) -> PathBuf {
        self.root().join(format!("{}.git", self.name))
    }

    pub fn work(&self) -> PathBuf {
        self.work.path().to_path_buf()
    }

    /// `file://` URL of the bare repository.
    pub fn url(&self) -> String {
        format!("file://{}", self.bare().display())
    }

    /// Commits everything in the work tree and force-pushes the current branch; returns the new SHA.
    pub fn commit(&self, message: &str) -> String {
        let sha = self.work.commit(message);
        let branch = self.git(&["rev-parse", "--abbrev-ref", "HEAD"]);
        self.git(&["push", "-q", "-f", "origin", branch.trim()]);
        sha
    }
}

impl Deref for Remote {
    type Target = GitFixture;

    fn deref(&self) -> &GitFixture {
        &self.work
    }
}

/// An empty cache in its own temp dir (kept while the returned guard lives).
pub fn new_cache() -> (tempfile::TempDir, GitCache) {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = GitCache::new(dir.path());
    (dir, cache)
}

/// Resolves the source's reference and fetches that commit; the commit.
pub fn fetch(cache: &GitCache, source: &GitSource) -> String {
    let commit = cache.resolve(source).unwrap();
    cache.fetch(source, &commit).unwrap();
    commit
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
