//! Rendering a bundle into the Kubernetes objects it deploys, for `fleet test` (and later the agent).
//!
//! [`detect_style`] decides how a bundle renders, as Fleet's `DetermineStyle` does; [`render`] dispatches.
//! Raw YAML (with `yaml.overlays`) renders here ([`overlay`], [`raw`]). Helm and kustomize bundles are the
//! plug-in points for `fleet-helm` and `fleet-kustomize`: until those are wired in, they fail with
//! [`RenderError::NotSupportedYet`] rather than render something wrong.

pub mod namespace;
pub mod overlay;
pub mod raw;
pub mod target;

use std::collections::BTreeMap;

use fleet_api::{BundleDeploymentOptions, BundleResource};
use serde_json::Value;

use crate::resources;

/// How a bundle's resources become objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Style {
    /// A Helm chart; `chart_dir` is where its `Chart.yaml` is (`""` for the bundle root).
    Helm { chart_dir: String },
    /// A kustomization in `dir`.
    Kustomize { dir: String },
    /// Plain manifests, possibly with overlays.
    RawYaml,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    #[error("{style} bundles are not supported by `fleet test` yet ({detail})")]
    NotSupportedYet { style: &'static str, detail: String },
    #[error(transparent)]
    Yaml(#[from] fleet_yaml::Error),
    #[error("{file}: {message}")]
    Resource { file: String, message: String },
    #[error("overlay {overlay:?}: {file}: {message}")]
    Overlay {
        overlay: String,
        file: String,
        message: String,
    },
    #[error("{object}: {message}")]
    Namespace { object: String, message: String },
}

/// The bundle's files by name, decoded.
pub type Files = BTreeMap<String, Vec<u8>>;

/// Decodes bundle resources into a name → bytes map.
pub fn decode_files(resources: &[BundleResource]) -> Result<Files, RenderError> {
    resources
        .iter()
        .map(|resource| {
            resources::decode(resource)
                .map(|bytes| (resource.name.clone(), bytes))
                .map_err(|message| RenderError::Resource {
                    file: resource.name.clone(),
                    message,
                })
        })
        .collect()
}

fn join(dir: &str, name: &str) -> String {
    let dir = dir.trim_matches('/');
    let dir = dir.strip_prefix("./").unwrap_or(dir);
    if dir.is_empty() || dir == "." {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// Fleet's `DetermineStyle`: Helm when `<helm.chart or helm.repo or .>/Chart.yaml` is a resource (remote charts
/// under `.chart/`), kustomize when `<kustomize.dir or .>/kustomization.yaml` is, raw YAML otherwise.
pub fn detect_style(files: &Files, options: &BundleDeploymentOptions) -> Style {
    let chart = options.helm.as_ref().map_or("", |helm| {
        if helm.chart.is_empty() {
            &helm.repo
        } else {
            &helm.chart
        }
    });
    let chart_dir = if chart.contains("://") { "" } else { chart };
    if files.contains_key(&join(chart_dir, "Chart.yaml"))
        || files.keys().any(|name| name.starts_with(".chart/"))
    {
        return Style::Helm {
            chart_dir: chart_dir.to_string(),
        };
    }
    let dir = options.kustomize.as_ref().map_or("", |k| k.dir.as_str());
    for name in ["kustomization.yaml", "kustomization.yml", "Kustomization"] {
        if files.contains_key(&join(dir, name)) {
            return Style::Kustomize {
                dir: dir.to_string(),
            };
        }
    }
    if let Some(helm) = &options.helm
        && !helm.chart.is_empty()
    {
        // A chart that is not in the bundle must be downloaded, which needs the network.
        return Style::Helm {
            chart_dir: chart.to_string(),
        };
    }
    Style::RawYaml
}

/// Renders a bundle's resources with the given (merged) options into objects, in file then document order.
pub fn render(
    resources: &[BundleResource],
    options: &BundleDeploymentOptions,
) -> Result<Vec<Value>, RenderError> {
    let mut files = decode_files(resources)?;
    match detect_style(&files, options) {
        Style::Helm { chart_dir } => Err(RenderError::NotSupportedYet {
            style: "Helm",
            detail: format!(
                "chart {:?}; Helm rendering lands with fleet-helm",
                if chart_dir.is_empty() {
                    "."
                } else {
                    &chart_dir
                }
            ),
        }),
        Style::Kustomize { dir } => Err(RenderError::NotSupportedYet {
            style: "kustomize",
            detail: format!(
                "kustomization in {:?}; kustomize rendering lands with fleet-kustomize",
                if dir.is_empty() { "." } else { &dir }
            ),
        }),
        Style::RawYaml => {
            let overlays = options
                .yaml
                .as_ref()
                .map_or(&[][..], |yaml| yaml.overlays.as_slice());
            overlay::apply_overlays(&mut files, overlays)?;
            let mut objects = raw::objects(&files)?;
            namespace::apply(
                &mut objects,
                &options.default_namespace,
                &options.target_namespace,
            )?;
            Ok(objects)
        }
    }
}

/// Test helper: a file map from `(name, content)` pairs.
#[cfg(test)]
pub(crate) fn test_files(entries: &[(&str, &str)]) -> Files {
    entries
        .iter()
        .map(|(n, c)| (n.to_string(), c.as_bytes().to_vec()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_api::{HelmOptions, KustomizeOptions};

    fn files(names: &[&str]) -> Files {
        names.iter().map(|n| (n.to_string(), Vec::new())).collect()
    }

    #[test]
    fn styles_follow_fleet() {
        let none = BundleDeploymentOptions::default();
        assert_eq!(detect_style(&files(&["a.yaml"]), &none), Style::RawYaml);
        assert_eq!(
            detect_style(&files(&["Chart.yaml"]), &none),
            Style::Helm {
                chart_dir: String::new()
            }
        );
        assert_eq!(
            detect_style(&files(&["kustomization.yaml"]), &none),
            Style::Kustomize { dir: String::new() }
        );
        let helm = BundleDeploymentOptions {
            helm: Some(HelmOptions {
                chart: "./chart".into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            detect_style(&files(&["chart/Chart.yaml"]), &helm),
            Style::Helm {
                chart_dir: "./chart".into()
            }
        );
        let kustomize = BundleDeploymentOptions {
            kustomize: Some(KustomizeOptions {
                dir: "overlays/dev".into(),
            }),
            ..Default::default()
        };
        assert_eq!(
            detect_style(&files(&["overlays/dev/kustomization.yaml"]), &kustomize),
            Style::Kustomize {
                dir: "overlays/dev".into()
            }
        );
    }

    #[test]
    fn helm_and_kustomize_are_not_rendered_silently() {
        let resources = vec![BundleResource {
            name: "Chart.yaml".into(),
            content: "name: x\n".into(),
            encoding: String::new(),
        }];
        let err = render(&resources, &BundleDeploymentOptions::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Helm bundles are not supported by `fleet test` yet (chart \".\"; Helm rendering lands with fleet-helm)"
        );
    }
}
