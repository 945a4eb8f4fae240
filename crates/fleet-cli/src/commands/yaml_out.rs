//! YAML output of the offline commands, in the style `fleet apply -o -` and `fleet test` print (go-yaml v2 via
//! `sigs.k8s.io/yaml`): the emitter is `fleet_yaml::emit::helm` (golden-verified against go-yaml v2); this module
//! only joins documents the way Fleet separates exported objects.

use serde_json::Value;

/// Documents joined the way Fleet separates exported objects.
pub fn documents(values: &[Value]) -> String {
    values
        .iter()
        .map(to_yaml)
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// One document, ending with a newline (`sigs.k8s.io/yaml.Marshal`).
pub fn to_yaml(value: &Value) -> String {
    fleet_yaml::emit::helm::marshal(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn go_yaml_v2_layout() {
        let value = json!({
            "spec": {"resources": [{"name": "a.yaml", "content": "x: 1\ny: 2\n"}], "targets": [], "ignore": {}},
            "kind": "Bundle",
            "list": [["a", "b"], "c"],
        });
        assert_eq!(
            to_yaml(&value),
            "kind: Bundle\nlist:\n- - a\n  - b\n- c\nspec:\n  ignore: {}\n  resources:\n  - content: |\n      x: 1\n      y: 2\n    name: a.yaml\n  targets: []\n"
        );
        assert_eq!(
            documents(&[json!({"a": 1}), json!({"b": 2})]),
            "a: 1\n\n---\nb: 2\n"
        );
    }

    #[test]
    fn quoting() {
        let cases = [
            ("plain", "plain"),
            ("", "\"\""),
            ("true", "\"true\""),
            ("on", "\"on\""),
            ("8080", "\"8080\""),
            ("1.5", "\"1.5\""),
            ("1e3", "\"1e3\""),
            ("*.example.com", "'*.example.com'"),
            ("a: b", "'a: b'"),
            ("- x", "'- x'"),
            ("it's", "it's"),
            ("v1.2.3", "v1.2.3"),
            ("100Mi", "100Mi"),
        ];
        for (input, expected) in cases {
            assert_eq!(
                to_yaml(&json!({ "k": input })),
                format!("k: {expected}\n"),
                "{input:?}"
            );
            assert_eq!(
                to_yaml(&json!({ input: 1 })),
                format!("{expected}: 1\n"),
                "key {input:?}"
            );
        }
        assert_eq!(
            to_yaml(&json!({"a": "no newline\nat end"})),
            "a: |-\n  no newline\n  at end\n"
        );
    }

    #[test]
    fn long_plain_strings_fold_like_go_yaml() {
        let long = format!("{} tail words", "word ".repeat(17).trim_end());
        let text = to_yaml(&json!({ "description": long }));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(
            lines[0].len(),
            82,
            "the break comes at the first space past column 80: {text}"
        );
        assert_eq!(lines[1], "  word word word tail words", "{text}");
        // Keys and short values never fold.
        assert_eq!(to_yaml(&json!({"a": "b c"})), "a: b c\n");
    }
}
