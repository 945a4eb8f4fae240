//! Shared by the golden test and the bench: reading a fixture directory of `testdata/kustomize` into memory.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `testdata/kustomize`.
pub fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/kustomize")
}

/// One fixture: its name, input files, the directory to build, and kubectl's result.
pub struct Fixture {
    pub name: String,
    pub dir: PathBuf,
    pub files: BTreeMap<String, Vec<u8>>,
    pub build_dir: String,
    pub expected: Option<String>,
    pub expected_err: Option<String>,
    /// Fleet's helm-kustomize layout: the chart directory (relative to the input) whose `helm template` output is
    /// post-rendered by the kustomization in `build_dir`.
    pub helm_chart: Option<String>,
}

fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read fixture dir")
        .flatten()
        .collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            walk(base, &p, out);
        } else {
            let rel = p
                .strip_prefix(base)
                .expect("under base")
                .to_string_lossy()
                .replace('\\', "/");
            out.insert(rel, std::fs::read(&p).expect("read fixture file"));
        }
    }
}

/// Every fixture, sorted by name.
pub fn fixtures() -> Vec<Fixture> {
    let mut dirs: Vec<_> = std::fs::read_dir(fixtures_root())
        .expect("testdata/kustomize exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|dir| {
            let mut files = BTreeMap::new();
            walk(&dir.join("input"), &dir.join("input"), &mut files);
            let build_dir =
                std::fs::read_to_string(dir.join("build-dir")).unwrap_or_else(|_| ".".into());
            let build_dir = build_dir.trim();
            Fixture {
                name: dir
                    .file_name()
                    .expect("name")
                    .to_string_lossy()
                    .into_owned(),
                files,
                build_dir: if build_dir == "." {
                    String::new()
                } else {
                    build_dir.to_string()
                },
                expected: std::fs::read_to_string(dir.join("expected.yaml")).ok(),
                expected_err: std::fs::read_to_string(dir.join("expected.err")).ok(),
                helm_chart: std::fs::read_to_string(dir.join("helm-chart"))
                    .ok()
                    .map(|c| c.trim().to_string()),
                dir,
            }
        })
        .collect()
}
