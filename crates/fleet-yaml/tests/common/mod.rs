//! Shared by the golden tests: the inputs under `testdata/yaml/emit/` and how Helm and kustomize read them.

#![allow(dead_code)] // Each test binary uses a different part.

use std::fs;
use std::path::{Path, PathBuf};

use fleet_yaml::parse::{self, Options};
use serde_json::{Map, Value};

pub fn emit_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/yaml/emit")
}

/// The inputs, as (name, file name, text).
pub fn inputs() -> Vec<(String, String, String)> {
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
    inputs
}

/// Helm reads values through JSON into Go `interface{}`: every number becomes a float64.
pub fn as_helm_values(value: Value) -> Value {
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

pub fn first_document(text: &str, origin: &str, options: &Options) -> Value {
    parse::documents_with(options, text, origin)
        .unwrap()
        .into_iter()
        .next()
        .unwrap_or(Value::Object(Map::new()))
}

/// A golden file next to the inputs, e.g. `golden("helm", "keys.yaml")`.
pub fn golden(kind: &str, file: &str) -> Option<String> {
    fs::read_to_string(emit_dir().join(kind).join(file)).ok()
}

/// Helm values as Helm sees them: the first document of a values file (an empty map when there is none),
/// numbers as float64.
pub fn helm_values(text: &str, origin: &str) -> Value {
    as_helm_values(first_document(text, origin, &Options::default()))
}

/// The input wrapped as the resource the golden script gives kustomize, read as kustomize reads.
pub fn kustomize_resource(text: &str, origin: &str) -> Value {
    // As the script does: two spaces before every non-empty line.
    let indented: String = text
        .lines()
        .map(|l| {
            if l.is_empty() {
                "\n".to_string()
            } else {
                format!("  {l}\n")
            }
        })
        .collect();
    let resource =
        format!("apiVersion: v1\nkind: Values\nmetadata:\n  name: golden\nvalues:\n{indented}");
    first_document(&resource, origin, &Options::kustomize())
}

/// Where two texts first differ, as a few numbered lines of each; `None` when they are equal.
pub fn difference(file: &str, ours: &str, theirs: &str) -> Option<String> {
    if ours == theirs {
        return None;
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (ours.split('\n').collect(), theirs.split('\n').collect());
    let first = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let window = |lines: &[&str]| {
        let end = (first + 3).min(lines.len());
        (first.saturating_sub(2)..end)
            .map(|i| format!("{:>4} {:?}\n", i + 1, lines[i]))
            .collect::<String>()
    };
    Some(format!(
        "--- {file} (first difference at line {})\n[ours]\n{}[golden]\n{}",
        first + 1,
        window(&a),
        window(&b)
    ))
}

/// Failing with every difference listed.
pub fn report(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} golden(s) differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
