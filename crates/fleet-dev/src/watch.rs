//! Debounced file watching with notify: changes under a path that pass a filter are collected until the
//! path has been quiet for the debounce time, then one action runs (commit a snapshot, trigger a GitRepo).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;

use crate::error::{Error, Result};
use crate::task::Task;

/// What runs after a quiet period.
pub type Action = Arc<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>;

/// Which changed paths count.
pub type Filter = Arc<dyn Fn(&Path) -> bool + Send + Sync>;

/// A running watch; dropping it stops watching.
pub struct DebouncedWatch {
    _watcher: RecommendedWatcher,
    _task: Task,
}

/// Watches `path` recursively; after changes accepted by `filter` and `debounce` without further ones,
/// runs `action` (never two at once).
pub fn watch(
    path: &Path,
    debounce: Duration,
    filter: Filter,
    action: Action,
) -> Result<DebouncedWatch> {
    let (tx, mut rx) = mpsc::unbounded_channel::<()>();
    let watched: PathBuf = path.to_path_buf();
    let mut watcher =
        notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
            Ok(event) if event.kind.is_access() => {}
            Ok(event) => {
                if event.paths.iter().any(|p| filter(p)) {
                    let _ = tx.send(());
                }
            }
            Err(err) => tracing::warn!(error = %err, "file watch error"),
        })
        .map_err(|source| Error::Watch {
            path: watched.clone(),
            source,
        })?;
    watcher
        .watch(path, RecursiveMode::Recursive)
        .map_err(|source| Error::Watch {
            path: watched.clone(),
            source,
        })?;
    let task = Task::spawn(async move {
        while rx.recv().await.is_some() {
            // Wait until nothing changed for `debounce`.
            while let Ok(Some(())) = tokio::time::timeout(debounce, rx.recv()).await {}
            action().await;
        }
    });
    Ok(DebouncedWatch {
        _watcher: watcher,
        _task: task,
    })
}

/// Whether a path inside a git directory concerns its refs (a commit, push or branch switch moves them).
pub fn is_ref_change(git_dir: &Path, path: &Path) -> bool {
    let Ok(relative) = path.strip_prefix(git_dir) else {
        return false;
    };
    if path.extension().is_some_and(|e| e == "lock") {
        return false;
    }
    let first = relative.components().next();
    matches!(
        first.and_then(|c| c.as_os_str().to_str()),
        Some("refs" | "packed-refs" | "HEAD")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ref_changes_count() {
        let git = Path::new("/r/.git");
        assert!(is_ref_change(git, Path::new("/r/.git/refs/heads/main")));
        assert!(is_ref_change(git, Path::new("/r/.git/packed-refs")));
        assert!(is_ref_change(git, Path::new("/r/.git/HEAD")));
        assert!(!is_ref_change(
            git,
            Path::new("/r/.git/refs/heads/main.lock")
        ));
        assert!(!is_ref_change(git, Path::new("/r/.git/objects/ab/cdef")));
        assert!(!is_ref_change(git, Path::new("/r/src/main.rs")));
    }
}
