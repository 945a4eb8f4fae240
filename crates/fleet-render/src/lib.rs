//! Rendering a bundle into the Kubernetes objects it deploys, for `fleet test` (and later the agent).
//!
//! [`detect_style`] decides how a bundle renders, as Fleet's `DetermineStyle` does; [`render`] dispatches.
//! Raw YAML (with `yaml.overlays`) renders here ([`overlay`], [`raw`]); Helm charts (a Helm-style bundle's chart, or
//! a raw bundle's `templates/`) through `fleet-helm` ([`helm`]); kustomizations, and Helm output post-rendered by a
//! kustomization, through `fleet-kustomize` ([`kustomize`]). Charts the reader downloaded are found under their
//! `.chart/<checksum>/` prefix ([`fleet_bundle::remote::stored_chart_dir`]); a remote chart the bundle does not hold fails
//! with a clear error.

pub mod helm;
pub mod kustomize;
pub mod namespace;
pub mod overlay;
pub mod packaged;
pub mod raw;
pub mod test_cluster;

use std::collections::BTreeMap;

use fleet_api::{BundleDeploymentOptions, BundleResource};
use serde_json::Value;

use fleet_bundle::resources;

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

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RenderError {
    #[error("{style} bundles are not supported by `fleet test` yet ({detail})")]
    NotSupportedYet { style: &'static str, detail: String },
    #[error(transparent)]
    Yaml(#[from] fleet_yaml::Error),
    #[error("{file}: {message}")]
    Resource { file: String, message: String },
    #[error("overlay {overlay:?}: {file}: {problem}")]
    Overlay {
        overlay: String,
        file: String,
        problem: Box<overlay::OverlayProblem>,
    },
    #[error("{object}: {message}")]
    Namespace { object: String, message: String },
    /// The problem is part of the message (not an error `source`), so a printed error chain names it once.
    #[error("helm chart {chart:?}: {problem}")]
    Helm {
        chart: String,
        problem: Box<helm::HelmProblem>,
    },
    #[error("kustomize {dir:?}: {problem}")]
    Kustomize {
        dir: String,
        problem: Box<fleet_kustomize::Error>,
    },
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
/// under `.chart/`) or `helm.chart` names a packaged chart among them, kustomize when `<kustomize.dir or .>/kustomization.yaml` is, raw YAML otherwise.
pub fn detect_style(files: &Files, options: &BundleDeploymentOptions) -> Style {
    if let Some(chart_dir) = options
        .helm
        .as_ref()
        .and_then(|helm| fleet_bundle::remote::stored_chart_dir(files.keys(), helm))
    {
        return Style::Helm { chart_dir };
    }
    let chart = options.helm.as_ref().map_or("", |helm| {
        if helm.chart.is_empty() {
            &helm.repo
        } else {
            &helm.chart
        }
    });
    let chart_dir = if chart.contains("://") { "" } else { chart };
    if files.contains_key(&join(chart_dir, "Chart.yaml"))
        || crate::packaged::is_packaged(files, chart_dir)
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

/// Renders a bundle's resources with the given (merged) options into objects, in file then document order. Helm
/// charts render with `helm.releaseName` or Helm's default `release-name`; use [`render_bundle`] to pass the
/// bundle's name, which Fleet uses as the default release name.
pub fn render(
    resources: &[BundleResource],
    options: &BundleDeploymentOptions,
) -> Result<Vec<Value>, RenderError> {
    render_bundle(resources, options, "")
}

/// Renders a bundle (deployment) named `bundle_name` with the given (merged) options into objects: Helm output
/// in Helm's install order (post-rendered by `<kustomize.dir>/kustomization.yaml` when there is one), a
/// kustomization's output, or raw manifests in file then document order (after a raw bundle's `templates/`
/// rendered as a chart). Namespaces are then set as Fleet sets them.
pub fn render_bundle(
    resources: &[BundleResource],
    options: &BundleDeploymentOptions,
    bundle_name: &str,
) -> Result<Vec<Value>, RenderError> {
    render_bundle_reporting(resources, options, bundle_name).map(|rendered| rendered.objects)
}

/// What a bundle renders into: its objects, how it rendered (only a Helm-style bundle has hooks), and warnings for
/// the user (e.g. a kustomize patch whose target matches nothing, skipped as `kubectl kustomize` skips it), each
/// naming the file at fault.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub objects: Vec<Value>,
    pub style: Style,
    pub warnings: Vec<String>,
}

/// [`render_bundle`], also returning the render's warnings.
pub fn render_bundle_reporting(
    resources: &[BundleResource],
    options: &BundleDeploymentOptions,
    bundle_name: &str,
) -> Result<Rendered, RenderError> {
    let mut rendered = render_without_namespaces(resources, options, bundle_name)?;
    namespace::apply(
        &mut rendered.objects,
        &options.default_namespace,
        &options.target_namespace,
    )?;
    Ok(rendered)
}

/// [`render_bundle_reporting`] before namespaces are set, for a caller that knows which kinds its cluster
/// namespaces and sets them with [`namespace::apply_with`].
pub fn render_without_namespaces(
    resources: &[BundleResource],
    options: &BundleDeploymentOptions,
    bundle_name: &str,
) -> Result<Rendered, RenderError> {
    let mut files = decode_files(resources)?;
    let mut warnings = Vec::new();
    let mut kustomized = |built: fleet_kustomize::Built| {
        warnings.extend(built.warnings.iter().map(ToString::to_string));
        built.objects
    };
    let kustomize_dir = options.kustomize.as_ref().map_or("", |k| k.dir.as_str());
    let style = detect_style(&files, options);
    let objects = match &style {
        Style::Helm { chart_dir } => {
            let output = helm::render_bundle_chart(&files, chart_dir, options, bundle_name)?;
            match kustomize::post_render(&files, kustomize_dir, &output)? {
                Some(built) => kustomized(built),
                None => helm::objects(&output, &join(chart_dir, "templates"))?,
            }
        }
        Style::Kustomize { dir } => kustomized(kustomize::build(&files, dir)?),
        Style::RawYaml => {
            let overlays = options
                .yaml
                .as_ref()
                .map_or(&[][..], |yaml| yaml.overlays.as_slice());
            overlay::apply_overlays(&mut files, overlays)?;
            let templates = raw::template_names(&files);
            let mut objects = if templates.is_empty() {
                Vec::new()
            } else {
                let chart = helm::raw_templates_chart(&files, &templates, bundle_name);
                let output = helm::render_text(chart, "templates", options, bundle_name)?;
                helm::objects(&output, "templates")?
            };
            objects.extend(raw::objects(&files)?);
            objects
        }
    };
    Ok(Rendered {
        objects,
        style,
        warnings,
    })
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
    use fleet_testing::bundle_resources as resources;

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

    fn helm_options(chart: &str, values: serde_json::Value) -> BundleDeploymentOptions {
        BundleDeploymentOptions {
            helm: Some(HelmOptions {
                chart: chart.into(),
                values: serde_json::from_value(values).unwrap(),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    const CHART: &str = "apiVersion: v2\nname: c\nversion: 1.0.0\n";
    const TEMPLATE: &str = "kind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  v: {{ .Values.v | quote }}\n  ns: {{ .Release.Namespace }}\n";

    #[test]
    fn helm_bundles_render_their_chart_with_values_release_and_namespace() {
        let res = resources(&[
            ("chart/Chart.yaml", CHART),
            ("chart/values.yaml", "v: chart\n"),
            ("chart/templates/cm.yaml", TEMPLATE),
        ]);
        let mut options = helm_options("./chart", serde_json::json!({"v": "bundle"}));
        options.default_namespace = "apps".into();
        let objects = render_bundle(&res, &options, "my-bundle").unwrap();
        assert_eq!(
            objects,
            [
                serde_json::json!({"kind": "ConfigMap", "metadata": {"name": "my-bundle", "namespace": "apps"},
                "data": {"v": "bundle", "ns": "apps"}})
            ]
        );
        options.helm.as_mut().unwrap().release_name = "rel".into();
        options.target_namespace = "target".into();
        let objects = render_bundle(&res, &options, "my-bundle").unwrap();
        assert_eq!(objects[0]["metadata"]["name"], "rel");
        assert_eq!(objects[0]["data"]["ns"], "target");
        assert_eq!(
            render(&res, &helm_options("chart", serde_json::json!({}))).unwrap()[0]["metadata"]["name"],
            "release-name"
        );
    }

    #[test]
    fn template_errors_and_remote_charts_fail_clearly() {
        let res = resources(&[
            ("Chart.yaml", CHART),
            (
                "templates/cm.yaml",
                "a: {{ required \"v is required\" .Values.v }}\n",
            ),
        ]);
        let err = render(&res, &BundleDeploymentOptions::default()).unwrap_err();
        // The chart engine's own error, kept whole: a template that failed.
        let RenderError::Helm { problem, .. } = &err else {
            panic!("{err:?}");
        };
        assert!(
            matches!(
                **problem,
                helm::HelmProblem::Chart(fleet_helm::ChartError::Template(_))
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("v is required"), "{err}");
        let res = resources(&[("a.yaml", "kind: A\n")]);
        let err = render(
            &res,
            &helm_options("oci://registry.example/chart", serde_json::json!({})),
        )
        .unwrap_err();
        let RenderError::Helm { problem, .. } = &err else {
            panic!("{err:?}");
        };
        assert!(
            matches!(**problem, helm::HelmProblem::NotStored { .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("needs the network"), "{err}");
    }

    #[test]
    fn helm_output_is_post_rendered_by_the_kustomization() {
        let res = resources(&[
            ("chart/Chart.yaml", CHART),
            ("chart/templates/cm.yaml", TEMPLATE),
            ("k/kustomization.yaml", "namePrefix: pre-\n"),
        ]);
        let mut options = helm_options("chart", serde_json::json!({"v": 1}));
        options.kustomize = Some(KustomizeOptions { dir: "k".into() });
        let objects = render_bundle(&res, &options, "b").unwrap();
        assert_eq!(objects.len(), 1);
        assert_eq!(objects[0]["metadata"]["name"], "pre-b");
        assert_eq!(
            objects[0]["data"]["ns"], "default",
            "Helm's release namespace"
        );
    }

    #[test]
    fn kustomize_bundles_and_raw_templates_render() {
        let res = resources(&[
            (
                "base/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
            ),
            ("base/kustomization.yaml", "resources: [cm.yaml]\n"),
            (
                "dev/kustomization.yaml",
                "resources: [../base]\nnameSuffix: -dev\n",
            ),
        ]);
        let options = BundleDeploymentOptions {
            kustomize: Some(KustomizeOptions {
                dir: "./dev".into(),
            }),
            ..Default::default()
        };
        assert_eq!(
            render(&res, &options).unwrap()[0]["metadata"]["name"],
            "x-dev"
        );
        let err = render(
            &resources(&[("kustomization.yaml", "resources: [missing.yaml]\n")]),
            &Default::default(),
        )
        .unwrap_err();
        // fleet-kustomize's error, kept whole: the missing resource is named.
        let RenderError::Kustomize { problem, .. } = &err else {
            panic!("{err:?}");
        };
        let fleet_kustomize::Error::Missing { entry, .. } = &**problem else {
            panic!("{err:?}");
        };
        assert_eq!(entry, "missing.yaml");
        assert!(err.to_string().starts_with("kustomize \".\": "), "{err}");

        let res = resources(&[
            ("a.yaml", "kind: Plain\nv: '{{ x }}'\n"),
            (
                "templates/t.yaml",
                "kind: Templated\nname: {{ .Chart.Name }}-{{ .Values.v }}\n",
            ),
        ]);
        let objects =
            render_bundle(&res, &helm_options("", serde_json::json!({"v": 2})), "bun").unwrap();
        assert_eq!(objects[0]["name"], "bun-2");
        assert_eq!(objects[1]["v"], "{{ x }}");
    }

    /// Fleet's quickstart layout: no fleet.yaml, no namespaces; every style lands in `default`.
    #[test]
    fn objects_without_a_namespace_land_in_default_in_every_style() {
        const SERVICE: &str = "apiVersion: v1\nkind: Service\nmetadata:\n  name: frontend\n";
        const ROLE: &str =
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\n";
        let none = BundleDeploymentOptions::default();
        let namespaces = |objects: Vec<Value>| {
            objects
                .iter()
                .map(|o| {
                    let namespace = o["metadata"].get("namespace").and_then(Value::as_str);
                    (o["kind"].to_string(), namespace.map(str::to_string))
                })
                .collect::<BTreeMap<_, _>>()
        };
        let in_default = BTreeMap::from([
            ("\"Service\"".to_string(), Some("default".to_string())),
            ("\"ClusterRole\"".to_string(), None),
        ]);

        let raw = resources(&[("frontend-service.yaml", SERVICE), ("role.yaml", ROLE)]);
        assert_eq!(namespaces(render(&raw, &none).unwrap()), in_default);

        let chart = resources(&[
            ("Chart.yaml", CHART),
            ("templates/svc.yaml", SERVICE),
            ("templates/role.yaml", ROLE),
        ]);
        assert_eq!(namespaces(render(&chart, &none).unwrap()), in_default);

        let kustomized = resources(&[
            ("kustomization.yaml", "resources: [svc.yaml, role.yaml]\n"),
            ("svc.yaml", SERVICE),
            ("role.yaml", ROLE),
        ]);
        assert_eq!(namespaces(render(&kustomized, &none).unwrap()), in_default);

        let templated = resources(&[("templates/svc.yaml", SERVICE), ("role.yaml", ROLE)]);
        assert_eq!(namespaces(render(&templated, &none).unwrap()), in_default);
    }
}
