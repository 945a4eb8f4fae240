//! Which directories become bundles, as Fleet's `fleet apply` decides: each GitRepo path is a glob of
//! directories; its root is a bundle when it has a `fleet.yaml` or holds YAML not claimed by a nested
//! `fleet.yaml`; every subdirectory with a `fleet.yaml` is a bundle of its own. Hidden entries (`.git`
//! included) are skipped. A driven scan (`bundles:`) lists bundle directories explicitly instead.

use crate::error::ReadError;
use crate::fleetyaml::{FLEET_YAML, FLEET_YML};
use crate::glob;
use crate::tree::{EntryKind, FileTree, TreePath};

/// One bundle to read: its directory and, for driven scans, the options file to use instead of `fleet.yaml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleLocation {
    pub dir: TreePath,
    /// Options file relative to `dir` (driven scan); `None` means `fleet.yaml`/`fleet.yml` if present.
    pub options_file: Option<String>,
}

/// The path list Fleet uses when none is given.
pub fn default_paths() -> Vec<String> {
    vec![".".to_string()]
}

/// Recursive discovery under each path glob, in walk order (sorted, depth first).
pub fn discover(tree: &dyn FileTree, paths: &[String]) -> Result<Vec<BundleLocation>, ReadError> {
    let mut found = Vec::new();
    for pattern in paths {
        let matches = glob::glob_dirs(tree, pattern.trim_start_matches('/')).map_err(|source| {
            ReadError::PathGlob {
                pattern: pattern.clone(),
                source,
            }
        })?;
        for base in matches {
            if has_fleet_yaml(tree, &base)? || has_unclaimed_yaml(tree, &base)? {
                found.push(BundleLocation {
                    dir: base.clone(),
                    options_file: None,
                });
            }
            walk_subdirs(tree, &base, &mut found)?;
        }
    }
    Ok(found)
}

fn walk_subdirs(
    tree: &dyn FileTree,
    dir: &TreePath,
    found: &mut Vec<BundleLocation>,
) -> Result<(), ReadError> {
    for entry in tree.list_dir(dir)? {
        if entry.kind != EntryKind::Dir || entry.name.starts_with('.') {
            continue;
        }
        let child = dir.child(&entry.name);
        if has_fleet_yaml(tree, &child)? {
            found.push(BundleLocation {
                dir: child.clone(),
                options_file: None,
            });
        }
        walk_subdirs(tree, &child, found)?;
    }
    Ok(())
}

fn has_fleet_yaml(tree: &dyn FileTree, dir: &TreePath) -> Result<bool, ReadError> {
    Ok(find_fleet_yaml(tree, dir)?.is_some())
}

/// The options file of a directory: `fleet.yaml`, else `fleet.yml`.
pub fn find_fleet_yaml(tree: &dyn FileTree, dir: &TreePath) -> Result<Option<TreePath>, ReadError> {
    for name in [FLEET_YAML, FLEET_YML] {
        let path = dir.child(name);
        if let Some(entry) = tree.entry(&path)?
            && entry.kind != EntryKind::Dir
        {
            return Ok(Some(path));
        }
    }
    Ok(None)
}

/// Fleet's `hasSubDirectoryWithResourcesAndWithoutFleetYaml`: `dir` (with no `fleet.yaml`) or a descendant
/// reached without crossing a `fleet.yaml` holds a `.yaml`/`.yml` file.
fn has_unclaimed_yaml(tree: &dyn FileTree, dir: &TreePath) -> Result<bool, ReadError> {
    if has_fleet_yaml(tree, dir)? {
        return Ok(false);
    }
    for entry in tree.list_dir(dir)? {
        if entry.name.starts_with('.') {
            continue;
        }
        match entry.kind {
            EntryKind::Dir => {
                if has_unclaimed_yaml(tree, &dir.child(&entry.name))? {
                    return Ok(true);
                }
            }
            _ => {
                if entry.name.ends_with(".yaml") || entry.name.ends_with(".yml") {
                    return Ok(true);
                }
            }
        }
    }
    Ok(false)
}

/// Driven scan: each entry is `base` or `base<sep>options`; no recursion.
pub fn driven(paths: &[String], separator: &str) -> Result<Vec<BundleLocation>, ReadError> {
    paths
        .iter()
        .map(|path| {
            let parts: Vec<&str> = if separator.is_empty() {
                vec![path]
            } else {
                path.split(separator).collect()
            };
            match parts.as_slice() {
                [base] => driven_location(base, None),
                [base, options] => driven_location(base, Some(options)),
                _ => Err(ReadError::InvalidDrivenPath { path: path.clone() }),
            }
        })
        .collect()
}

/// One driven-scan bundle: directory `base` (from the repository root) with `options`, an options file
/// relative to `base` used instead of its `fleet.yaml` (none, or empty, means `fleet.yaml`/`fleet.yml`).
/// A GitRepo's `spec.bundles` entries come here as they are; `fleet apply --driven-scan` splits its
/// `base<sep>options` arguments first ([`driven`]).
pub fn driven_location(base: &str, options: Option<&str>) -> Result<BundleLocation, ReadError> {
    let dir =
        TreePath::new(base.trim_start_matches('/')).ok_or_else(|| ReadError::PathOutsideRoot {
            path: base.to_string(),
        })?;
    Ok(BundleLocation {
        dir,
        options_file: options.filter(|o| !o.is_empty()).map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::MemoryTree;

    fn dirs(found: &[BundleLocation]) -> Vec<String> {
        found.iter().map(|l| l.dir.to_string()).collect()
    }

    #[test]
    fn root_and_nested_bundles() {
        let mut tree = MemoryTree::new();
        tree.add_file("cm.yaml", "")
            .add_file("app/fleet.yaml", "")
            .add_file("app/deep/fleet.yml", "")
            .add_file(".git/x/fleet.yaml", "")
            .add_file(".hidden/fleet.yaml", "");
        assert_eq!(
            dirs(&discover(&tree, &default_paths()).unwrap()),
            [".", "app", "app/deep"]
        );
    }

    #[test]
    fn root_without_unclaimed_yaml_is_not_a_bundle() {
        let mut tree = MemoryTree::new();
        tree.add_file("README.md", "")
            .add_file("a/fleet.yaml", "")
            .add_file("a/x.yaml", "");
        assert_eq!(dirs(&discover(&tree, &default_paths()).unwrap()), ["a"]);
        tree.add_file("plain/y.yml", "");
        assert_eq!(
            dirs(&discover(&tree, &default_paths()).unwrap()),
            [".", "a"]
        );
    }

    #[test]
    fn globs_select_bases() {
        let mut tree = MemoryTree::new();
        tree.add_file("apps/one/a.yaml", "")
            .add_file("apps/two/b.yaml", "")
            .add_file("infra/c.yaml", "");
        assert_eq!(
            dirs(&discover(&tree, &["/apps/*".into()]).unwrap()),
            ["apps/one", "apps/two"]
        );
    }

    #[test]
    fn driven_entries() {
        let found = driven(&["a/b".into(), "c:opts/x.yaml".into()], ":").unwrap();
        assert_eq!(
            found[0],
            BundleLocation {
                dir: TreePath::new("a/b").unwrap(),
                options_file: None
            }
        );
        assert_eq!(found[1].options_file.as_deref(), Some("opts/x.yaml"));
        assert_eq!(
            driven(&["a:b:c".into()], ":").unwrap_err().to_string(),
            "invalid bundle path: \"a:b:c\""
        );
    }
}
