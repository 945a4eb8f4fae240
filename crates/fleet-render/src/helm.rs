//! Helm rendering of bundles through `fleet-helm`, as Fleet's agent renders every bundle as a chart: a Helm-style
//! bundle's chart directory (`helm.chart`, or the bundle root), or — for raw bundles with `templates/` — a chart
//! synthesised from those templates. Values are `helm.values` (the reader already merged `valuesFiles`, targeting
//! merged the customizations); the release is `helm.releaseName` or the bundle's name; the namespace is the
//! target namespace, else the default namespace, else `default`. Remote and OCI charts need the network and fail.

use fleet_api::BundleDeploymentOptions;
use fleet_helm::chart::{FileMap, RenderOptions, render_chart};
use serde_json::Value;

use super::{Files, RenderError};

/// Why a bundle's Helm chart did not render.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HelmProblem {
    /// Loading, valuing or rendering the chart failed (worded as `helm template` words it).
    #[error(transparent)]
    Chart(#[from] fleet_helm::ChartError),
    /// The chart comes from a Helm repository or OCI registry and the Bundle does not hold it.
    #[error(
        "chart {chart:?} comes from a remote repository or OCI registry and is not stored in the Bundle; \
         downloading it needs the network, and happens when the Bundle is read (fleet apply without \
         --offline, or the controller)"
    )]
    NotStored { chart: String },
    /// The bundle has no `Chart.yaml` where the chart should be.
    #[error("chart {chart:?}: no Chart.yaml in the bundle at {chart}/Chart.yaml")]
    NoChartYaml { chart: String },
    /// `Chart.yaml` declares dependencies that `charts/` lacks (Helm's install refuses such a chart).
    #[error(
        "found in Chart.yaml, but missing in charts/ directory: {} (Fleet vendors file:// \
         dependencies unless helm.disableDependencyUpdate is set; otherwise vendor them into charts/)",
        .0.join(", ")
    )]
    MissingDependencies(Vec<String>),
    /// The chart's dependency declarations could not be read (`fleet-bundle`'s message).
    #[error("{0}")]
    Dependencies(String),
}

/// Helm's release name when neither `helm.releaseName` nor a bundle name is known.
const FALLBACK_RELEASE_NAME: &str = "release-name";

/// The chart directory as a bundle-relative prefix: `""` for the root, else `dir/` (without `./`).
fn normalized_dir(chart_dir: &str) -> String {
    let dir = chart_dir.trim_matches('/');
    let dir = dir.strip_prefix("./").unwrap_or(dir);
    if dir.is_empty() || dir == "." {
        String::new()
    } else {
        format!("{dir}/")
    }
}

/// The files of the chart in `chart_dir`, keyed relative to the chart.
pub fn chart_files(files: &Files, chart_dir: &str) -> FileMap {
    let prefix = normalized_dir(chart_dir);
    files
        .iter()
        .filter_map(|(name, bytes)| {
            name.strip_prefix(prefix.as_str())
                .map(|rel| (rel.to_string(), bytes.clone().into()))
        })
        .collect()
}

/// The release name Fleet uses: `helm.releaseName`, else the bundle (deployment) name.
pub fn release_name(options: &BundleDeploymentOptions, bundle_name: &str) -> String {
    let configured = options
        .helm
        .as_ref()
        .map_or("", |helm| helm.release_name.as_str());
    if !configured.is_empty() {
        configured.to_string()
    } else if !bundle_name.is_empty() {
        bundle_name.to_string()
    } else {
        FALLBACK_RELEASE_NAME.to_string()
    }
}

/// Renders `chart` (files relative to the chart root) with the bundle's values into `helm template` output text.
pub fn render_text(
    chart: FileMap,
    origin: &str,
    options: &BundleDeploymentOptions,
    bundle_name: &str,
) -> Result<String, RenderError> {
    let values = options
        .helm
        .as_ref()
        .and_then(|helm| helm.values.as_ref())
        .map_or_else(
            || Value::Object(Default::default()),
            |values| Value::Object(values.0.clone()),
        );
    let opts = RenderOptions {
        release_name: release_name(options, bundle_name),
        namespace: super::namespace::release_namespace(options),
        chart_origin: Some(origin.to_string()),
        ..Default::default()
    };
    let rendered =
        render_chart(chart, &fleet_helm::values_from_json(&values), &opts).map_err(|err| {
            RenderError::Helm {
                chart: origin.to_string(),
                problem: Box::new(err.into()),
            }
        })?;
    if rendered.documents().next().is_none() {
        return Ok(String::new());
    }
    Ok(rendered.to_helm_output())
}

/// Renders the Helm-style bundle whose chart is in `chart_dir` into `helm template` output text.
pub fn render_bundle_chart(
    files: &Files,
    chart_dir: &str,
    options: &BundleDeploymentOptions,
    bundle_name: &str,
) -> Result<String, RenderError> {
    let origin = match normalized_dir(chart_dir).trim_end_matches('/') {
        "" => ".".to_string(),
        dir => dir.to_string(),
    };
    let mut chart = chart_files(files, chart_dir);
    if !chart.contains_key("Chart.yaml")
        && let Some(unpacked) = crate::packaged::unpack(files, chart_dir)
    {
        chart = unpacked?;
    }
    if !chart.contains_key("Chart.yaml") {
        let remote = options
            .helm
            .as_ref()
            .is_some_and(|helm| fleet_bundle::remote::ChartRef::of(helm).is_some());
        let problem = if remote || files.keys().any(|n| n.starts_with(".chart/")) {
            HelmProblem::NotStored {
                chart: origin.clone(),
            }
        } else {
            HelmProblem::NoChartYaml {
                chart: origin.clone(),
            }
        };
        return Err(RenderError::Helm {
            chart: origin,
            problem: Box::new(problem),
        });
    }
    let missing =
        fleet_bundle::charts::dependencies::missing(&chart, &origin).map_err(|message| {
            RenderError::Helm {
                chart: origin.clone(),
                problem: Box::new(HelmProblem::Dependencies(message)),
            }
        })?;
    if !missing.is_empty() {
        // Helm's install refuses such a chart (its `CheckDependencies`); rendering without the subchart would
        // deploy an incomplete release and report it Ready.
        return Err(RenderError::Helm {
            chart: origin,
            problem: Box::new(HelmProblem::MissingDependencies(missing)),
        });
    }
    render_text(chart, &origin, options, bundle_name)
}

/// The chart Fleet synthesises for a raw bundle with `templates/`: those templates plus a `Chart.yaml` named after
/// the bundle (Fleet's version carries the manifest ID; ours is `v0.0.0`).
pub fn raw_templates_chart(files: &Files, templates: &[&str], bundle_name: &str) -> FileMap {
    let name = match bundle_name.rsplit('/').next() {
        Some(last) if !last.is_empty() => last,
        _ => "chart",
    };
    let mut chart: FileMap = templates
        .iter()
        .map(|name| (name.to_string(), files[*name].clone().into()))
        .collect();
    chart.insert(
        "Chart.yaml".into(),
        format!("apiVersion: v2\nname: {name}\nversion: v0.0.0\n").into(),
    );
    chart
}

/// Parses `helm template` output into objects, skipping empty documents.
pub fn objects(output: &str, origin: &str) -> Result<Vec<Value>, RenderError> {
    let mut objects = Vec::new();
    for (index, document) in fleet_yaml::parse::documents(output, origin)?
        .into_iter()
        .enumerate()
    {
        match document {
            Value::Null => {}
            Value::Object(_) => objects.push(document),
            _ => {
                return Err(RenderError::Resource {
                    file: origin.to_string(),
                    message: format!("rendered document {} is not a mapping", index + 1),
                });
            }
        }
    }
    Ok(objects)
}
