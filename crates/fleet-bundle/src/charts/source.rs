//! Charts that are paths in the bundle: each must exist inside the bundle directory. Which charts are paths and
//! which are downloads is [`ChartRef::of`]'s decision; a local path that does not exist is reported as "not
//! found" (Fleet itself fails on it only when it tries to copy it) rather than as a failed download.

use fleet_api::{BundleTarget, HelmOptions};

use crate::error::ReadError;
use crate::remote::ChartRef;
use crate::tree::{FileTree, TreePath};

/// The `helm` blocks of a bundle that name a chart, each with the fleet.yaml field it comes from.
fn charts<'a>(
    root: Option<&'a HelmOptions>,
    targets: &'a [BundleTarget],
) -> impl Iterator<Item = (String, &'a HelmOptions)> {
    root.map(|helm| ("helm.chart".to_string(), helm))
        .into_iter()
        .chain(targets.iter().filter_map(|target| {
            target.options.helm.as_ref().map(|helm| {
                (
                    format!("targetCustomizations {:?}: helm.chart", target.name),
                    helm,
                )
            })
        }))
        .filter(|(_, helm)| !helm.chart.is_empty() || !helm.repo.is_empty())
}

/// Checks the charts a bundle in `dir` names (in `file`, its fleet.yaml): a local chart (a directory or a packaged
/// `.tgz`) must exist inside the bundle directory. Charts to download are left to [`crate::remote`].
pub fn check(
    tree: &dyn FileTree,
    dir: &TreePath,
    file: &str,
    root: Option<&HelmOptions>,
    targets: &[BundleTarget],
) -> Result<(), ReadError> {
    for (field, helm) in charts(root, targets) {
        if ChartRef::of(helm).is_some() {
            continue;
        }
        let chart_error = |message: String| ReadError::Chart {
            file: file.to_string(),
            field: field.clone(),
            chart: helm.chart.clone(),
            message,
        };
        if helm.chart.starts_with('/') {
            return Err(chart_error(
                "an absolute path; a chart path is relative to the bundle directory".into(),
            ));
        }
        let Some(path) = dir.join_relative(&helm.chart) else {
            return Err(chart_error("leaves the repository".into()));
        };
        if !path.starts_with(dir) {
            // Fleet reads only the bundle directory, so a chart outside it would deploy nothing.
            return Err(chart_error(format!(
                "{path} is outside the bundle directory {}; Fleet reads a chart only from inside its bundle",
                dir.display_root()
            )));
        }
        if tree.entry(&path)?.is_none() {
            return Err(chart_error(format!("{path} not found")));
        }
    }
    Ok(())
}
