//! Chart dependencies, as Fleet's reader updates them (`internal/helmupdater`): for every chart in a bundle (a
//! directory holding `Chart.yaml`) whose `dependencies:` are not all in its `charts/` directory, and unless
//! `helm.disableDependencyUpdate` is set, Fleet runs Helm's dependency update and stores the result in the bundle.
//! Here a `repository: file://<path>` dependency is read from `<path>` relative to the chart directory (it may be
//! outside the bundle directory, but must be inside the repository) and vendored as the directory
//! `charts/<name>/`. Helm would write `charts/<name>-<version>.tgz` and a `Chart.lock` (whose timestamp would make
//! every read of the same commit a different bundle); Helm loads a subchart directory exactly as the archive, so
//! the rendered output is the same. As in Helm, the dependency must be a chart directory whose version satisfies
//! the dependency's `version` constraint, and it is vendored as it is (its own `file://` dependencies are not
//! resolved). A dependency that cannot be resolved is an error naming the chart, the dependency and the reason:
//! without it, Helm refuses to install the chart. At render time [`missing`] lists what is still not vendored
//! (a chart read with `disableDependencyUpdate`), which Helm refuses too.

use std::collections::BTreeSet;

use fleet_helm::chart::FileMap;

use super::{Declared, chart_name, chart_version, declared_dependencies};
use crate::error::ReadError;
use crate::resources::{self, BundleFile};
use crate::tree::{EntryKind, FileTree, TreePath};

/// Vendors the missing `file://` dependencies of every chart among `files` (the files of the bundle in `dir`,
/// named relative to it) into their `charts/`.
pub fn vendor(
    tree: &dyn FileTree,
    dir: &TreePath,
    files: &mut Vec<BundleFile>,
) -> Result<(), ReadError> {
    let chart_dirs: Vec<String> = files
        .iter()
        .filter_map(|file| chart_dir_of(&file.name))
        .collect();
    let mut added = Vec::new();
    for chart in chart_dirs {
        added.extend(vendor_chart(tree, dir, files, &chart)?);
    }
    if !added.is_empty() {
        files.extend(added);
        files.sort_by(|a, b| a.name.cmp(&b.name));
    }
    Ok(())
}

/// `dir` for a `dir/Chart.yaml` name (`""` for the bundle root).
fn chart_dir_of(name: &str) -> Option<String> {
    if name == "Chart.yaml" {
        Some(String::new())
    } else {
        name.strip_suffix("/Chart.yaml").map(str::to_string)
    }
}

fn prefixed(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

fn text(file: &BundleFile) -> String {
    String::from_utf8_lossy(&file.bytes).into_owned()
}

/// The files to add for the chart in `chart` (relative to the bundle directory `dir`).
fn vendor_chart(
    tree: &dyn FileTree,
    dir: &TreePath,
    files: &[BundleFile],
    chart: &str,
) -> Result<Vec<BundleFile>, ReadError> {
    let find = |name: &str| files.iter().find(|f| f.name == name);
    let chart_yaml_name = prefixed(chart, "Chart.yaml");
    let origin = dir
        .join_relative(&chart_yaml_name)
        .map_or_else(|| chart_yaml_name.clone(), |path| path.to_string());
    let Some(chart_yaml) = find(&chart_yaml_name) else {
        return Ok(Vec::new());
    };
    let requirements = find(&prefixed(chart, "requirements.yaml")).map(text);
    let declared = declared_dependencies(&text(chart_yaml), requirements.as_deref(), &origin)?;
    if declared.is_empty() {
        return Ok(Vec::new());
    }
    let present = present_subcharts(files, chart)?;
    let chart_path = dir
        .join_relative(chart)
        .ok_or_else(|| ReadError::PathOutsideRoot {
            path: chart.to_string(),
        })?;
    let mut added = Vec::new();
    for dependency in declared.iter().filter(|d| !present.contains(&d.name)) {
        let error = |message: String| ReadError::ChartDependency {
            chart: origin.clone(),
            dependency: dependency.name.clone(),
            message,
        };
        let Some(local) = dependency.repository.strip_prefix("file://") else {
            return Err(error(if dependency.repository.is_empty() {
                "found in Chart.yaml, but missing in charts/ directory".to_string()
            } else {
                format!(
                    "repository {:?} is neither file:// nor an http(s):// or oci:// URL (repository aliases \
                     such as @name are not read); vendor the chart into charts/ or name the repository by URL",
                    dependency.repository
                )
            }));
        };
        added.extend(
            vendor_local(tree, files, chart, &chart_path, dependency, local).map_err(
                |message| match message {
                    Vendoring::Message(message) => error(message),
                    Vendoring::Read(err) => err,
                },
            )?,
        );
    }
    Ok(added)
}

enum Vendoring {
    Message(String),
    Read(ReadError),
}

impl From<ReadError> for Vendoring {
    fn from(err: ReadError) -> Self {
        Vendoring::Read(err)
    }
}

impl From<fleet_yaml::Error> for Vendoring {
    fn from(err: fleet_yaml::Error) -> Self {
        Vendoring::Read(err.into())
    }
}

/// The files of the `file://<local>` dependency, named `<chart>/charts/<name>/…`.
fn vendor_local(
    tree: &dyn FileTree,
    files: &[BundleFile],
    chart: &str,
    chart_path: &TreePath,
    dependency: &Declared,
    local: &str,
) -> Result<Vec<BundleFile>, Vendoring> {
    let message = |m: String| Vendoring::Message(m);
    if local.starts_with('/') {
        return Err(message(format!(
            "file://{local} is an absolute path outside the repository; use a path relative to the chart"
        )));
    }
    let Some(source) = chart_path.join_relative(local) else {
        return Err(message(format!(
            "file://{local} leaves the repository; a dependency must be inside it"
        )));
    };
    let (source, entry) = match crate::tree::resolve(tree, &TreePath::root(), &source) {
        Ok(found) => found,
        Err(crate::tree::TreeError::NotFound { .. }) => {
            return Err(message(format!("directory {source} not found")));
        }
        Err(err) => return Err(Vendoring::Read(err.into())),
    };
    if entry.kind != EntryKind::Dir {
        return Err(message(format!("{source} is not a chart directory")));
    }
    let mut vendored = resources::read_files(tree, &source, &[])?;
    let Some(sub_chart_yaml) = vendored.iter().find(|f| f.name == "Chart.yaml") else {
        return Err(message(format!("{source}: Chart.yaml file is missing")));
    };
    let origin = source.child("Chart.yaml").to_string();
    let version = chart_version(&text(sub_chart_yaml), &origin)?;
    let constraint = if dependency.version.is_empty() {
        "*"
    } else {
        dependency.version.as_str()
    };
    let parsed = fleet_helm::funcs::semver::parse_version(&version)
        .ok_or_else(|| message(format!("{origin}: invalid version {version:?}")))?;
    let satisfied = fleet_helm::funcs::semver::satisfies(constraint, &parsed)
        .map_err(|err| message(format!("has an invalid version/constraint format: {err}")))?;
    if !satisfied {
        return Err(message(format!(
            "{source} has version {version}, which does not satisfy the constraint {constraint:?}"
        )));
    }
    let target = prefixed(chart, &format!("charts/{}", dependency.name));
    if files
        .iter()
        .any(|f| f.name.starts_with(&format!("{target}/")))
    {
        return Err(message(format!(
            "{target}/ already exists in the bundle and does not hold the chart {:?}",
            dependency.name
        )));
    }
    for file in &mut vendored {
        file.name = format!("{target}/{}", file.name);
    }
    Ok(vendored)
}

/// The chart names of the subcharts in `<chart>/charts/` (directories with a `Chart.yaml`, and archives).
fn present_subcharts(files: &[BundleFile], chart: &str) -> Result<BTreeSet<String>, ReadError> {
    let prefix = prefixed(chart, "charts/");
    let mut names = BTreeSet::new();
    for file in files {
        let Some(rest) = file.name.strip_prefix(&prefix) else {
            continue;
        };
        match rest.split_once('/') {
            Some((_, "Chart.yaml")) => {
                names.insert(chart_name(&text(file), &file.name)?);
            }
            None if rest.ends_with(".tgz") || rest.ends_with(".tar.gz") => {
                if let Some(name) = archive_chart_name(&file.name, &file.bytes) {
                    names.insert(name);
                }
            }
            _ => {}
        }
    }
    Ok(names)
}

/// The chart name inside a chart archive, `None` when it is not one (Helm skips those too).
fn archive_chart_name(path: &str, bytes: &[u8]) -> Option<String> {
    let files = fleet_helm::chart::load::unpack_archive(path, bytes).ok()?;
    let chart_yaml = files.get("Chart.yaml")?.bytes().ok()?;
    chart_name(&String::from_utf8_lossy(chart_yaml), path).ok()
}

/// The dependencies a chart (its files, relative to its root) declares but does not have in `charts/`, by name,
/// as Helm's `CheckDependencies` finds them before it installs.
pub fn missing(chart: &FileMap, origin: &str) -> Result<Vec<String>, String> {
    let read = |name: &str| -> Result<Option<String>, String> {
        match chart.get(name) {
            Some(data) => Ok(Some(
                String::from_utf8_lossy(data.bytes().map_err(|e| e.to_string())?).into_owned(),
            )),
            None => Ok(None),
        }
    };
    let Some(chart_yaml) = read("Chart.yaml")? else {
        return Ok(Vec::new());
    };
    let declared = declared_dependencies(
        &chart_yaml,
        read("requirements.yaml")?.as_deref(),
        &format!("{origin}/Chart.yaml"),
    )
    .map_err(|err| err.to_string())?;
    if declared.is_empty() {
        return Ok(Vec::new());
    }
    let mut present = BTreeSet::new();
    for (name, data) in chart {
        let Some(rest) = name.strip_prefix("charts/") else {
            continue;
        };
        match rest.split_once('/') {
            Some((_, "Chart.yaml")) => {
                let text =
                    String::from_utf8_lossy(data.bytes().map_err(|e| e.to_string())?).into_owned();
                present.insert(chart_name(&text, name).map_err(|err| err.to_string())?);
            }
            None if rest.ends_with(".tgz") || rest.ends_with(".tar.gz") => {
                if let Some(found) =
                    archive_chart_name(name, data.bytes().map_err(|e| e.to_string())?)
                {
                    present.insert(found);
                }
            }
            _ => {}
        }
    }
    Ok(declared
        .into_iter()
        .map(|d| d.name)
        .filter(|name| !present.contains(name))
        .collect())
}

#[cfg(test)]
mod tests {
    use crate::read::{ReadOptions, read_bundles};
    use crate::tree::MemoryTree;

    const APP: &str = "apiVersion: v2\nname: app\nversion: 1.0.0\n";

    fn read_error(tree: &MemoryTree, path: &str) -> String {
        read_bundles(tree, &[path.to_string()], &ReadOptions::default())
            .unwrap_err()
            .to_string()
    }

    fn with_dependency(repository: &str, version: &str) -> MemoryTree {
        let mut tree = MemoryTree::new();
        tree.add_file(
            "apps/web/Chart.yaml",
            format!(
                "{APP}dependencies:\n- name: lib\n  version: {version:?}\n  repository: {repository:?}\n"
            ),
        )
        .add_file("apps/web/templates/cm.yaml", "kind: ConfigMap\n")
        .add_file("shared/lib/Chart.yaml", "apiVersion: v2\nname: lib\nversion: 2.1.0\n")
        .add_file("shared/lib/templates/x.yaml", "kind: X\n")
        .add_file("shared/lib/.hidden", "not vendored\n");
        tree
    }

    #[test]
    fn file_dependencies_outside_the_bundle_are_vendored() {
        let tree = with_dependency("file://../../shared/lib", "^2.0.0");
        let bundle = read_bundles(&tree, &["apps/web".into()], &ReadOptions::default())
            .unwrap()
            .remove(0);
        let names = bundle.spec.resource_names();
        assert_eq!(
            names,
            [
                "Chart.yaml",
                "charts/lib/Chart.yaml",
                "charts/lib/templates/x.yaml",
                "templates/cm.yaml"
            ]
        );
    }

    #[test]
    fn unresolvable_dependencies_are_errors_naming_chart_and_dependency() {
        let cases = [
            (
                "file://../../../outside",
                "^2.0.0",
                "apps/web/Chart.yaml: dependency \"lib\": file://../../../outside leaves the repository; a dependency must be inside it",
            ),
            (
                "file:///etc/charts/lib",
                "^2.0.0",
                "apps/web/Chart.yaml: dependency \"lib\": file:///etc/charts/lib is an absolute path outside the repository; use a path relative to the chart",
            ),
            (
                "file://../../shared/nope",
                "^2.0.0",
                "apps/web/Chart.yaml: dependency \"lib\": directory shared/nope not found",
            ),
            (
                "file://../../shared/lib",
                "~1.0",
                "apps/web/Chart.yaml: dependency \"lib\": shared/lib has version 2.1.0, which does not satisfy the constraint \"~1.0\"",
            ),
            (
                "",
                "^2.0.0",
                "apps/web/Chart.yaml: dependency \"lib\": found in Chart.yaml, but missing in charts/ directory",
            ),
        ];
        for (repository, version, expected) in cases {
            let tree = with_dependency(repository, version);
            assert_eq!(read_error(&tree, "apps/web"), expected, "{repository}");
        }
        // A repository dependency is the remote reader's: offline, it says it cannot download it.
        let tree = with_dependency("https://charts.example.com", "^2.0.0");
        let err = read_error(&tree, "apps/web");
        assert!(
            err.contains("dependency \"lib\" of Chart.yaml from \"https://charts.example.com\"")
                && err.contains("no network access"),
            "{err}"
        );
    }

    #[test]
    fn present_dependencies_and_disabled_updates_are_left_alone() {
        let mut tree = with_dependency("file://../../shared/nope", "^2.0.0");
        tree.add_file(
            "apps/web/charts/lib/Chart.yaml",
            "apiVersion: v2\nname: lib\nversion: 2.0.0\n",
        );
        let bundle = read_bundles(&tree, &["apps/web".into()], &ReadOptions::default())
            .unwrap()
            .remove(0);
        assert_eq!(bundle.spec.resources.len(), 3, "the vendored copy is kept");

        let mut tree = with_dependency("file://../../shared/nope", "^2.0.0");
        tree.add_file(
            "apps/web/fleet.yaml",
            "helm:\n  disableDependencyUpdate: true\n",
        );
        assert!(read_bundles(&tree, &["apps/web".into()], &ReadOptions::default()).is_ok());
    }

    #[test]
    fn missing_lists_what_helm_would_refuse() {
        let chart: fleet_helm::chart::FileMap = [
            (
                "Chart.yaml",
                "apiVersion: v2\nname: a\nversion: 1.0.0\ndependencies:\n- {name: b, version: 1.x}\n- {name: c, version: 1.x}\n",
            ),
            ("charts/x/Chart.yaml", "apiVersion: v2\nname: b\nversion: 1.0.0\n"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec().into()))
        .collect();
        assert_eq!(super::missing(&chart, "a").unwrap(), ["c"]);
    }
}
