//! Charts that are not in the bundle, as Fleet's bundle reader names and stores them: which `helm` options name a
//! remote chart ([`ChartRef`]), the `.chart/<sha256>` prefix its files get in the Bundle ([`chart_prefix`]), and
//! the [`ChartFetcher`] seam through which a runtime downloads it (the reader itself stays offline: [`Offline`]
//! refuses). Helm repository indexes and version constraints are in [`index`] and [`version`].

pub mod index;
pub mod read;
pub mod version;

use fleet_api::HelmOptions;
use sha2::{Digest, Sha256};

/// Where a chart that is not in the bundle comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ChartRef {
    /// A chart in a Helm repository (`helm.repo` over HTTP(S)): `index.yaml` names its archive.
    Repo {
        repo: String,
        chart: String,
        version: String,
    },
    /// A chart in an OCI registry: `oci://host[:port]/path/chart`, by version constraint, tag or digest.
    Oci { reference: String, version: String },
    /// A chart archive (`.tgz`) at a URL.
    Url { url: String },
}

impl ChartRef {
    /// The remote chart `helm` names, or `None` when `helm.chart` is a path in the bundle. This is the one
    /// classifier: the reader checks that what it is not exists in the bundle, and downloads what it is. Any
    /// `helm.repo` is remote (an `oci://` repo is the chart's full reference), as in Fleet's `addRemoteCharts`;
    /// otherwise `helm.chart` is remote when Fleet's go-getter style source parser
    /// (`internal/bundlereader/source.go`) would turn it into a download: a URL with a scheme (`oci://`,
    /// `https://`, `git://`…), a forced getter (`git::…`), a GitHub, GitLab or Bitbucket shorthand, or an
    /// scp-like `user@host:path`. Everything else is a local path, so a missing one is "not found" rather than
    /// a failed download.
    pub fn of(helm: &HelmOptions) -> Option<Self> {
        if helm.repo.starts_with("oci://") {
            return Some(Self::Oci {
                reference: helm.repo.clone(),
                version: helm.version.clone(),
            });
        }
        if !helm.repo.is_empty() {
            return Some(Self::Repo {
                repo: helm.repo.clone(),
                chart: helm.chart.clone(),
                version: helm.version.clone(),
            });
        }
        let chart = helm.chart.as_str();
        if chart.starts_with("oci://") {
            return Some(Self::Oci {
                reference: chart.to_string(),
                version: helm.version.clone(),
            });
        }
        let downloaded = chart.contains("://")
            || chart.contains("::")
            || ["github.com/", "gitlab.com/", "bitbucket.org/"]
                .iter()
                .any(|host| chart.starts_with(host))
            || is_scp_like(chart);
        downloaded.then(|| Self::Url {
            url: chart.to_string(),
        })
    }

    /// The chart `helm` names when there is no bundle to hold it (a HelmOp): as [`ChartRef::of`], and any other
    /// non-empty `helm.chart` is taken as a URL (which then fails to download with a message naming it).
    pub fn without_bundle(helm: &HelmOptions) -> Option<Self> {
        Self::of(helm).or_else(|| {
            (!helm.chart.is_empty()).then(|| Self::Url {
                url: helm.chart.clone(),
            })
        })
    }

    /// How the chart is named in messages: the repository or registry and the chart, without credentials.
    pub fn describe(&self) -> String {
        match self {
            Self::Repo {
                repo,
                chart,
                version,
            } => with_version(format!("{chart:?} from {:?}", redact_url(repo)), version),
            Self::Oci { reference, version } => with_version(redact_url(reference), version),
            Self::Url { url } => redact_url(url),
        }
    }
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

fn with_version(what: String, version: &str) -> String {
    if version.is_empty() {
        what
    } else {
        format!("{what} version {version:?}")
    }
}

/// A URL without its `user:password@` part, fit for messages.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

/// Fleet's `checksum`: the directory (`.chart/<hex sha256 of "chart:repo:version">`) under which a downloaded
/// chart's files are stored in the Bundle, and where the agent looks for them with the deployment's options.
pub fn chart_prefix(helm: &HelmOptions) -> String {
    let digest = Sha256::digest(format!("{}:{}:{}", helm.chart, helm.repo, helm.version));
    format!(".chart/{}", hex::encode(digest))
}

/// Where a downloaded chart is among a bundle's resource `names` for the (merged) options `helm`: the directory
/// of `<prefix>/Chart.yaml` or `<prefix>/<dir>/Chart.yaml` (Fleet's `matchesExternalChartYAML`).
pub fn stored_chart_dir<'a>(
    names: impl IntoIterator<Item = &'a String>,
    helm: &HelmOptions,
) -> Option<String> {
    let prefix = format!("{}/", chart_prefix(helm));
    names.into_iter().find_map(|name| {
        let rest = name.strip_prefix(prefix.as_str())?;
        if rest == "Chart.yaml" {
            return Some(prefix.trim_end_matches('/').to_string());
        }
        let (dir, file) = rest.split_once('/')?;
        (file == "Chart.yaml").then(|| format!("{prefix}{dir}"))
    })
}

/// Why a chart could not be had. The reason never holds credentials.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct FetchError {
    pub reason: String,
}

impl FetchError {
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }
}

/// A chart dependency of a chart in the bundle, as `Chart.yaml` (or `Chart.lock`) names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DependencyRef {
    pub name: String,
    /// The version constraint (from `Chart.yaml`) or the locked version (from `Chart.lock`).
    pub version: String,
    /// `https://…` repository or `oci://…` registry path (without the chart name).
    pub repository: String,
}

/// Downloads what the reader cannot find in the tree. Implemented by the runtime crate that owns the network.
pub trait ChartFetcher: Sync {
    /// The files of `chart`, named as in the archive (`<chart-name>/Chart.yaml`, …).
    fn fetch(&self, chart: &ChartRef) -> Result<Vec<(String, Vec<u8>)>, FetchError>;

    /// A dependency's chart archive (`.tgz`) and the version it resolved to.
    fn fetch_dependency(&self, dependency: &DependencyRef)
    -> Result<(String, Vec<u8>), FetchError>;
}

/// The fetcher of a reader without network access: every remote chart is an error saying so.
#[derive(Debug, Clone, Copy, Default)]
pub struct Offline;

impl ChartFetcher for Offline {
    fn fetch(&self, _chart: &ChartRef) -> Result<Vec<(String, Vec<u8>)>, FetchError> {
        Err(FetchError::new(
            "the chart is not in the bundle and this reader has no network access to download it",
        ))
    }

    fn fetch_dependency(&self, _: &DependencyRef) -> Result<(String, Vec<u8>), FetchError> {
        Err(FetchError::new(
            "the dependency is not in the chart's charts/ and this reader has no network access to download it",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn helm(chart: &str, repo: &str, version: &str) -> HelmOptions {
        HelmOptions {
            chart: chart.into(),
            repo: repo.into(),
            version: version.into(),
            ..Default::default()
        }
    }

    #[test]
    fn remote_charts_are_classified_as_fleet_does() {
        assert_eq!(ChartRef::of(&helm("./chart", "", "")), None);
        assert_eq!(ChartRef::of(&helm("missing", "", "")), None);
        assert_eq!(
            ChartRef::of(&helm("nginx", "https://charts.example/", "~1.2")),
            Some(ChartRef::Repo {
                repo: "https://charts.example/".into(),
                chart: "nginx".into(),
                version: "~1.2".into()
            })
        );
        assert_eq!(
            ChartRef::of(&helm("", "oci://reg.example/charts/app", "1.0.0")),
            Some(ChartRef::Oci {
                reference: "oci://reg.example/charts/app".into(),
                version: "1.0.0".into()
            })
        );
        assert_eq!(
            ChartRef::of(&helm("oci://reg.example/charts/app", "", "")),
            Some(ChartRef::Oci {
                reference: "oci://reg.example/charts/app".into(),
                version: String::new()
            })
        );
        assert_eq!(
            ChartRef::of(&helm("https://example.com/web-1.0.0.tgz", "", "")),
            Some(ChartRef::Url {
                url: "https://example.com/web-1.0.0.tgz".into()
            })
        );
    }

    #[test]
    fn without_a_bundle_every_named_chart_is_a_download() {
        assert_eq!(
            ChartRef::without_bundle(&helm("nginx", "", "")),
            Some(ChartRef::Url {
                url: "nginx".into()
            })
        );
        assert_eq!(ChartRef::without_bundle(&helm("", "", "")), None);
        assert_eq!(
            ChartRef::without_bundle(&helm("nginx", "https://r/", "1.0.0")),
            ChartRef::of(&helm("nginx", "https://r/", "1.0.0"))
        );
    }

    #[test]
    fn sources_fleets_parser_downloads_are_remote_and_everything_else_is_a_path() {
        for remote in [
            "git::https://example.com/repo.git//chart",
            "github.com/org/repo//chart",
            "git@example.com:org/repo.git",
            "git://example.com/repo",
        ] {
            assert!(ChartRef::of(&helm(remote, "", "")).is_some(), "{remote}");
        }
        for local in ["./chart", "chart", "web-1.0.0.tgz", "../x", "a@b", ""] {
            assert_eq!(ChartRef::of(&helm(local, "", "")), None, "{local}");
        }
    }

    #[test]
    fn the_prefix_is_fleets_checksum_of_chart_repo_and_version() {
        // sha256("nginx:https://r/:1.0.0")
        let expected = hex::encode(Sha256::digest(b"nginx:https://r/:1.0.0"));
        assert_eq!(
            chart_prefix(&helm("nginx", "https://r/", "1.0.0")),
            format!(".chart/{expected}")
        );
        assert_ne!(
            chart_prefix(&helm("nginx", "https://r/", "1.0.0")),
            chart_prefix(&helm("nginx", "https://r/", "1.0.1"))
        );
    }

    #[test]
    fn credentials_in_urls_are_redacted() {
        assert_eq!(
            redact_url("https://user:secret@host:8443/charts"),
            "https://host:8443/charts"
        );
        assert_eq!(redact_url("https://host/a@b"), "https://host/a@b");
        let described = ChartRef::Repo {
            repo: "https://u:pw@h/".into(),
            chart: "c".into(),
            version: String::new(),
        }
        .describe();
        assert!(!described.contains("pw"), "{described}");
    }
}
