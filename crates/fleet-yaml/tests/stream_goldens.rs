//! Resource streams against `kubectl kustomize` (`testdata/yaml/stream/`): each resource we print is byte-for-byte
//! the document kustomize printed for it. (kustomize also reorders resources by kind; that is its business, so
//! documents are matched by kind and name.)

mod common;

use std::fs;
use std::path::Path;

use common::{difference, report};
use fleet_yaml::emit::kyaml;
use fleet_yaml::parse::{self, Options};
use serde_json::Value;

fn identity(value: &Value) -> String {
    format!(
        "{}/{}",
        value["kind"].as_str().unwrap_or(""),
        value["metadata"]["name"].as_str().unwrap_or("")
    )
}

#[test]
fn kyaml_prints_every_resource_as_kubectl_kustomize() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/yaml/stream");
    let mut compared = 0;
    let mut failures = Vec::new();
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        let text = fs::read_to_string(&path).unwrap();
        let golden = fs::read_to_string(dir.join("kustomize").join(&file)).unwrap();
        let ours = parse::documents_with(&Options::kustomize(), &text, &file).unwrap();
        let theirs: Vec<&str> = golden.split("\n---\n").collect();
        assert_eq!(ours.len(), theirs.len(), "{file}: resource count");
        for document in theirs {
            let document = format!("{}\n", document.trim_end_matches('\n'));
            let their_value = parse::documents_with(&Options::kustomize(), &document, &file)
                .unwrap()
                .remove(0);
            let id = identity(&their_value);
            let mine = ours
                .iter()
                .find(|v| identity(v) == id)
                .unwrap_or_else(|| panic!("{file}: no {id} in ours"));
            failures.extend(difference(
                &format!("{file} {id}"),
                &kyaml::to_yaml(mine),
                &document,
            ));
            compared += 1;
        }
    }
    assert!(compared >= 5, "compared {compared} resources");
    report(&failures);
}
