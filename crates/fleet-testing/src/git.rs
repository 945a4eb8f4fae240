//! Real git repositories for tests, made with the `git` command in a temp dir (tests may use git; the product
//! reads repositories through gix only).

use std::path::Path;
use std::process::Command;

/// A non-bare repository in a temp dir with a `main` branch, committed to with the real `git`.
pub struct GitFixture {
    dir: tempfile::TempDir,
}

impl GitFixture {
    /// `git init -b main` in a new temp dir.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let fixture = Self { dir };
        fixture.git(&["init", "-q", "-b", "main"]);
        fixture
    }

    /// The work tree.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `file://` URL of the repository.
    pub fn url(&self) -> String {
        format!("file://{}", self.path().display())
    }

    /// Writes (creating directories) a file relative to the work tree.
    pub fn write(&self, relative: &str, contents: &str) -> &Self {
        self.write_bytes(relative, contents.as_bytes())
    }

    /// Writes (creating directories) a file of arbitrary bytes relative to the work tree.
    pub fn write_bytes(&self, relative: &str, contents: &[u8]) -> &Self {
        let path = self.path().join(relative);
        std::fs::create_dir_all(path.parent().expect("a file has a parent")).expect("mkdir");
        std::fs::write(&path, contents).expect("write file");
        self
    }

    /// Creates a symlink at `relative` (in the work tree) pointing at `target`.
    pub fn symlink(&self, relative: &str, target: &str) -> &Self {
        let path = self.path().join(relative);
        std::fs::create_dir_all(path.parent().expect("a file has a parent")).expect("mkdir");
        std::os::unix::fs::symlink(target, path).expect("symlink");
        self
    }

    /// Removes a file or directory relative to the work tree.
    pub fn remove(&self, relative: &str) -> &Self {
        let path = self.path().join(relative);
        if path.is_dir() {
            std::fs::remove_dir_all(&path).expect("remove dir");
        } else {
            std::fs::remove_file(&path).expect("remove file");
        }
        self
    }

    /// Copies a directory tree (e.g. a folder under `testdata/` or `examples/`) into the work tree.
    pub fn copy_dir(&self, from: &Path, to_relative: &str) -> &Self {
        crate::files::copy_dir(from, &self.path().join(to_relative));
        self
    }

    /// Stages everything and commits; returns the new commit's SHA.
    pub fn commit(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.head()
    }

    /// The SHA of `HEAD`.
    pub fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"]).trim().to_string()
    }

    /// Runs `git` in the work tree (see [`run_git`]).
    pub fn git(&self, args: &[&str]) -> String {
        run_git(self.path(), args)
    }
}

/// Runs `git` in `dir` with a fixed identity and no user or system config; returns its stdout and panics with its
/// stderr on failure.
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

impl Default for GitFixture {
    fn default() -> Self {
        Self::new()
    }
}
