//! Our emitters against goldens made by the real `helm` and `kubectl kustomize` (`scripts/yaml-goldens.sh`):
//! every input under `testdata/yaml/emit/` must come out byte-for-byte as the Go tools printed it.

use std::fs;
use std::path::{Path, PathBuf};

use fleet_yaml::emit::{helm, kyaml};
use fleet_yaml::parse::{self, Options};
use serde_json::{Map, Value};

fn emit_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/yaml/emit")
}

/// The inputs, as (name, file name, text).
fn inputs() -> Vec<(String, String, String)> {
    let mut inputs: Vec<_> = fs::read_dir(emit_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.is_file()
                && matches!(
                    p.extension().and_then(|e| e.to_str()),
                    Some("yaml" | "json")
                )
        })
        .map(|p| {
            let file = p.file_name().unwrap().to_string_lossy().to_string();
            let name = p.file_stem().unwrap().to_string_lossy().to_string();
            (name, file, fs::read_to_string(&p).unwrap())
        })
        .collect();
    inputs.sort();
    assert!(
        inputs.len() >= 9,
        "expected the emit inputs, found {}",
        inputs.len()
    );
    inputs
}

/// Helm reads values through JSON into Go `interface{}`: every number becomes a float64.
fn as_helm_values(value: Value) -> Value {
    match value {
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Value::Array(items) => Value::Array(items.into_iter().map(as_helm_values).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, as_helm_values(v)))
                .collect(),
        ),
        other => other,
    }
}

fn first_document(text: &str, origin: &str, options: &Options) -> Value {
    parse::documents_with(options, text, origin)
        .unwrap()
        .into_iter()
        .next()
        .unwrap_or(Value::Object(Map::new()))
}

fn report(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} golden(s) differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn helm_to_yaml_matches_every_helm_golden() {
    let mut failures = Vec::new();
    for (name, file, text) in inputs() {
        let golden_path = emit_dir().join("helm").join(format!("{name}.yaml"));
        let golden = fs::read_to_string(&golden_path)
            .unwrap_or_else(|_| panic!("missing golden {golden_path:?}"));
        let values = as_helm_values(first_document(&text, &file, &Options::default()));
        let ours = helm::to_yaml(&values);
        if ours != golden {
            failures.push(format!("--- {file}\n[ours]\n{ours}\n[helm]\n{golden}"));
        }
    }
    report(&failures);
}

#[test]
fn kyaml_matches_every_kustomize_golden() {
    let mut compared = 0;
    let mut failures = Vec::new();
    for (name, file, text) in inputs() {
        let golden_path = emit_dir().join("kustomize").join(format!("{name}.yaml"));
        let Ok(golden) = fs::read_to_string(&golden_path) else {
            // The script documents which inputs kustomize cannot take (JSON, control characters).
            assert!(
                file.ends_with(".json") || name == "control-chars",
                "missing golden {golden_path:?}"
            );
            continue;
        };
        let indented: String = text.lines().map(|l| format!("  {l}\n")).collect();
        let resource =
            format!("apiVersion: v1\nkind: Values\nmetadata:\n  name: golden\nvalues:\n{indented}");
        let ours = kyaml::to_yaml(&first_document(&resource, &file, &Options::kustomize()));
        compared += 1;
        if ours != golden {
            failures.push(format!("--- {file}\n[ours]\n{ours}\n[kustomize]\n{golden}"));
        }
    }
    assert!(compared >= 7);
    report(&failures);
}
