//! The input of a build: an abstract, read-only tree of files addressed by slash-separated relative paths, and
//! the path arithmetic (joining, normalizing, staying inside the tree) every loader step uses.

use std::borrow::Cow;
use std::collections::BTreeMap;

/// A read-only file tree. Paths are relative to the tree root, use `/`, and never start with `/` or contain
/// `.`/`..` segments (the build normalizes them before asking). The root directory is `""`.
pub trait Files {
    /// The bytes of the regular file at `path`, or `None` when there is no such file.
    fn read(&self, path: &str) -> Option<Cow<'_, [u8]>>;
    /// Whether `path` is a directory (holds at least one file, directly or below).
    fn is_dir(&self, path: &str) -> bool;
    /// Every file below directory `dir` (recursively), as paths from the tree root, sorted. Used to hand a local
    /// Helm chart to the Helm engine.
    fn list(&self, dir: &str) -> Vec<String>;
}

impl Files for BTreeMap<String, Vec<u8>> {
    fn read(&self, path: &str) -> Option<Cow<'_, [u8]>> {
        self.get(path).map(|b| Cow::Borrowed(b.as_slice()))
    }

    fn is_dir(&self, path: &str) -> bool {
        if path.is_empty() {
            return !self.is_empty();
        }
        let prefix = format!("{path}/");
        self.range(prefix.clone()..)
            .next()
            .is_some_and(|(k, _)| k.starts_with(&prefix))
    }

    fn list(&self, dir: &str) -> Vec<String> {
        if dir.is_empty() {
            return self.keys().cloned().collect();
        }
        let prefix = format!("{dir}/");
        self.range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(k, _)| k.clone())
            .collect()
    }
}

impl<F: Files + ?Sized> Files for &F {
    fn read(&self, path: &str) -> Option<Cow<'_, [u8]>> {
        (**self).read(path)
    }

    fn is_dir(&self, path: &str) -> bool {
        (**self).is_dir(path)
    }

    fn list(&self, dir: &str) -> Vec<String> {
        (**self).list(dir)
    }
}

/// A tree from `(path, text)` pairs — handy for small in-memory kustomizations (tests, generated inputs).
pub fn from_texts(pairs: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
    pairs
        .iter()
        .map(|(p, c)| (p.to_string(), c.as_bytes().to_vec()))
        .collect()
}

/// Joins `rel` onto directory `dir` and normalizes the result. `None` when the result would leave the tree
/// (too many `..`) or `rel` is absolute.
pub(crate) fn join(dir: &str, rel: &str) -> Option<String> {
    if rel.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = dir
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// Whether `path` is `dir` itself or below it.
pub(crate) fn is_within(dir: &str, path: &str) -> bool {
    dir.is_empty() || path == dir || path.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

/// The last segment of a path.
pub(crate) fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `path` for messages: the root is shown as `.`.
pub(crate) fn display(path: &str) -> &str {
    if path.is_empty() { "." } else { path }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_normalizes_and_refuses_to_escape() {
        assert_eq!(join("a/b", "../c/./d.yaml").as_deref(), Some("a/c/d.yaml"));
        assert_eq!(join("", "x").as_deref(), Some("x"));
        assert_eq!(join("a", "../..").as_deref(), None);
        assert_eq!(join("a", "/etc/passwd"), None);
    }

    #[test]
    fn map_tree_knows_directories() {
        let mut m = BTreeMap::new();
        m.insert("base/kustomization.yaml".to_string(), b"x".to_vec());
        m.insert("base2.yaml".to_string(), b"x".to_vec());
        assert!(m.is_dir("base"));
        assert!(m.is_dir(""));
        assert!(!m.is_dir("bas"));
        assert!(!m.is_dir("base/kustomization.yaml"));
        assert_eq!(m.list("base"), ["base/kustomization.yaml"]);
        assert_eq!(m.list("").len(), 2);
        assert!(is_within("base", "base/x"));
        assert!(!is_within("base", "base2.yaml"));
    }
}
