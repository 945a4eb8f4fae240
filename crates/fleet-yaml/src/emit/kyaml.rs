//! The YAML `kubectl kustomize` prints: kyaml (go-yaml v3) after a JSON round trip, so keys are sorted
//! (with go-yaml v3's ordering) and sequences are not indented under their key.

use serde_json::Value;

use super::keys::KeyOrder;
use super::writer;

/// One resource as `kubectl kustomize` prints it, ending with a newline.
pub fn to_yaml(value: &Value) -> String {
    writer::marshal(value, KeyOrder::GoYamlV3)
}

/// Several resources as `kubectl kustomize` prints them: documents separated by `---`.
pub fn to_yaml_stream(values: &[Value]) -> String {
    values.iter().map(to_yaml).collect::<Vec<_>>().join("---\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn stream_separates_resources_like_kubectl_kustomize() {
        let a = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a"}});
        let b = json!({"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "b"}, "data": {"x": "eQ=="}});
        assert_eq!(
            to_yaml_stream(&[a, b]),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\ndata:\n  x: eQ==\nkind: Secret\nmetadata:\n  name: b\n"
        );
        assert_eq!(to_yaml_stream(&[]), "");
    }
}
