//! The reader's side of remote charts: which of a bundle's `helm` options name charts to download, adding a
//! downloaded chart's files under its `.chart/<checksum>/` prefix, and `helm dependency update` for charts in
//! the bundle whose `Chart.yaml` names dependencies from repositories that are not in their `charts/`.

use std::collections::BTreeMap;

use fleet_api::{BundleTarget, HelmOptions};
use serde::Deserialize;

use super::{ChartFetcher, ChartRef, DependencyRef, chart_prefix};
use crate::error::ReadError;
use crate::resources::BundleFile;

/// A remote chart of a bundle and the prefix its files take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteChart {
    pub prefix: String,
    pub chart: ChartRef,
}

/// The remote charts the bundle's root and customization `helm` options name, once per prefix, as Fleet's
/// `addRemoteCharts` finds them ([`ChartRef::of`]).
pub fn remote_charts(
    file: &str,
    root: Option<&HelmOptions>,
    targets: &[BundleTarget],
) -> Result<Vec<RemoteChart>, ReadError> {
    let helms = root
        .into_iter()
        .chain(targets.iter().filter_map(|t| t.options.helm.as_ref()));
    let mut found: Vec<RemoteChart> = Vec::new();
    for helm in helms {
        let Some(chart) = ChartRef::of(helm) else {
            continue;
        };
        if let ChartRef::Url { url } = &chart
            && !url.contains("://")
        {
            return Err(ReadError::ChartDownload {
                file: file.to_string(),
                chart: format!("{url:?}"),
                reason: "a git source; charts are downloaded from Helm repositories, oci:// registries and \
                         http(s) URLs"
                    .to_string(),
            });
        }
        let prefix = chart_prefix(helm);
        if !found.iter().any(|r| r.prefix == prefix) {
            found.push(RemoteChart { prefix, chart });
        }
    }
    Ok(found)
}

/// Downloads each remote chart and puts its files, under its prefix, before the bundle's own files.
pub fn add_remote_charts(
    files: &mut Vec<BundleFile>,
    file: &str,
    remote: &[RemoteChart],
    charts: &dyn ChartFetcher,
) -> Result<(), ReadError> {
    let mut added = Vec::new();
    for chart in remote {
        let fetched = charts
            .fetch(&chart.chart)
            .map_err(|err| ReadError::ChartDownload {
                file: file.to_string(),
                chart: chart.chart.describe(),
                reason: err.reason,
            })?;
        let mut fetched: Vec<BundleFile> = fetched
            .into_iter()
            .map(|(name, bytes)| BundleFile {
                name: format!("{}/{name}", chart.prefix),
                bytes,
            })
            .collect();
        fetched.sort_by(|a, b| a.name.cmp(&b.name));
        added.extend(fetched);
    }
    if !added.is_empty() {
        added.append(files);
        *files = added;
    }
    Ok(())
}

#[derive(Debug, Default, Deserialize)]
struct Dependencies {
    #[serde(default)]
    dependencies: Vec<Dependency>,
}

#[derive(Debug, Default, Deserialize)]
struct Dependency {
    #[serde(default)]
    name: String,
    #[serde(default)]
    version: String,
    #[serde(default)]
    repository: String,
}

/// Whether a dependency's `repository` is one to download from (not `file://`, not a repository alias).
fn downloadable(repository: &str) -> bool {
    ["https://", "http://", "oci://"]
        .iter()
        .any(|scheme| repository.starts_with(scheme))
}

/// For each chart among `files` (a `Chart.yaml`), downloads the dependencies from repositories that its
/// `charts/` lacks into `charts/<name>-<version>.tgz`, as Fleet runs `helm dependency update` when a chart's
/// dependencies are missing. A `Chart.lock` listing the dependency pins its version (reproducible Bundles).
pub fn add_dependencies(
    files: &mut Vec<BundleFile>,
    file: &str,
    charts: &dyn ChartFetcher,
) -> Result<(), ReadError> {
    let by_name: BTreeMap<&str, &[u8]> = files
        .iter()
        .map(|f| (f.name.as_str(), f.bytes.as_slice()))
        .collect();
    let chart_dirs: Vec<String> = by_name
        .keys()
        .filter_map(|name| {
            if *name == "Chart.yaml" {
                Some(String::new())
            } else {
                name.strip_suffix("/Chart.yaml").map(|d| format!("{d}/"))
            }
        })
        .collect();
    let mut added = Vec::new();
    for chart_dir in chart_dirs {
        let chart_yaml = format!("{chart_dir}Chart.yaml");
        let parse = |name: &str| -> Result<Dependencies, ReadError> {
            let Some(bytes) = by_name.get(name) else {
                return Ok(Dependencies::default());
            };
            let text = String::from_utf8_lossy(bytes);
            let parsed: Option<Dependencies> = fleet_yaml::parse::from_str(&text, name)?;
            Ok(parsed.unwrap_or_default())
        };
        let wanted = parse(&chart_yaml)?;
        if wanted.dependencies.is_empty() {
            continue;
        }
        let locked = parse(&format!("{chart_dir}Chart.lock"))?;
        for dependency in &wanted.dependencies {
            if !downloadable(&dependency.repository) {
                continue;
            }
            let charts_dir = format!("{chart_dir}charts/");
            let present = by_name.keys().any(|name| {
                name.strip_prefix(charts_dir.as_str()).is_some_and(|rest| {
                    rest.strip_prefix(dependency.name.as_str())
                        .is_some_and(|tail| {
                            tail.starts_with('/')
                                || (tail.starts_with('-') && tail.ends_with(".tgz"))
                        })
                })
            });
            if present {
                continue;
            }
            let version = locked
                .dependencies
                .iter()
                .find(|l| l.name == dependency.name && l.repository == dependency.repository)
                .map_or(dependency.version.as_str(), |l| l.version.as_str());
            let reference = DependencyRef {
                name: dependency.name.clone(),
                version: version.to_string(),
                repository: dependency.repository.clone(),
            };
            let (resolved, archive) =
                charts
                    .fetch_dependency(&reference)
                    .map_err(|err| ReadError::ChartDownload {
                        file: file.to_string(),
                        chart: format!(
                            "dependency {:?} of {chart_yaml} from {:?}",
                            dependency.name,
                            super::redact_url(&dependency.repository),
                        ),
                        reason: err.reason,
                    })?;
            added.push(BundleFile {
                name: format!("{charts_dir}{}-{resolved}.tgz", dependency.name),
                bytes: archive,
            });
        }
    }
    files.extend(added);
    files.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(())
}
