//! `helmCharts`: inflating local charts with our own Helm engine (`fleet-helm`) the way kustomize's
//! HelmChartInflationGenerator drives `helm template` — chart under `<chartHome>/<name>`, values file merged with
//! `valuesInline` per `valuesMerge`, additional values files, release name and namespace — and reading the
//! rendered manifests back as resources. Remote charts (`repo`) need the network and are refused.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::files::{self, Files};
use crate::kustomization::{HelmChart, HelmGlobals};
use crate::resource::Resource;

/// Deep merge with kyaml's `merge2` semantics: mappings merge key by key, `null` in `src` removes the key, anything
/// else in `src` replaces.
fn merge(dest: &mut Value, src: &Value) {
    match (dest, src) {
        (Value::Object(d), Value::Object(s)) => {
            for (k, v) in s {
                if v.is_null() {
                    d.shift_remove(k);
                } else if let Some(existing) = d.get_mut(k) {
                    merge(existing, v);
                } else {
                    d.insert(k.clone(), v.clone());
                }
            }
        }
        (d, s) => *d = s.clone(),
    }
}

fn read_values(
    files: &impl Files,
    path: &str,
    kfile: &str,
    field: &str,
    entry: &str,
) -> Result<Value> {
    let bytes = files.read(path).ok_or_else(|| Error::Missing {
        file: kfile.into(),
        field: field.into(),
        entry: entry.into(),
        resolved: path.into(),
    })?;
    let docs = crate::yaml::documents(&bytes, path)?;
    Ok(docs
        .into_iter()
        .next()
        .unwrap_or_else(|| Value::Object(Map::new())))
}

/// Options of the Helm rendering that are not in the kustomization.
#[derive(Debug, Clone, Default)]
pub struct HelmOptions {
    /// `.Capabilities.KubeVersion` when a chart entry gives none (`None`: the Helm engine's default).
    pub kube_version: Option<String>,
}

/// Renders one `helmCharts` entry.
pub fn inflate(
    files: &impl Files,
    dir: &str,
    kfile: &str,
    globals: Option<&HelmGlobals>,
    chart: &HelmChart,
    options: &HelmOptions,
) -> Result<Vec<Resource>> {
    let what = format!("helmCharts {:?}", chart.name);
    if chart.name.is_empty() {
        return Err(Error::invalid(
            kfile,
            "helmCharts entry without a name; give the chart's `name`",
        ));
    }
    if !chart.name_template.is_empty() {
        return Err(Error::invalid(
            kfile,
            format!("{what}: nameTemplate is not supported; set releaseName instead"),
        ));
    }
    let home = globals
        .map(|g| g.chart_home.as_str())
        .filter(|h| !h.is_empty())
        .unwrap_or("charts");
    let chart_home = crate::root::resolve_in_root(dir, kfile, "helmGlobals.chartHome", home)?;
    // Like kustomize: a chart with both `repo` and `version` is looked for (pulled, there) under
    // `<chartHome>/<name>-<version>/<name>`, any other under `<chartHome>/<name>`.
    let chart_home = if !chart.repo.is_empty() && !chart.version.is_empty() {
        files::join(&chart_home, &format!("{}-{}", chart.name, chart.version)).unwrap_or_default()
    } else {
        chart_home
    };
    let chart_dir = files::join(&chart_home, &chart.name).unwrap_or_default();
    if !files.is_dir(&chart_dir) {
        if !chart.repo.is_empty() {
            return Err(Error::invalid(
                kfile,
                format!(
                    "{what}: the chart is not in {} and pulling it from {:?} needs the network; vendor the chart \
                     into the repository under {}/{}",
                    files::display(&chart_home),
                    chart.repo,
                    files::display(&chart_home),
                    chart.name
                ),
            ));
        }
        return Err(Error::Missing {
            file: kfile.into(),
            field: "helmCharts".into(),
            entry: chart.name.clone(),
            resolved: chart_dir,
        });
    }
    let mut values = if chart.values_file.is_empty() {
        let path = format!("{chart_dir}/values.yaml");
        if files.read(&path).is_some() {
            read_values(files, &path, kfile, "helmCharts.valuesFile", "values.yaml")?
        } else {
            Value::Object(Map::new())
        }
    } else {
        let path =
            crate::root::resolve_in_root(dir, kfile, "helmCharts.valuesFile", &chart.values_file)?;
        read_values(
            files,
            &path,
            kfile,
            "helmCharts.valuesFile",
            &chart.values_file,
        )?
    };
    if let Some(inline) = chart
        .values_inline
        .as_ref()
        .filter(|v| v.as_object().is_some_and(|m| !m.is_empty()))
    {
        match chart.values_merge.as_str() {
            "" | "override" => merge(&mut values, inline),
            "merge" => {
                let mut base = inline.clone();
                merge(&mut base, &values);
                values = base;
            }
            "replace" => values = inline.clone(),
            other => {
                return Err(Error::invalid(
                    kfile,
                    format!("{what}: valuesMerge {other:?} is not one of merge, override, replace"),
                ));
            }
        }
    }
    for extra in &chart.additional_values_files {
        let path =
            crate::root::resolve_in_root(dir, kfile, "helmCharts.additionalValuesFiles", extra)?;
        let v = read_values(
            files,
            &path,
            kfile,
            "helmCharts.additionalValuesFiles",
            extra,
        )?;
        merge(&mut values, &v);
    }
    let prefix = format!("{chart_dir}/");
    let chart_files: fleet_helm::FileMap = files
        .list(&chart_dir)
        .into_iter()
        .filter_map(|p| {
            let rel = p.strip_prefix(&prefix)?.to_string();
            let bytes = files.read(&p)?.into_owned();
            Some((rel, bytes.into()))
        })
        .collect();
    let mut opts = fleet_helm::RenderOptions {
        release_name: if chart.release_name.is_empty() {
            "release-name".into()
        } else {
            chart.release_name.clone()
        },
        namespace: if chart.namespace.is_empty() {
            "default".into()
        } else {
            chart.namespace.clone()
        },
        api_versions: chart.api_versions.clone(),
        include_crds: chart.include_crds,
        chart_origin: Some(chart_dir.clone()),
        ..Default::default()
    };
    if let Some(kv) = Some(chart.kube_version.clone())
        .filter(|k| !k.is_empty())
        .or_else(|| options.kube_version.clone())
    {
        opts.kube_version = kv;
    }
    let rendered =
        fleet_helm::render_chart(chart_files, &fleet_helm::value::from_json(&values), &opts)
            .map_err(|e| Error::invalid(kfile, format!("{what}: {e}")))?;
    let origin = format!("{chart_dir} (helmCharts in {kfile})");
    let mut out = Vec::new();
    let manifests = rendered.crds.iter().chain(
        rendered
            .manifests
            .iter()
            .filter(|m| !(chart.skip_hooks && m.hook)),
    );
    for m in manifests {
        for obj in crate::yaml::objects(m.content.as_bytes(), &m.source)? {
            if chart.skip_tests && is_test_hook(&obj) {
                continue;
            }
            out.push(Resource::new(obj, &origin));
        }
    }
    Ok(out)
}

fn is_test_hook(obj: &Value) -> bool {
    crate::resource::str_at(obj, &["metadata", "annotations", "helm.sh/hook"])
        .split(',')
        .any(|h| h.trim().starts_with("test"))
}
