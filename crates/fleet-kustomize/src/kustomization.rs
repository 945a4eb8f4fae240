//! The kustomization file: its schema (kustomize v5's fields, legacy ones included), finding it in a directory,
//! and reading it strictly — an unknown field is an error naming the file, line and field, with a suggestion.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::files::{self, Files};

/// The file names kustomize recognizes, in its order.
pub const FILE_NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// A parsed kustomization (or component) file.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Kustomization {
    pub api_version: Option<String>,
    pub kind: Option<String>,
    pub metadata: Option<Value>,
    pub openapi: Option<Value>,
    pub resources: Vec<String>,
    pub bases: Vec<String>,
    pub components: Vec<String>,
    pub crds: Vec<String>,
    pub namespace: Option<String>,
    pub name_prefix: Option<String>,
    pub name_suffix: Option<String>,
    pub common_labels: BTreeMap<String, String>,
    pub labels: Vec<Label>,
    pub common_annotations: BTreeMap<String, String>,
    pub images: Vec<Image>,
    pub image_tags: Vec<Image>,
    pub replicas: Vec<Replica>,
    pub patches: Vec<Patch>,
    pub patches_strategic_merge: Vec<String>,
    pub patches_json6902: Vec<Patch>,
    pub config_map_generator: Vec<GeneratorArgs>,
    pub secret_generator: Vec<GeneratorArgs>,
    pub generator_options: Option<GeneratorOptions>,
    pub replacements: Vec<ReplacementEntry>,
    pub sort_options: Option<SortOptions>,
    pub helm_charts: Vec<HelmChart>,
    pub helm_globals: Option<HelmGlobals>,
    pub helm_chart_inflation_generator: Vec<Value>,
    pub configurations: Vec<String>,
    pub generators: Vec<String>,
    pub transformers: Vec<String>,
    pub validators: Vec<String>,
    pub vars: Vec<Value>,
    pub build_metadata: Vec<String>,
}

/// One entry of `labels`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Label {
    pub pairs: BTreeMap<String, String>,
    pub include_selectors: bool,
    pub include_templates: bool,
    pub fields: Vec<crate::fieldspec::FieldSpecArgs>,
}

/// One entry of `images`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Image {
    pub name: String,
    pub new_name: String,
    pub new_tag: String,
    pub digest: String,
    /// Accepted and, as in kustomize v5.7's `images` transformer, not applied.
    pub tag_suffix: String,
}

/// One entry of `replicas`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Replica {
    pub name: String,
    pub count: i64,
}

/// A resource selector (`target` of a patch, `select`/`reject` of a replacement).
#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Selector {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub name: String,
    pub namespace: String,
    pub label_selector: String,
    pub annotation_selector: String,
}

/// One entry of `patches` or `patchesJson6902`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Patch {
    pub path: Option<String>,
    pub patch: Option<String>,
    pub target: Option<Selector>,
    pub options: BTreeMap<String, bool>,
}

/// One entry of `configMapGenerator` or `secretGenerator`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct GeneratorArgs {
    pub name: String,
    pub namespace: Option<String>,
    pub behavior: Option<String>,
    pub files: Vec<String>,
    pub literals: Vec<String>,
    pub envs: Vec<String>,
    pub env: Option<String>,
    pub options: Option<GeneratorOptions>,
    #[serde(rename = "type")]
    pub secret_type: Option<String>,
}

/// `generatorOptions`, or a generator's own `options`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct GeneratorOptions {
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub disable_name_suffix_hash: Option<bool>,
    pub immutable: Option<bool>,
}

/// One entry of `replacements`: inline, or a `path` to a file of replacements.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct ReplacementEntry {
    pub path: Option<String>,
    pub source: Option<SourceSelector>,
    pub targets: Vec<TargetSelector>,
}

/// Where a replacement's value comes from.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct SourceSelector {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub name: String,
    pub namespace: String,
    pub field_path: String,
    pub options: Option<FieldOptions>,
}

/// Where a replacement's value goes.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct TargetSelector {
    pub select: Option<Selector>,
    pub reject: Vec<Selector>,
    pub field_paths: Vec<String>,
    pub options: Option<FieldOptions>,
}

/// Options of a replacement source or target.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct FieldOptions {
    pub delimiter: String,
    pub index: i64,
    pub encoding: String,
    pub create: bool,
}

/// One entry of `helmCharts`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct HelmChart {
    pub name: String,
    pub version: String,
    pub repo: String,
    pub digest: String,
    pub release_name: String,
    pub namespace: String,
    pub values_file: String,
    pub additional_values_files: Vec<String>,
    pub values_inline: Option<Value>,
    pub values_merge: String,
    #[serde(rename = "includeCRDs")]
    pub include_crds: bool,
    pub skip_hooks: bool,
    pub skip_tests: bool,
    pub api_versions: Vec<String>,
    pub kube_version: String,
    pub name_template: String,
    pub devel: bool,
    pub debug: bool,
}

/// `helmGlobals`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct HelmGlobals {
    pub chart_home: String,
    pub config_home: String,
}

/// `sortOptions`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct SortOptions {
    pub order: String,
    pub legacy_sort_options: Option<LegacySortOptions>,
}

/// `sortOptions.legacySortOptions`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct LegacySortOptions {
    pub order_first: Vec<String>,
    pub order_last: Vec<String>,
}

/// The top-level keys a kustomization may have.
const KNOWN_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "openapi",
    "resources",
    "bases",
    "components",
    "crds",
    "namespace",
    "namePrefix",
    "nameSuffix",
    "commonLabels",
    "labels",
    "commonAnnotations",
    "images",
    "imageTags",
    "replicas",
    "patches",
    "patchesStrategicMerge",
    "patchesJson6902",
    "configMapGenerator",
    "secretGenerator",
    "generatorOptions",
    "replacements",
    "sortOptions",
    "helmCharts",
    "helmGlobals",
    "helmChartInflationGenerator",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "vars",
    "buildMetadata",
];

/// A kustomization read from a directory: its file's path and contents.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The kustomization file's path in the tree.
    pub file: String,
    /// Its contents.
    pub kustomization: Kustomization,
}

/// Finds and reads the kustomization file of `dir`.
pub fn load(files: &impl Files, dir: &str) -> Result<Loaded> {
    let mut found = Vec::new();
    for name in FILE_NAMES {
        let path = files::join(dir, name).unwrap_or_else(|| name.to_string());
        if let Some(bytes) = files.read(&path) {
            found.push((path, bytes.into_owned()));
        }
    }
    if found.len() > 1 {
        let names: Vec<&str> = found.iter().map(|(p, _)| files::base_name(p)).collect();
        return Err(Error::invalid(
            files::display(dir),
            format!(
                "found several kustomization files ({}); keep only one",
                names.join(", ")
            ),
        ));
    }
    let Some((file, bytes)) = found.pop() else {
        return Err(Error::MissingKustomization {
            dir: files::display(dir).to_string(),
        });
    };
    let kustomization = parse(&bytes, &file)?;
    Ok(Loaded {
        file,
        kustomization,
    })
}

/// Reads a kustomization file's contents strictly.
pub fn parse(bytes: &[u8], file: &str) -> Result<Kustomization> {
    let text = crate::yaml::utf8(bytes, file)?;
    // kustomize reads its own file with sigs.k8s.io/yaml (go-yaml v2, YAML 1.1: `yes`/`on`/`y` are booleans),
    // unlike the resources it builds (kyaml, go-yaml v3).
    let located = fleet_yaml::parse::located(text, file)?;
    let value = located.value();
    let map = match value {
        Value::Null => return Ok(Kustomization::default()),
        Value::Object(m) => m,
        _ => {
            return Err(Error::invalid(
                file,
                "a kustomization must be a YAML mapping",
            ));
        }
    };
    for key in map.keys() {
        if !KNOWN_FIELDS.contains(&key.as_str()) {
            let pointer = format!("/{}", key.replace('~', "~0").replace('/', "~1"));
            let suggestion = KNOWN_FIELDS
                .iter()
                .map(|k| (strsim::jaro_winkler(k, key), *k))
                .filter(|(score, _)| *score > 0.85)
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, k)| format!("; did you mean `{k}`?"))
                .unwrap_or_else(|| "; remove it".to_string());
            return Err(Error::Invalid {
                file: file.to_string(),
                location: located.location(&pointer),
                message: format!("unknown field `{key}` in kustomization{suggestion}"),
            });
        }
    }
    if let Some(Value::Array(patches)) = map.get("patches")
        && let Some(i) = patches.iter().position(Value::is_string)
    {
        return Err(Error::Invalid {
            file: file.to_string(),
            location: located.location(&format!("/patches/{i}")),
            message: format!(
                "`patches` entries are objects; write `- path: {}` (or list the file under \
                 `patchesStrategicMerge`)",
                patches[i].as_str().unwrap_or_default()
            ),
        });
    }
    let mut k: Kustomization = serde_json::from_value(value.clone()).map_err(|e| {
        let message = e.to_string();
        // serde names the unknown field but not where it is: find the first key of that name.
        let location = message
            .strip_prefix("unknown field `")
            .and_then(|r| r.split('`').next())
            .and_then(|name| find_key(value, name, &mut String::new()))
            .and_then(|pointer| located.location(&pointer));
        let hint = if message.starts_with("invalid type: boolean") {
            " (kustomization files are YAML 1.1: yes/no/on/off/y/n are booleans; quote the value)"
        } else {
            ""
        };
        Error::Invalid {
            file: file.to_string(),
            location,
            message: format!("invalid kustomization: {message}{hint}"),
        }
    })?;
    let bases = std::mem::take(&mut k.bases);
    k.resources.extend(bases);
    let tags = std::mem::take(&mut k.image_tags);
    k.images.extend(tags);
    Ok(k)
}

/// The JSON pointer of the first mapping key `name` below `v`.
fn find_key(v: &Value, name: &str, at: &mut String) -> Option<String> {
    let len = at.len();
    let found = match v {
        Value::Object(m) => m.iter().find_map(|(k, child)| {
            at.truncate(len);
            at.push('/');
            at.push_str(&k.replace('~', "~0").replace('/', "~1"));
            if k == name {
                Some(at.clone())
            } else {
                find_key(child, name, at)
            }
        }),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, child)| {
            at.truncate(len);
            at.push_str(&format!("/{i}"));
            find_key(child, name, at)
        }),
        _ => None,
    };
    at.truncate(len);
    found
}

impl Kustomization {
    /// Whether this file is a `Component`.
    pub fn is_component(&self) -> bool {
        self.kind.as_deref() == Some("Component")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_field_names_file_line_and_suggestion() {
        let err = parse(
            b"resources: [a.yaml]\nnamePrefx: x-\n",
            "app/kustomization.yaml",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "app/kustomization.yaml:2:1: unknown field `namePrefx` in kustomization; did you mean `namePrefix`?"
        );
    }

    #[test]
    fn string_patches_get_a_fix_hint() {
        let err = parse(b"resources: [a.yaml]\npatches:\n- p.yaml\n", "k.yaml").unwrap_err();
        assert_eq!(
            err.to_string(),
            "k.yaml:3:3: `patches` entries are objects; write `- path: p.yaml` (or list the file under \
             `patchesStrategicMerge`)"
        );
    }

    #[test]
    fn bases_fold_into_resources() {
        let k = parse(b"bases: [../base]\nresources: [a.yaml]\n", "k").unwrap();
        assert_eq!(k.resources, vec!["a.yaml", "../base"]);
    }

    #[test]
    fn nested_unknown_field_is_an_error() {
        let err = parse(b"images:\n- name: a\n  newTagg: b\n", "k.yaml").unwrap_err();
        assert!(err.to_string().contains("unknown field `newTagg`"), "{err}");
        assert!(err.to_string().starts_with("k.yaml:3:3: "), "{err}");
    }
}
