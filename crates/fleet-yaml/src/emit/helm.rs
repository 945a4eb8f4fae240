//! Helm's YAML: `toYaml` and the `yaml.Marshal` of sigs.k8s.io/yaml it wraps (go-yaml v2 style).

use serde_json::Value;

use super::keys::KeyOrder;
use super::writer;

/// sigs.k8s.io/yaml `Marshal` (go-yaml v2): the whole document, ending with a newline.
pub fn marshal(value: &Value) -> String {
    writer::marshal(value, KeyOrder::GoYamlV2)
}

/// Helm's `toYaml` template function: [`marshal`] without its final newline.
pub fn to_yaml(value: &Value) -> String {
    let mut text = marshal(value);
    if text.ends_with('\n') {
        text.pop();
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn to_yaml_drops_only_the_final_newline() {
        assert_eq!(marshal(&json!({"a": 1})), "a: 1\n");
        assert_eq!(to_yaml(&json!({"a": 1})), "a: 1");
        assert_eq!(to_yaml(&json!({"k": "kept\n\n"})), "k: |+\n  kept\n");
        assert_eq!(to_yaml(&json!(null)), "null");
        assert_eq!(to_yaml(&json!([])), "[]");
    }
}
