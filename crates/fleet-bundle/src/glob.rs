//! Go's `filepath.Match` and `filepath.Glob` semantics over a [`FileTree`]: `*`, `?`, `[...]` classes with
//! ranges and `^` negation, and `\` escapes; no `**`, no braces. Used for GitRepo `paths` and `.fleetignore`.

use crate::tree::{EntryKind, FileTree, TreeError, TreePath};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("syntax error in pattern {pattern:?}")]
pub struct BadPattern {
    pub pattern: String,
}

/// Whether `name` matches the shell pattern `pattern` (Go `filepath.Match`; `/` is never matched by a wildcard).
pub fn matches(pattern: &str, name: &str) -> Result<bool, BadPattern> {
    let bad = || BadPattern {
        pattern: pattern.to_string(),
    };
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    validate(&pattern).ok_or_else(bad)?;
    Ok(match_from(&pattern, &name))
}

/// Checks the whole pattern's syntax so that errors do not depend on the name being matched.
fn validate(pattern: &[char]) -> Option<()> {
    let mut i = 0;
    while i < pattern.len() {
        match pattern[i] {
            '\\' => {
                pattern.get(i + 1)?;
                i += 2;
            }
            '[' => {
                let (_, next) = parse_class(pattern, i, '\0')?;
                i = next;
            }
            _ => i += 1,
        }
    }
    Some(())
}

fn match_from(pattern: &[char], name: &[char]) -> bool {
    let Some((&first, rest)) = pattern.split_first() else {
        return name.is_empty();
    };
    match first {
        '*' => (0..=name.len())
            .take_while(|&skip| skip == 0 || name[skip - 1] != '/')
            .any(|skip| match_from(rest, &name[skip..])),
        '?' => matches!(name.first(), Some(&c) if c != '/') && match_from(rest, &name[1..]),
        '[' => {
            let Some(&c) = name.first() else { return false };
            match parse_class(pattern, 0, c) {
                Some((true, next)) if c != '/' => match_from(&pattern[next..], &name[1..]),
                _ => false,
            }
        }
        '\\' => pattern.get(1) == name.first() && match_from(&pattern[2..], &name[1..]),
        literal => name.first() == Some(&literal) && match_from(rest, &name[1..]),
    }
}

/// Parses the class starting at `pattern[start] == '['`; returns whether `c` is in it and the index after `]`.
fn parse_class(pattern: &[char], start: usize, c: char) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negated = pattern.get(i) == Some(&'^');
    if negated {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let ch = *pattern.get(i)?;
        if ch == ']' && !first {
            return Some((matched != negated, i + 1));
        }
        first = false;
        let (lo, after_lo) = class_char(pattern, i)?;
        let (hi, after) =
            if pattern.get(after_lo) == Some(&'-') && pattern.get(after_lo + 1) != Some(&']') {
                class_char(pattern, after_lo + 1)?
            } else {
                (lo, after_lo)
            };
        if lo <= c && c <= hi {
            matched = true;
        }
        i = after;
    }
}

fn class_char(pattern: &[char], i: usize) -> Option<(char, usize)> {
    match *pattern.get(i)? {
        '\\' => Some((*pattern.get(i + 1)?, i + 2)),
        '-' | ']' => None,
        ch => Some((ch, i + 1)),
    }
}

fn has_meta(segment: &str) -> bool {
    segment.contains(['*', '?', '[', '\\'])
}

/// Go `filepath.Glob` over a tree: every existing path matching `pattern`, sorted, keeping only directories
/// (as Fleet's `globDirs` does). Symlinks are not followed.
pub fn glob_dirs(tree: &dyn FileTree, pattern: &str) -> Result<Vec<TreePath>, GlobError> {
    let mut current = vec![TreePath::root()];
    for segment in pattern.split('/').filter(|s| !s.is_empty() && *s != ".") {
        let mut next = Vec::new();
        for dir in &current {
            if segment == ".." {
                if let Some(parent) = dir.join_relative("..") {
                    next.push(parent);
                }
            } else if has_meta(segment) {
                let entries = match tree.list_dir(dir) {
                    Ok(entries) => entries,
                    Err(TreeError::NotFound { .. } | TreeError::NotADirectory { .. }) => continue,
                    Err(err) => return Err(err.into()),
                };
                for entry in entries {
                    if matches(segment, &entry.name)? {
                        next.push(dir.child(&entry.name));
                    }
                }
            } else {
                next.push(dir.child(segment));
            }
        }
        current = next;
    }
    let mut dirs = Vec::new();
    for path in current {
        if let Some(entry) = tree.entry(&path)?
            && entry.kind == EntryKind::Dir
        {
            dirs.push(path);
        }
    }
    dirs.sort();
    dirs.dedup();
    Ok(dirs)
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GlobError {
    #[error(transparent)]
    Pattern(#[from] BadPattern),
    #[error(transparent)]
    Tree(#[from] TreeError),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::MemoryTree;

    #[test]
    fn go_match_cases() {
        let cases = [
            ("abc", "abc", true),
            ("*", "abc", true),
            ("*c", "abc", true),
            ("a*", "a", true),
            ("a*/b", "abc/b", true),
            ("a*/b", "a/c/b", false),
            ("a*b*c*d*e*/f", "axbxcxdxe/f", true),
            ("ab[c]", "abc", true),
            ("ab[b-d]", "abc", true),
            ("ab[e-g]", "abc", false),
            ("ab[^c]", "abc", false),
            ("ab[^e-g]", "abc", true),
            ("a\\*b", "a*b", true),
            ("a\\*b", "ab", false),
            ("a?b", "a☺b", true),
            ("a?b", "a/b", false),
            ("*.yaml", ".hidden.yaml", true),
            ("[\\-]", "-", true),
        ];
        for (pattern, name, expected) in cases {
            assert_eq!(
                matches(pattern, name),
                Ok(expected),
                "{pattern:?} vs {name:?}"
            );
        }
    }

    #[test]
    fn bad_patterns_error() {
        for pattern in ["[", "a[", "[]a]x", "[-]", "a\\", "[x-]"] {
            assert!(
                matches(pattern, "x").is_err(),
                "{pattern:?} should be rejected"
            );
        }
    }

    #[test]
    fn glob_keeps_directories_only() {
        let mut tree = MemoryTree::new();
        tree.add_file("apps/one/a.yaml", "")
            .add_file("apps/two/b.yaml", "")
            .add_file("apps/file.yaml", "")
            .add_file("other/c.yaml", "");
        let found = glob_dirs(&tree, "/apps/*").unwrap();
        let found: Vec<_> = found.iter().map(TreePath::as_str).collect();
        assert_eq!(found, ["apps/one", "apps/two"]);
        assert_eq!(glob_dirs(&tree, ".").unwrap(), vec![TreePath::root()]);
        assert!(glob_dirs(&tree, "missing/*").unwrap().is_empty());
        assert!(glob_dirs(&tree, "apps/[").is_err());
    }
}
