//! Where a bundle's `helm.chart` is. Fleet's reader downloads a chart when `helm.repo` is set or when the chart is
//! not a path that exists in the bundle; it parses `helm.chart` as a go-getter style source
//! (`internal/bundlereader/source.go`), and whatever that parser does not turn into a git or HTTP download is a
//! local path. We follow that parser to tell the two apart, so that a local path that does not exist is reported
//! as "not found" (Fleet itself fails on it only when it tries to copy it) rather than as a download.

use fleet_api::{BundleTarget, HelmOptions};

use crate::error::ReadError;
use crate::tree::{FileTree, TreePath};

/// Whether `helm` names a chart that must be downloaded: `helm.repo` set, or a `helm.chart` Fleet's source parser
/// turns into a download — a URL with a scheme (`oci://`, `https://`, `git://`, `ssh://`…), a forced getter
/// (`git::…`, `http::…`), a GitHub, GitLab or Bitbucket shorthand, or an scp-like `user@host:path`.
pub fn is_remote(helm: &HelmOptions) -> bool {
    if !helm.repo.is_empty() {
        return true;
    }
    let chart = helm.chart.as_str();
    chart.contains("://")
        || chart.contains("::")
        || ["github.com/", "gitlab.com/", "bitbucket.org/"]
            .iter()
            .any(|host| chart.starts_with(host))
        || is_scp_like(chart)
}

/// `user@host:path`, as Fleet's `detectSCPSSH` recognises it.
fn is_scp_like(chart: &str) -> bool {
    let Some((user_host, path)) = chart.split_once(':') else {
        return false;
    };
    let Some((user, host)) = user_host.split_once('@') else {
        return false;
    };
    !user.is_empty() && !host.is_empty() && !host.contains('/') && !path.is_empty()
}

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
        if is_remote(helm) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn helm(chart: &str, repo: &str) -> HelmOptions {
        HelmOptions {
            chart: chart.into(),
            repo: repo.into(),
            ..Default::default()
        }
    }

    #[test]
    fn remote_sources_follow_fleets_source_parser() {
        for remote in [
            helm("nginx", "https://charts.example.com"),
            helm("oci://registry.example.com/charts/web", ""),
            helm("https://example.com/web-1.0.0.tgz", ""),
            helm("git::https://example.com/repo.git//chart", ""),
            helm("github.com/org/repo//chart", ""),
            helm("git@example.com:org/repo.git", ""),
        ] {
            assert!(is_remote(&remote), "{remote:?}");
        }
        for local in ["./chart", "chart", "web-1.0.0.tgz", "../x", "a@b"] {
            assert!(!is_remote(&helm(local, "")), "{local}");
        }
    }
}
