//! `.fleetignore` as Fleet reads it: one `filepath.Match` pattern per line matched against an entry's base
//! name; `#` comments; trailing whitespace trimmed unless escaped; `dir/*` ignores a directory named `dir`.
//! Patterns apply to the directory holding the file and everything below it, never to siblings.

use crate::glob::{self, BadPattern};

/// The name of the ignore file.
pub const FLEETIGNORE: &str = ".fleetignore";

/// The patterns in force for one directory: its own and its ancestors' (up to the bundle root).
#[derive(Debug, Clone, Default)]
pub struct IgnoreRules {
    patterns: Vec<String>,
}

impl IgnoreRules {
    /// The rules for a subdirectory: these plus the patterns in its `.fleetignore` (if any).
    pub fn extended(&self, fleetignore: &str) -> Self {
        let mut patterns = self.patterns.clone();
        patterns.extend(parse(fleetignore));
        Self { patterns }
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether the entry called `name` (a base name) is ignored.
    pub fn is_ignored(&self, name: &str, is_dir: bool) -> Result<bool, BadPattern> {
        for pattern in &self.patterns {
            if let Some(dir_name) = directory_pattern(pattern) {
                if is_dir && dir_name == name {
                    return Ok(true);
                }
            } else if glob::matches(pattern, name)? {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// `dir/*` (anything non-empty before `/*`) names a directory to skip: returns that prefix.
fn directory_pattern(pattern: &str) -> Option<&str> {
    let index = pattern.find("/*")?;
    (index > 0).then(|| &pattern[..index])
}

/// The patterns of one `.fleetignore` file.
pub fn parse(content: &str) -> Vec<String> {
    content
        .lines()
        .map(trim_unescaped_trailing_space)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_string)
        .collect()
}

fn trim_unescaped_trailing_space(line: &str) -> &str {
    let trimmed = line.trim_end();
    if trimmed.len() < line.len() && trimmed.ends_with('\\') {
        // The escaped space survives; Fleet keeps the backslash too, which `Match` then reads as an escape.
        let keep = trimmed.len()
            + line[trimmed.len()..]
                .chars()
                .next()
                .map_or(0, char::len_utf8);
        return &line[..keep];
    }
    if trimmed.is_empty() && !line.is_empty() {
        // Fleet's regex needs a non-space before the run it trims: an all-space line is left as it is.
        return line;
    }
    trimmed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(content: &str) -> IgnoreRules {
        IgnoreRules::default().extended(content)
    }

    #[test]
    fn comments_blank_lines_and_trailing_spaces() {
        assert_eq!(
            parse("# comment\n\nsomething.yaml   \n\\#notcomment\nescaped\\ \n"),
            ["something.yaml", "\\#notcomment", "escaped\\ "]
        );
        let r = rules("\\#notcomment\nescaped\\ \n");
        assert!(r.is_ignored("#notcomment", false).unwrap());
        assert!(r.is_ignored("escaped ", false).unwrap());
        assert!(!r.is_ignored("escaped", false).unwrap());
    }

    #[test]
    fn globs_match_base_names() {
        let r = rules("*.txt\nsecret?.yaml\n");
        assert!(r.is_ignored("notes.txt", false).unwrap());
        assert!(r.is_ignored("secret1.yaml", false).unwrap());
        assert!(!r.is_ignored("secret10.yaml", false).unwrap());
        assert!(!r.is_ignored("config.yaml", false).unwrap());
    }

    #[test]
    fn dir_star_ignores_directories_only() {
        let r = rules("tmp/*\n");
        assert!(r.is_ignored("tmp", true).unwrap());
        assert!(!r.is_ignored("tmp", false).unwrap());
    }

    #[test]
    fn rules_inherit_downwards() {
        let parent = rules("a.yaml\n");
        let child = parent.extended("b.yaml\n");
        assert!(child.is_ignored("a.yaml", false).unwrap());
        assert!(child.is_ignored("b.yaml", false).unwrap());
        assert!(!parent.is_ignored("b.yaml", false).unwrap());
    }

    #[test]
    fn bad_pattern_is_an_error() {
        assert!(rules("[\n").is_ignored("x", false).is_err());
    }
}
