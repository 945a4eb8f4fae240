//! Compares our JSON patch, merge patch and strategic merge patch with what the real kubectl v1.34 produced for
//! every case under `testdata/patch/` (goldens made by `scripts/patch-goldens.sh`; tests never call kubectl).
//! Objects compare as JSON values: kubectl prints members sorted, we keep the original's order (see
//! `fleet_yaml::patch::strategic`), and list order must match exactly.

use std::fs;
use std::path::{Path, PathBuf};

use fleet_yaml::patch::{PatchError, json_patch, merge_patch, strategic};
use serde_json::Value;

/// Every case must be covered; a golden set shrinking below this is a test failure, not a silent pass.
const MINIMUM_CASES: usize = 30;

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/patch")
}

fn read_yaml(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn run_case(dir: &Path) -> Result<Value, PatchError> {
    let kind = fs::read_to_string(dir.join("type")).expect("type file");
    let object = read_yaml(&dir.join("object.yaml"));
    let patch = read_yaml(&dir.join("patch.yaml"));
    match kind.trim() {
        "strategic" => strategic::apply_to_object(&object, &patch),
        "kustomize" => strategic::kustomize::apply_to_object(&object, &patch)
            .map(|patched| patched.unwrap_or(Value::Null)),
        "merge" => {
            let mut doc = object;
            merge_patch::apply(&mut doc, &patch);
            Ok(doc)
        }
        "json" => {
            let mut doc = object;
            json_patch::apply(&mut doc, &patch).map(|()| doc)
        }
        other => panic!("{}: unknown patch type {other:?}", dir.display()),
    }
}

#[test]
fn every_golden_matches_kubectl() {
    let mut dirs: Vec<PathBuf> = fs::read_dir(cases_dir())
        .expect("testdata/patch")
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();
    assert!(
        dirs.len() >= MINIMUM_CASES,
        "only {} golden cases",
        dirs.len()
    );
    let mut failures = Vec::new();
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let expected_json = dir.join("expected.json");
        let expected_error = dir.join("expected-error.txt");
        let outcome = run_case(dir);
        if expected_json.exists() {
            let expected: Value =
                serde_json::from_str(&fs::read_to_string(&expected_json).unwrap()).unwrap();
            match outcome {
                Ok(actual) if actual == expected => {}
                Ok(actual) => failures.push(format!(
                    "{name}: differs from kubectl\n  ours:    {actual}\n  kubectl: {expected}"
                )),
                Err(error) => {
                    failures.push(format!("{name}: we fail where kubectl succeeds: {error}"))
                }
            }
        } else if expected_error.exists() {
            if let Ok(actual) = outcome {
                let kubectl_error = fs::read_to_string(&expected_error).unwrap();
                failures.push(format!(
                    "{name}: we succeed where kubectl fails ({})\n  ours: {actual}",
                    kubectl_error.trim()
                ));
            }
        } else {
            failures.push(format!(
                "{name}: no expected.json or expected-error.txt; run scripts/patch-goldens.sh"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n")
    );
}

#[test]
fn diff_then_apply_reproduces_every_strategic_golden() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for entry in fs::read_dir(cases_dir()).expect("testdata/patch") {
        let dir = entry.expect("directory entry").path();
        let kind = fs::read_to_string(dir.join("type")).unwrap_or_default();
        let expected_json = dir.join("expected.json");
        if kind.trim() != "strategic" || !expected_json.exists() {
            continue;
        }
        let original = read_yaml(&dir.join("object.yaml"));
        let modified: Value =
            serde_json::from_str(&fs::read_to_string(&expected_json).unwrap()).unwrap();
        let api_version = original["apiVersion"].as_str().unwrap_or_default();
        let kind = original["kind"].as_str().unwrap_or_default();
        let schema = strategic::builtin_schema_for(api_version, kind).expect("a built-in kind");
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let outcome = strategic::diff(&original, &modified, schema).and_then(|patch| {
            strategic::apply(&original, &patch, schema).map(|applied| (patch, applied))
        });
        match outcome {
            Ok((_, applied)) if applied == modified => {}
            Ok((patch, applied)) => {
                failures.push(format!("{name}: patch {patch}\n  gives {applied}"))
            }
            Err(error) => failures.push(format!("{name}: {error}")),
        }
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} strategic goldens");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
