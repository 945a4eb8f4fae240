//! Fleet's root-only load restriction: every file a kustomization names resolves inside its directory.

use crate::error::{Error, Result};
use crate::files;

/// Resolves `entry` against `dir`, refusing paths outside `dir` (Fleet's root-only load restriction).
pub(crate) fn resolve_in_root(dir: &str, kfile: &str, field: &str, entry: &str) -> Result<String> {
    let outside = || Error::OutsideRoot {
        file: kfile.into(),
        field: field.into(),
        entry: entry.into(),
        root: files::display(dir).into(),
    };
    let path = files::join(dir, entry).ok_or_else(outside)?;
    if !files::is_within(dir, &path) {
        return Err(outside());
    }
    Ok(path)
}
