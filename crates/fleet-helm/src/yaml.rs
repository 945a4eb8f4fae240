//! YAML as Helm sees it, through `fleet-yaml`: reading with go-yaml v2's YAML 1.1 rules (first document only, as
//! `yaml.Unmarshal` does) and — like `sigs.k8s.io/yaml` — through JSON, so every number becomes a Go float64;
//! writing Helm's `toYaml` (`sigs.k8s.io/yaml.Marshal`: JSON first, then go-yaml v2's emitter).

use crate::value::{JsonError, Value, from_json};

/// Why a text is not YAML, worded as Helm words it; the inner error names the line and column.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("error converting YAML to JSON: {0}")]
pub struct YamlError(#[from] pub fleet_yaml::Error);

/// Parses one YAML document into JSON data (YAML 1.1 rules). An empty document is `null`.
pub fn parse_json(text: &str) -> Result<serde_json::Value, YamlError> {
    read_first(text, serde_json::Value::Null, |text| {
        fleet_yaml::parse::first_value(text, "yaml")
    })
}

/// Parses YAML into template values with Go's JSON number semantics (every number a float64).
pub fn parse_value(text: &str) -> Result<Value, YamlError> {
    read_first(text, crate::value::nil(), |text| {
        fleet_yaml::parse::build_first_value(text, "yaml", &mut crate::value::GoValues)
    })
}

/// The first document of `text` as `read` builds it, `empty` for a blank text, and errors worded as Helm words
/// them.
fn read_first<T>(
    text: &str,
    empty: T,
    read: impl FnOnce(&str) -> Result<T, fleet_yaml::Error>,
) -> Result<T, YamlError> {
    if text.trim().is_empty() {
        return Ok(empty);
    }
    Ok(read(text)?)
}

/// Parses YAML into template values keeping integers (for data that is not round-tripped through JSON).
pub fn parse_value_exact(text: &str) -> Result<Value, YamlError> {
    Ok(from_json(&parse_json(text)?))
}

/// Helm's `toYaml` before trimming: the YAML text, ending in a newline.
pub fn to_yaml(v: &Value) -> Result<String, JsonError> {
    let json = crate::value::to_json(v)?;
    Ok(fleet_yaml::emit::helm::marshal(&json))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn y(text: &str) -> String {
        to_yaml(&parse_value(text).unwrap()).unwrap()
    }

    #[test]
    fn emits_like_helm_to_yaml() {
        assert_eq!(
            y("b: 1\na: [x, {c: d, e: []}]\nf: {}\n"),
            "a:\n- x\n- c: d\n  e: []\nb: 1\nf: {}\n"
        );
        assert_eq!(
            y("a: 'yes'\nb: '1.0'\nc: ''\nd: '- x'\ne: 'a: b'\nf: 1000000\ng: 1.5\n"),
            "a: \"yes\"\nb: \"1.0\"\nc: \"\"\nd: '- x'\ne: 'a: b'\nf: 1000000\ng: 1.5\n"
        );
        assert_eq!(to_yaml(&Value::from("x\ny\n")).unwrap(), "|\n  x\n  y\n");
        assert_eq!(
            y("a: \"x\\ny\\n\"\nb: \"x\\ny\"\n"),
            "a: |\n  x\n  y\nb: |-\n  x\n  y\n"
        );
        assert_eq!(
            y("a:\n  b:\n  - - 1\n    - 2\n"),
            "a:\n  b:\n  - - 1\n    - 2\n"
        );
    }
}
