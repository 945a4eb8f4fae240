//! Packaged charts in the bundle: `helm.chart: ./mychart-0.1.0.tgz` names a chart archive (as `helm package`
//! writes it) stored among the bundle's files, which is unpacked when the bundle renders. Fleet's own reader
//! keeps such a file as a resource but its agent looks only for a `Chart.yaml`, so there it deploys nothing; we
//! render the chart, as `helm install ./mychart-0.1.0.tgz` would.

use fleet_helm::chart::FileMap;

use crate::{Files, RenderError};

/// The bundle-relative name of the file `chart` (a `helm.chart` value) names: `./` and trailing `/` dropped.
fn normalized(chart: &str) -> &str {
    let chart = chart.trim_end_matches('/');
    chart.strip_prefix("./").unwrap_or(chart)
}

/// Whether `chart` names a chart archive among the bundle's files.
pub fn is_packaged(files: &Files, chart: &str) -> bool {
    let name = normalized(chart);
    (name.ends_with(".tgz") || name.ends_with(".tar.gz")) && files.contains_key(name)
}

/// The files of the packaged chart `chart` names (relative to the chart root), or `None` when it names none.
pub fn unpack(files: &Files, chart: &str) -> Option<Result<FileMap, RenderError>> {
    if !is_packaged(files, chart) {
        return None;
    }
    let name = normalized(chart);
    Some(
        fleet_helm::chart::load::unpack_archive(name, &files[name]).map_err(|err| {
            RenderError::Helm {
                chart: name.to_string(),
                problem: Box::new(err.into()),
            }
        }),
    )
}
