//! Test support for fleet-yaml and the crates that read YAML through it (feature `testing`, and fleet-yaml's own
//! tests): the YAML texts a reading test runs over. It reads files, so it is no part of the pure API.

use std::path::Path;

/// Every `.yaml`/`.yml` file, as (path, text), under the workspace's `testdata/` and, when `$FLEET_YAML_CORPUS` is
/// set (e.g. to the Helm chart corpus), under that folder too. Files that are not UTF-8 text are left out.
pub fn yaml_corpus() -> Vec<(String, String)> {
    let mut out = Vec::new();
    yaml_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata"),
        &mut out,
    );
    if let Ok(corpus) = std::env::var("FLEET_YAML_CORPUS") {
        yaml_files(Path::new(&corpus), &mut out);
    }
    out
}

/// Every `.yaml`/`.yml` file under `dir`, recursively.
fn yaml_files(dir: &Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml")
            && let Ok(text) = std::fs::read_to_string(&path)
        {
            out.push((path.display().to_string(), text));
        }
    }
}
