//! The commit checked out in the working directory's git repository, which `fleet apply` records as the
//! `fleet.cattle.io/commit` label when `--commit`/`COMMIT` is not given (as Fleet's CLI does). Reads `.git`
//! directly (plain repositories and worktrees, loose and packed refs); no git binary is run.

use std::fs;
use std::path::{Path, PathBuf};

/// The HEAD commit of the repository containing `start`, or `None` outside a repository or on unborn HEAD.
pub fn head_commit(start: &Path) -> Option<String> {
    let git_dir = find_git_dir(start)?;
    let common_dir = fs::read_to_string(git_dir.join("commondir"))
        .map(|dir| git_dir.join(dir.trim()))
        .unwrap_or_else(|_| git_dir.clone());
    let head = fs::read_to_string(git_dir.join("HEAD")).ok()?;
    let head = head.trim();
    let Some(reference) = head.strip_prefix("ref: ") else {
        return is_sha(head).then(|| head.to_string());
    };
    for dir in [&git_dir, &common_dir] {
        if let Ok(sha) = fs::read_to_string(dir.join(reference)) {
            let sha = sha.trim();
            if is_sha(sha) {
                return Some(sha.to_string());
            }
        }
    }
    let packed = fs::read_to_string(common_dir.join("packed-refs")).ok()?;
    packed.lines().find_map(|line| {
        let (sha, name) = line.split_once(' ')?;
        (name == reference && is_sha(sha)).then(|| sha.to_string())
    })
}

fn is_sha(text: &str) -> bool {
    (text.len() == 40 || text.len() == 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `.git` as a directory, or the directory a `.git` file (`gitdir: …`, worktrees and submodules) points to.
fn find_git_dir(start: &Path) -> Option<PathBuf> {
    for dir in start.ancestors() {
        let candidate = dir.join(".git");
        if candidate.is_dir() {
            return Some(candidate);
        }
        if let Ok(text) = fs::read_to_string(&candidate) {
            let target = text.trim().strip_prefix("gitdir:")?.trim();
            return Some(dir.join(target));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    #[test]
    fn loose_packed_detached_and_worktree_heads() {
        let repo = tempfile::tempdir().unwrap();
        let git = repo.path().join(".git");
        fs::create_dir_all(git.join("refs/heads")).unwrap();
        fs::create_dir_all(repo.path().join("sub/dir")).unwrap();
        fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert_eq!(head_commit(repo.path()), None, "unborn branch");

        fs::write(
            git.join("packed-refs"),
            format!("# pack-refs\n{SHA} refs/heads/main\n"),
        )
        .unwrap();
        assert_eq!(
            head_commit(&repo.path().join("sub/dir")).as_deref(),
            Some(SHA)
        );

        let loose = SHA.replace('0', "f");
        fs::write(git.join("refs/heads/main"), format!("{loose}\n")).unwrap();
        assert_eq!(head_commit(repo.path()), Some(loose));

        fs::write(git.join("HEAD"), format!("{SHA}\n")).unwrap();
        assert_eq!(head_commit(repo.path()).as_deref(), Some(SHA));

        let worktree = tempfile::tempdir().unwrap();
        let wt_git = git.join("worktrees/wt");
        fs::create_dir_all(&wt_git).unwrap();
        fs::write(wt_git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        fs::write(wt_git.join("commondir"), "../..\n").unwrap();
        fs::write(
            worktree.path().join(".git"),
            format!("gitdir: {}\n", wt_git.display()),
        )
        .unwrap();
        assert_eq!(head_commit(worktree.path()), Some(SHA.replace('0', "f")));
    }

    #[test]
    fn outside_a_repository() {
        let dir = tempfile::tempdir().unwrap();
        // A temp dir may sit inside some repository on a developer machine; only assert on a fresh subtree.
        if find_git_dir(dir.path()).is_none() {
            assert_eq!(head_commit(dir.path()), None);
        }
    }
}
