//! A Helm repository's `index.yaml` and the choice of a chart version in it, as Helm's `IndexFile.Get` chooses:
//! an exact version string wins, else the highest version satisfying the constraint (no constraint: the highest
//! stable version). Relative archive URLs resolve against the repository URL.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::version::{Constraint, compare, parse_version};

/// One chart version listed in an index.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct IndexEntry {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub urls: Vec<String>,
    /// The archive's sha256, hex (Helm's `digest`).
    #[serde(default)]
    pub digest: String,
}

/// A parsed `index.yaml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct RepoIndex {
    #[serde(default)]
    pub entries: BTreeMap<String, Vec<IndexEntry>>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    #[error(transparent)]
    Yaml(#[from] fleet_yaml::Error),
    #[error("chart {chart:?} is not in the repository index")]
    NoChart { chart: String },
    #[error("no version of chart {chart:?} matches {constraint:?} (available: {available})")]
    NoVersion {
        chart: String,
        constraint: String,
        available: String,
    },
    #[error("chart {chart:?} version {version} lists no download URL")]
    NoUrl { chart: String, version: String },
    #[error(transparent)]
    Constraint(#[from] super::version::ConstraintError),
}

impl RepoIndex {
    /// Parses an index; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, IndexError> {
        let parsed: Option<Self> = fleet_yaml::parse::from_str(text, origin)?;
        Ok(parsed.unwrap_or_default())
    }

    /// The entry for `chart` that `version` (a constraint, or empty) selects.
    pub fn select(&self, chart: &str, version: &str) -> Result<&IndexEntry, IndexError> {
        let entries = self
            .entries
            .get(chart)
            .filter(|entries| !entries.is_empty())
            .ok_or_else(|| IndexError::NoChart {
                chart: chart.to_string(),
            })?;
        let chosen = match entries
            .iter()
            .find(|e| !version.is_empty() && e.version == version)
        {
            Some(exact) => Some(exact),
            None => {
                let constraint = Constraint::parse(version)?;
                entries
                    .iter()
                    .filter_map(|e| parse_version(&e.version).map(|v| (v, e)))
                    .filter(|(v, _)| constraint.matches(v))
                    .max_by(|(a, _), (b, _)| compare(a, b))
                    .map(|(_, e)| e)
            }
        };
        let entry = chosen.ok_or_else(|| IndexError::NoVersion {
            chart: chart.to_string(),
            constraint: version.to_string(),
            available: entries
                .iter()
                .map(|e| e.version.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })?;
        if entry.urls.is_empty() {
            return Err(IndexError::NoUrl {
                chart: chart.to_string(),
                version: entry.version.clone(),
            });
        }
        Ok(entry)
    }
}

/// `url` made absolute against the repository URL (Helm's `ResolveReferenceURL`: the repository is a directory).
pub fn resolve_url(repo: &str, url: &str) -> String {
    if url.contains("://") {
        return url.to_string();
    }
    let (base, query) = match repo.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (repo, None),
    };
    let joined = if let Some(absolute) = url.strip_prefix('/') {
        let scheme_end = base.find("://").map_or(0, |i| i + 3);
        let host_end = base[scheme_end..]
            .find('/')
            .map_or(base.len(), |i| scheme_end + i);
        format!("{}/{absolute}", &base[..host_end])
    } else {
        format!("{}/{url}", base.trim_end_matches('/'))
    };
    match query {
        Some(query) if !joined.contains('?') => format!("{joined}?{query}"),
        _ => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INDEX: &str = "apiVersion: v1
entries:
  app:
  - name: app
    version: 2.1.0
    urls: [app-2.1.0.tgz]
    digest: aa
  - name: app
    version: 3.0.0-rc.1
    urls: [app-3.0.0-rc.1.tgz]
  - name: app
    version: 1.2.9
    urls: [https://cdn.example/app-1.2.9.tgz]
  - name: app
    version: 1.2.3
    urls: [app-1.2.3.tgz]
  empty:
  - name: empty
    version: 1.0.0
generated: 2024-01-01T00:00:00Z
";

    #[test]
    fn versions_are_chosen_as_helm_chooses() {
        let index = RepoIndex::parse(INDEX, "index.yaml").unwrap();
        assert_eq!(index.select("app", "").unwrap().version, "2.1.0");
        assert_eq!(index.select("app", "~1.2").unwrap().version, "1.2.9");
        assert_eq!(index.select("app", ">=2.0.0 <3").unwrap().version, "2.1.0");
        assert_eq!(index.select("app", "1.2.3").unwrap().version, "1.2.3");
        assert_eq!(
            index.select("app", "3.0.0-rc.1").unwrap().version,
            "3.0.0-rc.1"
        );
        let err = index.select("app", ">=5").unwrap_err().to_string();
        assert!(err.contains("2.1.0, 3.0.0-rc.1, 1.2.9, 1.2.3"), "{err}");
        assert!(matches!(
            index.select("nope", ""),
            Err(IndexError::NoChart { .. })
        ));
        assert!(matches!(
            index.select("empty", ""),
            Err(IndexError::NoUrl { .. })
        ));
        let err = RepoIndex::parse("entries: [\n", "https://r/index.yaml").unwrap_err();
        assert!(err.to_string().contains("https://r/index.yaml"), "{err}");
    }

    #[test]
    fn relative_urls_resolve_against_the_repository() {
        assert_eq!(
            resolve_url("https://h/charts", "app-1.tgz"),
            "https://h/charts/app-1.tgz"
        );
        assert_eq!(
            resolve_url("https://h/charts/", "app-1.tgz"),
            "https://h/charts/app-1.tgz"
        );
        assert_eq!(
            resolve_url("https://h/charts", "/x/app-1.tgz"),
            "https://h/x/app-1.tgz"
        );
        assert_eq!(
            resolve_url("https://h/charts", "https://o/a.tgz"),
            "https://o/a.tgz"
        );
    }
}
