//! The files of one bundle directory turned into `spec.resources`, as Fleet's `GetContent` does: everything
//! under the directory except hidden entries, `.fleetignore` matches, the options file and the Helm values
//! files; symlinks followed only inside the bundle root; non-UTF-8 files (or all files, when compressing)
//! stored `base64+gz`; sorted by name.

use std::io::Write;

use base64::Engine;
use fleet_api::BundleResource;

use crate::error::ReadError;
use crate::ignore::{FLEETIGNORE, IgnoreRules};
use crate::tree::{self, EntryKind, FileTree, TreeError, TreePath};

/// The `encoding` value of compressed resources.
pub const BASE64_GZ: &str = "base64+gz";

/// Deepest directory nesting followed (guards against symlinked directory cycles).
const MAX_DEPTH: usize = 64;

/// A file read from a bundle directory, before encoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleFile {
    /// Path relative to the bundle directory.
    pub name: String,
    pub bytes: Vec<u8>,
}

/// Reads every file of the bundle at `root`, skipping the relative names in `excluded`.
pub fn read_files(
    tree: &dyn FileTree,
    root: &TreePath,
    excluded: &[String],
) -> Result<Vec<BundleFile>, ReadError> {
    let mut files = Vec::new();
    let walker = Walker {
        tree,
        root,
        excluded,
    };
    walker.walk_dir(root, root, &IgnoreRules::default(), 0, &mut files)?;
    files.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(files)
}

struct Walker<'a> {
    tree: &'a dyn FileTree,
    root: &'a TreePath,
    excluded: &'a [String],
}

impl Walker<'_> {
    /// Walks `dir` (the real location) whose files are named as if under `logical` (the path through links).
    fn walk_dir(
        &self,
        dir: &TreePath,
        logical: &TreePath,
        inherited: &IgnoreRules,
        depth: usize,
        files: &mut Vec<BundleFile>,
    ) -> Result<(), ReadError> {
        if depth > MAX_DEPTH {
            return Err(TreeError::SymlinkLoop {
                path: logical.to_string(),
            }
            .into());
        }
        let entries = self.tree.list_dir(dir)?;
        let rules = match entries
            .iter()
            .find(|e| e.name == FLEETIGNORE && e.kind == EntryKind::File)
        {
            Some(_) => {
                let path = dir.child(FLEETIGNORE);
                let text = String::from_utf8_lossy(&self.tree.read_file(&path)?).into_owned();
                inherited.extended(&text)
            }
            None => inherited.clone(),
        };
        let ignore_file = logical.child(FLEETIGNORE).to_string();
        for entry in entries {
            if entry.name.starts_with('.') {
                continue;
            }
            let real = dir.child(&entry.name);
            let named = logical.child(&entry.name);
            let (real, kind) = match &entry.kind {
                EntryKind::Symlink { .. } => {
                    let (target, resolved) = tree::resolve(self.tree, self.root, &real)?;
                    (target, resolved.kind)
                }
                kind => (real, kind.clone()),
            };
            let is_dir = kind == EntryKind::Dir;
            let ignored = rules.is_ignored(&entry.name, is_dir).map_err(|source| {
                ReadError::IgnorePattern {
                    file: ignore_file.clone(),
                    source,
                }
            })?;
            if ignored {
                continue;
            }
            if is_dir {
                self.walk_dir(&real, &named, &rules, depth + 1, files)?;
                continue;
            }
            let name = named
                .strip_prefix(self.root)
                .unwrap_or(named.as_str())
                .to_string();
            if self.excluded.contains(&name) {
                continue;
            }
            let bytes = self.tree.read_file(&real)?;
            files.push(BundleFile { name, bytes });
        }
        Ok(())
    }
}

/// Encodes files as bundle resources: UTF-8 text verbatim unless `compress`, everything else `base64+gz`.
pub fn encode(files: &[BundleFile], compress: bool) -> Vec<BundleResource> {
    files
        .iter()
        .map(|file| match std::str::from_utf8(&file.bytes) {
            Ok(text) if !compress => BundleResource {
                name: file.name.clone(),
                content: text.to_string(),
                encoding: String::new(),
            },
            _ => BundleResource {
                name: file.name.clone(),
                content: base64_gzip(&file.bytes),
                encoding: BASE64_GZ.to_string(),
            },
        })
        .collect()
}

/// Standard base64 of a gzip stream with mtime 0 and OS byte 255, as Go's `compress/gzip` writes headers.
/// (The deflate bytes differ from Go's, so compressed resources do not reproduce Fleet's manifest IDs.)
pub fn base64_gzip(bytes: &[u8]) -> String {
    let mut encoder = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), flate2::Compression::default());
    // Writing into a Vec cannot fail.
    let _ = encoder.write_all(bytes);
    let compressed = encoder.finish().unwrap_or_default();
    base64::engine::general_purpose::STANDARD.encode(compressed)
}

/// Decodes a resource's content to bytes (inverse of [`encode`]).
pub fn decode(resource: &BundleResource) -> Result<Vec<u8>, String> {
    use std::io::Read;
    match resource.encoding.as_str() {
        "" => Ok(resource.content.as_bytes().to_vec()),
        BASE64_GZ => {
            let compressed = base64::engine::general_purpose::STANDARD
                .decode(resource.content.trim())
                .map_err(|err| format!("{}: invalid base64: {err}", resource.name))?;
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(compressed.as_slice())
                .read_to_end(&mut out)
                .map_err(|err| format!("{}: invalid gzip: {err}", resource.name))?;
            Ok(out)
        }
        other => Err(format!("{}: unknown encoding {other:?}", resource.name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::MemoryTree;

    fn names(files: &[BundleFile]) -> Vec<&str> {
        files.iter().map(|f| f.name.as_str()).collect()
    }

    #[test]
    fn reads_everything_but_hidden_ignored_and_excluded() {
        let mut tree = MemoryTree::new();
        tree.add_file("b/fleet.yaml", "")
            .add_file("b/README.md", "hi")
            .add_file("b/cm.yaml", "a: 1")
            .add_file("b/.hidden.yaml", "")
            .add_file("b/.git/config", "")
            .add_file("b/values.yaml", "")
            .add_file("b/sub/x.yaml", "")
            .add_file("b/sub/skip.txt", "")
            .add_file("b/sub/.fleetignore", "*.txt\n")
            .add_file("b/other/skip.txt", "kept: the ignore file is in a sibling")
            .add_file("b/tmp/junk.yaml", "")
            .add_file("b/.fleetignore", "tmp/*\n");
        let files = read_files(
            &tree,
            &TreePath::new("b").unwrap(),
            &["fleet.yaml".into(), "values.yaml".into()],
        )
        .unwrap();
        assert_eq!(
            names(&files),
            ["README.md", "cm.yaml", "other/skip.txt", "sub/x.yaml"]
        );
    }

    #[test]
    fn symlinks_inside_are_followed_and_escapes_rejected() {
        let mut tree = MemoryTree::new();
        tree.add_file("b/real.yaml", "r")
            .add_symlink("b/link.yaml", "real.yaml")
            .add_symlink("b/dir", "sub");
        tree.add_file("b/sub/s.yaml", "s");
        let files = read_files(&tree, &TreePath::new("b").unwrap(), &[]).unwrap();
        assert_eq!(
            names(&files),
            ["dir/s.yaml", "link.yaml", "real.yaml", "sub/s.yaml"]
        );
        assert_eq!(files[1].bytes, b"r");

        tree.add_file("secret.txt", "x")
            .add_symlink("b/escape.yaml", "../secret.txt");
        let err = read_files(&tree, &TreePath::new("b").unwrap(), &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "b/escape.yaml: symlink to \"../secret.txt\" points outside the bundle root \"b\""
        );
    }

    #[test]
    fn non_utf8_is_compressed_and_round_trips() {
        let files = vec![
            BundleFile {
                name: "bin".into(),
                bytes: vec![0xff, 0xfe, 0x00],
            },
            BundleFile {
                name: "text".into(),
                bytes: b"hello".to_vec(),
            },
        ];
        let resources = encode(&files, false);
        assert_eq!(resources[0].encoding, BASE64_GZ);
        assert_eq!(resources[1].encoding, "");
        assert_eq!(decode(&resources[0]).unwrap(), vec![0xff, 0xfe, 0x00]);
        let all = encode(&files, true);
        assert!(all.iter().all(|r| r.encoding == BASE64_GZ));
        assert_eq!(decode(&all[1]).unwrap(), b"hello");
    }

    #[test]
    fn unreadable_file_is_reported() {
        let mut tree = MemoryTree::new();
        tree.add_unreadable("b/locked.yaml", "permission denied");
        let err = read_files(&tree, &TreePath::new("b").unwrap(), &[]).unwrap_err();
        assert_eq!(err.to_string(), "b/locked.yaml: permission denied");
    }
}
