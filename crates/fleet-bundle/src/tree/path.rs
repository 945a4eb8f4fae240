//! `TreePath`: a normalised, relative, `/`-separated path inside a [`FileTree`](super::FileTree).

use std::fmt;

/// A path relative to a tree's root with no `.`/`..` components, no leading or trailing `/`, and no empty
/// segments. The root itself is the empty path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TreePath(String);

impl TreePath {
    /// The tree's root.
    pub fn root() -> Self {
        Self(String::new())
    }

    /// Normalises `path` (accepting `./`, duplicate and leading `/`, and `..` that stays inside the tree).
    /// Returns `None` when `..` would leave the root.
    pub fn new(path: &str) -> Option<Self> {
        Self::root().join_relative(path)
    }

    /// `self` joined with a relative path that may contain `.` and `..`; `None` if it climbs above the root.
    pub fn join_relative(&self, relative: &str) -> Option<Self> {
        let mut segments: Vec<&str> = self.segments().collect();
        for segment in relative.split('/') {
            match segment {
                "" | "." => {}
                ".." => {
                    segments.pop()?;
                }
                other => segments.push(other),
            }
        }
        Some(Self(segments.join("/")))
    }

    /// `self/name` for a single entry name.
    pub fn child(&self, name: &str) -> Self {
        if self.0.is_empty() {
            Self(name.to_string())
        } else {
            Self(format!("{}/{name}", self.0))
        }
    }

    /// The containing directory (the root's parent is the root).
    pub fn parent(&self) -> Self {
        match self.0.rfind('/') {
            Some(index) => Self(self.0[..index].to_string()),
            None => Self::root(),
        }
    }

    /// The last segment, or `""` for the root.
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or("")
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.0.split('/').filter(|segment| !segment.is_empty())
    }

    /// Whether `self` is `prefix` or lies under it.
    pub fn starts_with(&self, prefix: &TreePath) -> bool {
        prefix.0.is_empty()
            || self.0 == prefix.0
            || (self.0.starts_with(&prefix.0)
                && self.0.as_bytes().get(prefix.0.len()) == Some(&b'/'))
    }

    /// `self` relative to `prefix` (which must be a prefix), as a `/`-separated string; `""` when equal.
    pub fn strip_prefix(&self, prefix: &TreePath) -> Option<&str> {
        if !self.starts_with(prefix) {
            return None;
        }
        if prefix.0.is_empty() {
            return Some(&self.0);
        }
        Some(self.0[prefix.0.len()..].trim_start_matches('/'))
    }

    /// The path as users see it in messages: `.` for the root.
    pub fn display_root(&self) -> String {
        if self.0.is_empty() {
            ".".to_string()
        } else {
            self.0.clone()
        }
    }
}

impl fmt::Display for TreePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display_root())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises() {
        assert_eq!(TreePath::new("./a//b/../c/").unwrap().as_str(), "a/c");
        assert_eq!(TreePath::new("/a").unwrap().as_str(), "a");
        assert!(TreePath::new("a/../../b").is_none());
        assert!(TreePath::new(".").unwrap().is_root());
    }

    #[test]
    fn prefixes_respect_segment_boundaries() {
        let ab = TreePath::new("a/b").unwrap();
        assert!(ab.starts_with(&TreePath::new("a").unwrap()));
        assert!(
            !TreePath::new("ab/c")
                .unwrap()
                .starts_with(&TreePath::new("a").unwrap())
        );
        assert_eq!(ab.strip_prefix(&TreePath::new("a").unwrap()), Some("b"));
        assert_eq!(ab.strip_prefix(&TreePath::root()), Some("a/b"));
        assert_eq!(ab.parent().as_str(), "a");
        assert_eq!(ab.file_name(), "b");
    }
}
