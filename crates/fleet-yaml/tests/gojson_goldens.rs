//! `to_json_go` against Helm's `toJson` (Go's `encoding/json`) for every input under `testdata/yaml/emit/`.
//! Go sorts map keys by bytes; `to_json_go` keeps the order it is given, so the values are sorted first.

mod common;

use common::{difference, golden, helm_values, inputs, report};
use serde_json::Value;

fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

#[test]
fn to_json_go_matches_every_helm_to_json_golden() {
    let mut compared = 0;
    let mut failures = Vec::new();
    for (name, file, text) in inputs() {
        let golden = golden("json", &format!("{name}.json"))
            .unwrap_or_else(|| panic!("no toJson golden for {file}"));
        let ours = fleet_yaml::to_json_go(&sorted(helm_values(&text, &file)));
        compared += 1;
        failures.extend(difference(&file, &ours, &golden));
    }
    assert!(compared >= 18);
    report(&failures);
}
