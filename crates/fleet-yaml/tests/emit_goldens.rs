//! Our emitters against goldens made by the real `helm` and `kubectl kustomize` (`scripts/yaml-goldens.sh`):
//! every input under `testdata/yaml/emit/` must come out byte-for-byte as the Go tools printed it.

mod common;

use common::{difference, golden, helm_values, inputs, kustomize_resource, report};
use fleet_yaml::emit::{helm, kyaml};

#[test]
fn helm_to_yaml_matches_every_helm_golden() {
    let inputs = inputs();
    assert!(
        inputs.len() >= 18,
        "expected the emit inputs, found {}",
        inputs.len()
    );
    let mut failures = Vec::new();
    for (name, file, text) in inputs {
        let golden = golden("helm", &format!("{name}.yaml"))
            .unwrap_or_else(|| panic!("no helm golden for {file}"));
        let mut values = helm_values(&text, &file);
        if name.starts_with("root-") {
            // These render `toYaml .Values.root`: scalars and lists at the document root.
            values = values["root"].take();
        }
        let ours = helm::to_yaml(&values);
        failures.extend(difference(&file, &ours, &golden));
    }
    report(&failures);
}

#[test]
fn kyaml_matches_every_kustomize_golden() {
    let mut compared = 0;
    let mut failures = Vec::new();
    for (name, file, text) in inputs() {
        let Some(golden) = golden("kustomize", &format!("{name}.yaml")) else {
            // The script documents which inputs are Helm-only (JSON, control characters, roots, helm-*).
            let helm_only = file.ends_with(".json")
                || name == "control-chars"
                || name.starts_with("root-")
                || name.starts_with("helm-");
            assert!(helm_only, "no kustomize golden for {file}");
            continue;
        };
        let ours = kyaml::to_yaml(&kustomize_resource(&text, &file));
        compared += 1;
        failures.extend(difference(&file, &ours, &golden));
    }
    assert!(compared >= 9);
    report(&failures);
}
