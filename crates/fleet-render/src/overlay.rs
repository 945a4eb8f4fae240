//! `yaml.overlays`: for each overlay name in order, every file under `overlays/<name>/` replaces the file at the
//! same relative path, or, when its name contains `_patch.`, patches the file named without `_patch` — as a JSON
//! patch (a YAML/JSON list), a strategic merge patch (built-in kinds) or a JSON merge patch (anything else).
//! All `overlays/` files are dropped afterwards.

use fleet_yaml::patch::{PatchError, json_patch, merge_patch, strategic};
use serde_json::Value;

use super::{Files, RenderError};

/// What is wrong with one overlay file (the render error adds the overlay and the file).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OverlayProblem {
    /// A `_patch.` file names a file the bundle does not have.
    #[error("patches {target:?}, which does not exist")]
    NoTarget { target: String },
    #[error("{origin}: not valid UTF-8")]
    NotUtf8 { origin: String },
    /// The patched file or the patch is not YAML (the error names the file, line and column).
    #[error(transparent)]
    Yaml(#[from] fleet_yaml::Error),
    #[error("{origin}: is empty")]
    Empty { origin: String },
    #[error("{origin}: holds {count} documents; a patched file must hold one")]
    ManyDocuments { origin: String, count: usize },
    /// The patch does not apply.
    #[error(transparent)]
    Patch(#[from] PatchError),
    /// The patched document could not be written back as JSON.
    #[error("{message}")]
    Encode { message: String },
}

const OVERLAYS_DIR: &str = "overlays/";
const PATCH_MARKER: &str = "_patch.";

pub fn apply_overlays(files: &mut Files, overlays: &[String]) -> Result<(), RenderError> {
    for overlay in overlays {
        let prefix = format!("{OVERLAYS_DIR}{overlay}/");
        let entries: Vec<(String, Vec<u8>)> = files
            .range(prefix.clone()..)
            .take_while(|(name, _)| name.starts_with(&prefix))
            .map(|(name, bytes)| (name[prefix.len()..].to_string(), bytes.clone()))
            .collect();
        for (relative, bytes) in entries {
            let error = |problem: OverlayProblem| RenderError::Overlay {
                overlay: overlay.clone(),
                file: format!("{prefix}{relative}"),
                problem: Box::new(problem),
            };
            let file_name = relative.rsplit('/').next().unwrap_or(&relative);
            if file_name.contains(PATCH_MARKER) {
                let target = format!(
                    "{}{}",
                    &relative[..relative.len() - file_name.len()],
                    file_name.replacen(PATCH_MARKER, ".", 1)
                );
                let original = files.get(&target).ok_or_else(|| {
                    error(OverlayProblem::NoTarget {
                        target: target.clone(),
                    })
                })?;
                let patched = patch_file(original, &bytes, &target, &format!("{prefix}{relative}"))
                    .map_err(error)?;
                files.insert(target, patched);
            } else {
                files.insert(relative, bytes);
            }
        }
    }
    files.retain(|name, _| !name.starts_with(OVERLAYS_DIR));
    Ok(())
}

fn single_document(bytes: &[u8], origin: &str) -> Result<Value, OverlayProblem> {
    let text = std::str::from_utf8(bytes).map_err(|_| OverlayProblem::NotUtf8 {
        origin: origin.to_string(),
    })?;
    let mut documents = fleet_yaml::parse::documents(text, origin)?;
    match documents.len() {
        1 => Ok(documents.remove(0)),
        0 => Err(OverlayProblem::Empty {
            origin: origin.to_string(),
        }),
        count => Err(OverlayProblem::ManyDocuments {
            origin: origin.to_string(),
            count,
        }),
    }
}

fn patch_file(
    original: &[u8],
    patch: &[u8],
    original_name: &str,
    patch_name: &str,
) -> Result<Vec<u8>, OverlayProblem> {
    let mut document = single_document(original, original_name)?;
    let patch = single_document(patch, patch_name)?;
    if patch.is_array() {
        json_patch::apply(&mut document, &patch)?;
    } else {
        let api_version = document
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let kind = document
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if strategic::builtin_schema_for(api_version, kind).is_some() {
            document = strategic::apply_to_object(&document, &patch)?;
        } else {
            merge_patch::apply(&mut document, &patch);
        }
    }
    // The patched file is re-read as YAML later; JSON is YAML.
    serde_json::to_vec(&document).map_err(|e| OverlayProblem::Encode {
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_files as files;

    fn yaml(files: &Files, name: &str) -> Value {
        fleet_yaml::parse::documents(std::str::from_utf8(&files[name]).unwrap(), name)
            .unwrap()
            .remove(0)
    }

    #[test]
    fn replacement_and_all_patch_kinds() {
        let mut f = files(&[
            (
                "svc.yaml",
                "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80, name: http}]}\n",
            ),
            (
                "cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '1'}\n",
            ),
            (
                "crd.yaml",
                "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec: {list: [1, 2]}\n",
            ),
            (
                "overlays/prod/svc_patch.yaml",
                "spec: {ports: [{port: 443, name: https}]}\n",
            ),
            (
                "overlays/prod/cm_patch.yaml",
                "- {op: replace, path: /data/a, value: '2'}\n",
            ),
            ("overlays/prod/crd_patch.yaml", "spec: {list: [3]}\n"),
            ("overlays/prod/new.yaml", "kind: New\n"),
            ("overlays/dev/cm.yaml", "ignored: true\n"),
        ]);
        apply_overlays(&mut f, &["prod".to_string()]).unwrap();
        let names: Vec<_> = f.keys().cloned().collect();
        assert_eq!(names, ["cm.yaml", "crd.yaml", "new.yaml", "svc.yaml"]);
        // Strategic merge: ports merge by port number.
        assert_eq!(
            yaml(&f, "svc.yaml")["spec"]["ports"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        assert_eq!(yaml(&f, "cm.yaml")["data"]["a"], "2");
        // Merge patch for unknown kinds: lists replaced.
        assert_eq!(yaml(&f, "crd.yaml")["spec"]["list"], serde_json::json!([3]));
    }

    #[test]
    fn patch_of_missing_file_is_an_error() {
        let mut f = files(&[("overlays/x/gone_patch.yaml", "a: 1\n")]);
        let err = apply_overlays(&mut f, &["x".to_string()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "overlay \"x\": overlays/x/gone_patch.yaml: patches \"gone.yaml\", which does not exist"
        );
    }

    #[test]
    fn a_patch_that_does_not_apply_keeps_the_patch_error() {
        let mut f = files(&[
            ("cm.yaml", "kind: Thing\na: [1]\n"),
            (
                "overlays/x/cm_patch.yaml",
                "- {op: test, path: /a/0, value: 2}\n",
            ),
        ]);
        let err = apply_overlays(&mut f, &["x".to_string()]).unwrap_err();
        let RenderError::Overlay { problem, .. } = &err else {
            panic!("{err:?}");
        };
        assert!(
            matches!(
                **problem,
                OverlayProblem::Patch(fleet_yaml::patch::PatchError::JsonPatchOperation {
                    index: 0,
                    ..
                })
            ),
            "{problem:?}"
        );
        assert_eq!(
            err.to_string(),
            "overlay \"x\": overlays/x/cm_patch.yaml: JSON patch operation 0 (test \"/a/0\"): test failed: the value differs"
        );
    }
}
