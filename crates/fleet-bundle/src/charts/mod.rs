//! Helm charts that live in the repository, read as Fleet's bundle reader reads them: where `helm.chart` points
//! ([`source`]: a directory or a packaged `.tgz` inside the bundle, or a source to download), the `file://`
//! dependencies vendored into each chart's `charts/` before the bundle is stored ([`dependencies`]). Packaged
//! charts are unpacked when the bundle renders, by `fleet-render`.

pub mod dependencies;
pub mod source;

/// The `dependencies:` of a chart's `Chart.yaml` (or, for `apiVersion: v1` charts without them, of its
/// `requirements.yaml`): `(name, version, repository)` of each.
pub(crate) fn declared_dependencies(
    chart_yaml: &str,
    requirements_yaml: Option<&str>,
    origin: &str,
) -> Result<Vec<Declared>, fleet_yaml::Error> {
    let metadata: serde_json::Value =
        fleet_yaml::parse::from_str::<Option<serde_json::Value>>(chart_yaml, origin)?
            .unwrap_or_default();
    let mut list = metadata.get("dependencies").cloned();
    if list
        .as_ref()
        .is_none_or(|l| l.as_array().is_none_or(Vec::is_empty))
        && let Some(text) = requirements_yaml
    {
        let requirements: serde_json::Value =
            fleet_yaml::parse::from_str::<Option<serde_json::Value>>(text, origin)?
                .unwrap_or_default();
        list = requirements.get("dependencies").cloned();
    }
    let field = |entry: &serde_json::Value, key: &str| match entry.get(key) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    Ok(list
        .and_then(|l| l.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(|entry| Declared {
            name: field(entry, "name"),
            version: field(entry, "version"),
            repository: field(entry, "repository"),
        })
        .collect())
}

/// One entry of a chart's `dependencies:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Declared {
    pub name: String,
    pub version: String,
    pub repository: String,
}

/// The `name` of a `Chart.yaml`, if it has one.
pub(crate) fn chart_name(chart_yaml: &str, origin: &str) -> Result<String, fleet_yaml::Error> {
    let metadata: serde_json::Value =
        fleet_yaml::parse::from_str::<Option<serde_json::Value>>(chart_yaml, origin)?
            .unwrap_or_default();
    Ok(metadata
        .get("name")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_string())
}

/// The `version` of a `Chart.yaml`, if it has one (as text, whatever its YAML type).
pub(crate) fn chart_version(chart_yaml: &str, origin: &str) -> Result<String, fleet_yaml::Error> {
    let metadata: serde_json::Value =
        fleet_yaml::parse::from_str::<Option<serde_json::Value>>(chart_yaml, origin)?
            .unwrap_or_default();
    Ok(match metadata.get("version") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    })
}
