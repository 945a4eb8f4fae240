//! Raw-YAML bundles: which files are manifests (`.yaml`, `.yml`, `.json`, not inside a nested bundle or chart
//! directory) and the objects they hold, in file-name then document order, as Fleet's post-renderer emits them.
//! Manifests under `templates/` are Helm templates (see [`super::helm`]).

use serde_json::Value;

use super::{Files, RenderError};

const MANIFEST_EXTENSIONS: &[&str] = &[".yaml", ".yml", ".json"];
/// Files in a directory holding one of these belong to a nested bundle or chart, not to this bundle's output.
const CLAIMING_FILES: &[&str] = &["fleet.yaml", "fleet.yml", "Chart.yaml"];

/// Whether `name` is claimed by a nested bundle or chart directory (any directory above it but the root).
fn claimed(files: &Files, name: &str) -> bool {
    let mut dir = name;
    while let Some(index) = dir.rfind('/') {
        dir = &dir[..index];
        if CLAIMING_FILES
            .iter()
            .any(|claim| files.contains_key(&format!("{dir}/{claim}")))
        {
            return true;
        }
    }
    false
}

/// The manifest files of a raw bundle, in name order.
pub fn manifest_names(files: &Files) -> Vec<&str> {
    files
        .keys()
        .map(String::as_str)
        .filter(|name| MANIFEST_EXTENSIONS.iter().any(|ext| name.ends_with(ext)))
        .filter(|name| !claimed(files, name))
        .collect()
}

/// Whether a manifest is a Helm template (Fleet renders `templates/` of a raw bundle as a chart).
fn is_template(name: &str) -> bool {
    name.starts_with("templates/")
}

/// The manifests under `templates/`, which render through Helm rather than being parsed as they are.
pub fn template_names(files: &Files) -> Vec<&str> {
    manifest_names(files)
        .into_iter()
        .filter(|name| is_template(name))
        .collect()
}

/// Parses every manifest outside `templates/` into objects.
pub fn objects(files: &Files) -> Result<Vec<Value>, RenderError> {
    let mut objects = Vec::new();
    for name in manifest_names(files)
        .into_iter()
        .filter(|name| !is_template(name))
    {
        let text = std::str::from_utf8(&files[name]).map_err(|_| RenderError::Resource {
            file: name.to_string(),
            message: "not valid UTF-8".to_string(),
        })?;
        for (index, document) in fleet_yaml::parse::documents(text, name)?
            .into_iter()
            .enumerate()
        {
            if !document.is_object() {
                return Err(RenderError::Resource {
                    file: name.to_string(),
                    message: format!("document {} is not a mapping", index + 1),
                });
            }
            objects.push(document);
        }
    }
    Ok(objects)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_files as files;

    #[test]
    fn selects_manifests_outside_nested_bundles() {
        let f = files(&[
            ("README.md", ""),
            ("a.yaml", ""),
            ("b.json", ""),
            ("sub/fleet.yaml", ""),
            ("sub/x.yaml", ""),
            ("chart/Chart.yaml", ""),
            ("chart/values.yaml", ""),
            ("plain/y.yml", ""),
        ]);
        assert_eq!(manifest_names(&f), ["a.yaml", "b.json", "plain/y.yml"]);
    }

    #[test]
    fn parses_documents_in_order_and_rejects_scalars() {
        let f = files(&[
            ("a.yaml", "kind: A\n---\n---\nkind: B\n"),
            ("b.yaml", "kind: C\n"),
        ]);
        let kinds: Vec<_> = objects(&f)
            .unwrap()
            .iter()
            .map(|o| o["kind"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(kinds, ["A", "B", "C"]);
        let bad = files(&[("a.yaml", "kind: A\n---\njust text\n")]);
        assert_eq!(
            objects(&bad).unwrap_err().to_string(),
            "a.yaml: document 2 is not a mapping"
        );
    }
}
