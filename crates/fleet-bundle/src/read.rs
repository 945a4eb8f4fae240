//! From a file tree to Bundles, as `fleet apply` builds them: discovery, the options file, resources,
//! Helm values files, targets (fleet.yaml targets and customizations, `overrideTargets` or the GitRepo's
//! targets file, the default target), labels and the options forced from the command line. Bundles whose
//! JSON exceeds 1,000,000 bytes are re-read with every resource stored `base64+gz`, as Fleet does.

use std::collections::BTreeMap;

use fleet_api::{
    Bundle, BundleSpec, BundleTarget, CorrectDrift, GenericMap, GitTarget, HelmOptions, ImageScan,
    labels,
};
use serde_json::Value;

use crate::charts;
use crate::discover::{self, BundleLocation};
use crate::error::ReadError;
use crate::fleetyaml::{FleetYaml, FleetYamlError};
use crate::names;
use crate::remote::{ChartFetcher, Offline};
use crate::resources;
use crate::tree::{FileTree, TreePath};

/// Bundles at or above this JSON size get compressed resources (Fleet's threshold).
pub const COMPRESS_THRESHOLD: usize = 1_000_000;

/// The GitRepo-level settings `fleet apply` receives on its command line.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// The GitRepo (or CLI bundle) name that prefixes bundle names.
    pub repo_name: String,
    /// Namespace of the Bundles (`-n`, default `fleet-local`).
    pub namespace: String,
    /// Labels added to every Bundle (`-l`), before the fleet.yaml labels.
    pub labels: BTreeMap<String, String>,
    /// The commit, recorded as the `fleet.cattle.io/commit` label.
    pub commit: Option<String>,
    pub service_account: String,
    pub target_namespace: String,
    pub paused: bool,
    pub keep_resources: bool,
    pub delete_namespace: bool,
    pub correct_drift: Option<CorrectDrift>,
    pub sync_generation: i64,
    /// Store every resource `base64+gz` (`-c`).
    pub compress: bool,
    /// The GitRepo's targets (`--targets-file`); ignored by bundles with `overrideTargets`.
    pub targets: Option<TargetsSpec>,
    /// Driven scan separator: when set, paths are `base[<sep>options]` entries, not globs to walk.
    pub driven_scan_separator: Option<String>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            repo_name: String::new(),
            namespace: "fleet-local".to_string(),
            labels: BTreeMap::new(),
            commit: None,
            service_account: String::new(),
            target_namespace: String::new(),
            paused: false,
            keep_resources: false,
            delete_namespace: false,
            correct_drift: None,
            sync_generation: 0,
            compress: false,
            targets: None,
            driven_scan_separator: None,
        }
    }
}

/// The content of a targets file: a `BundleSpec` fragment holding the GitRepo's targets and restrictions.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetsSpec {
    #[serde(default)]
    pub targets: Vec<BundleTarget>,
    #[serde(default)]
    pub target_restrictions: Vec<GitTarget>,
}

impl TargetsSpec {
    /// Parses a targets file; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, ReadError> {
        let parsed: Option<Self> = fleet_yaml::parse::from_str(text, origin)?;
        Ok(parsed.unwrap_or_default())
    }

    /// What a GitRepo without `targets` gets: `{name: default, clusterGroup: default}` as target and as
    /// restriction. `fleet test` and `fleet target` read bundles with it so that customizations behave as they do
    /// in a cluster.
    pub fn gitrepo_default() -> Self {
        let target = GitTarget {
            name: "default".into(),
            cluster_group: "default".into(),
            ..Default::default()
        };
        Self {
            targets: vec![BundleTarget {
                name: target.name.clone(),
                cluster_group: target.cluster_group.clone(),
                ..Default::default()
            }],
            target_restrictions: vec![target],
        }
    }
}

/// Reads every bundle under `paths` (globs; `.` when empty), in discovery order. Directories that yield no
/// resources are skipped; finding nothing at all is an error.
pub fn read_bundles(
    tree: &dyn FileTree,
    paths: &[String],
    options: &ReadOptions,
) -> Result<Vec<Bundle>, ReadError> {
    read_bundles_with_progress(tree, paths, options, &mut |_, _| {})
}

/// [`read_bundles`], calling `progress(done, total)` after each bundle directory.
pub fn read_bundles_with_progress(
    tree: &dyn FileTree,
    paths: &[String],
    options: &ReadOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Bundle>, ReadError> {
    read_bundles_with_charts(tree, paths, options, &Offline, progress)
}

/// [`read_bundles_with_progress`], downloading charts that are not in the tree through `charts`.
pub fn read_bundles_with_charts(
    tree: &dyn FileTree,
    paths: &[String],
    options: &ReadOptions,
    charts: &dyn ChartFetcher,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Bundle>, ReadError> {
    let paths = if paths.is_empty() {
        discover::default_paths()
    } else {
        paths.to_vec()
    };
    let locations = match &options.driven_scan_separator {
        Some(separator) => discover::driven(&paths, separator)?,
        None => discover::discover(tree, &paths)?,
    };
    let mut bundles = Vec::new();
    for (index, location) in locations.iter().enumerate() {
        if let Some(bundle) = read_bundle_with_charts(tree, location, options, charts)? {
            bundles.push(bundle);
        }
        progress(index + 1, locations.len());
    }
    if bundles.is_empty() {
        return Err(ReadError::NothingFound { paths });
    }
    Ok(bundles)
}

/// The bundle ID Fleet derives for a directory: `HelmReleaseName(repo/dir[/options-without-extension])`.
pub fn bundle_id(repo_name: &str, location: &BundleLocation) -> String {
    let mut id = TreePath::new(repo_name).unwrap_or_default();
    if let Some(joined) = id.join_relative(location.dir.as_str()) {
        id = joined;
    }
    if let Some(options) = &location.options_file {
        let stem = match options.rfind('.') {
            Some(dot) if !options[dot..].contains('/') => &options[..dot],
            _ => options.as_str(),
        };
        id = id.join_relative(stem).unwrap_or(id);
    }
    names::helm_release_name(id.as_str())
}

fn read_text(tree: &dyn FileTree, path: &TreePath) -> Result<String, ReadError> {
    let bytes = tree.read_file(path)?;
    String::from_utf8(bytes).map_err(|err| {
        fleet_yaml::Error::new(
            path.as_str(),
            None,
            format!(
                "not valid UTF-8 (invalid byte at offset {})",
                err.utf8_error().valid_up_to()
            ),
        )
        .into()
    })
}

/// Reads one bundle directory; `None` when it has no resources. Charts that are not in the tree are an error.
pub fn read_bundle(
    tree: &dyn FileTree,
    location: &BundleLocation,
    options: &ReadOptions,
) -> Result<Option<Bundle>, ReadError> {
    read_bundle_with_charts(tree, location, options, &Offline)
}

/// The bundle's options file: the one its location names (inside the repository), else the fleet.yaml found
/// in its directory, if any.
fn options_file(
    tree: &dyn FileTree,
    location: &BundleLocation,
) -> Result<Option<TreePath>, ReadError> {
    match &location.options_file {
        Some(file) => location
            .dir
            .join_relative(file)
            .map(Some)
            .ok_or_else(|| ReadError::PathOutsideRoot { path: file.clone() }),
        None => discover::find_fleet_yaml(tree, &location.dir),
    }
}

/// [`read_bundle`], downloading charts that are not in the tree through `charts` and storing their files under
/// Fleet's `.chart/<checksum>/` prefix.
pub fn read_bundle_with_charts(
    tree: &dyn FileTree,
    location: &BundleLocation,
    options: &ReadOptions,
    charts: &dyn ChartFetcher,
) -> Result<Option<Bundle>, ReadError> {
    let dir = &location.dir;
    let options_path = options_file(tree, location)?;
    let mut fleet_yaml = match &options_path {
        Some(path) => FleetYaml::parse(&read_text(tree, path)?, path.as_str())?,
        None => FleetYaml::default(),
    };
    let file_label = options_path
        .as_ref()
        .map_or_else(|| dir.child("fleet.yaml").to_string(), ToString::to_string);
    validate(&fleet_yaml, &file_label)?;

    // fleet.yaml targets come first, then the customizations; unnamed ones get positional names.
    let mut targets = std::mem::take(&mut fleet_yaml.spec.targets);
    targets.append(&mut fleet_yaml.target_customizations);
    for (index, target) in targets.iter_mut().enumerate() {
        if target.name.is_empty() {
            target.name = format!("target{index:03}");
        }
    }
    propagate_chart(fleet_yaml.spec.options.helm.as_ref(), &mut targets);

    charts::source::check(
        tree,
        dir,
        &file_label,
        fleet_yaml.spec.options.helm.as_ref(),
        &targets,
    )?;
    let remote = crate::remote::read::remote_charts(
        &file_label,
        fleet_yaml.spec.options.helm.as_ref(),
        &targets,
    )?;
    // Driven-scan options files stay resources (Fleet's integration tests expect them); fleet.yaml/.yml do not.
    let excluded = excluded_names(
        options_path
            .as_ref()
            .filter(|_| location.options_file.is_none()),
        dir,
        fleet_yaml.spec.options.helm.as_ref(),
        &targets,
    );
    // Fleet merges the top-level valuesFiles only when `helm.chart` is set, so a chart in the bundle
    // directory itself silently loses them (rancher/fleet#2060). Its documentation promises they are passed
    // to Helm, and that is what we do.
    if let Some(helm) = fleet_yaml.spec.options.helm.as_mut() {
        merge_values_files(tree, dir, helm)?;
    }
    for target in &mut targets {
        if let Some(helm) = target.options.helm.as_mut() {
            merge_values_files(tree, dir, helm)?;
        }
    }

    let mut files = resources::read_files(tree, dir, &excluded)?;
    if !fleet_yaml
        .spec
        .options
        .helm
        .as_ref()
        .is_some_and(|h| h.disable_dependency_update)
    {
        crate::remote::read::add_dependencies(&mut files, &file_label, charts)?;
    }
    crate::remote::read::add_remote_charts(&mut files, &file_label, &remote, charts)?;
    if files.is_empty() {
        return Ok(None);
    }
    // Fleet's reader updates chart dependencies unless the bundle's helm options disable it.
    let update_dependencies = !fleet_yaml
        .spec
        .options
        .helm
        .as_ref()
        .is_some_and(|helm| helm.disable_dependency_update);
    if update_dependencies {
        charts::dependencies::vendor(tree, dir, &mut files)?;
    }

    let name = if fleet_yaml.name.is_empty() {
        bundle_id(&options.repo_name, location)
    } else {
        fleet_yaml.name.clone()
    };
    let mut bundle = Bundle::new(&name, fleet_yaml.spec.clone());
    bundle.metadata.namespace = Some(options.namespace.clone());
    bundle.spec.targets = targets;
    apply_targets(
        &mut bundle.spec,
        fleet_yaml.override_targets.as_deref(),
        options.targets.as_ref(),
    );
    apply_forced_options(&mut bundle.spec, options);
    let mut bundle_labels = options.labels.clone();
    if let Some(commit) = &options.commit {
        bundle_labels.insert(labels::COMMIT.to_string(), commit.clone());
    }
    bundle_labels.extend(fleet_yaml.labels.clone());
    if !bundle_labels.is_empty() {
        bundle.metadata.labels = Some(bundle_labels);
    }
    if !fleet_yaml.annotations.is_empty() {
        bundle.metadata.annotations = Some(fleet_yaml.annotations.clone());
    }

    bundle.spec.resources = resources::encode(&files, options.compress);
    if !options.compress && json_size(&bundle) >= COMPRESS_THRESHOLD {
        bundle.spec.resources = resources::encode(&files, true);
    }
    Ok(Some(bundle))
}

/// The ImageScans Fleet's reader makes of the `imageScans` entries of the bundle at `location`: those that name an
/// image, each named `imagescan-<bundle>-<position>` (the bundle named as [`read_bundle`] names it) with the entry's
/// spec, an unset interval written `0s` as Go writes a zero duration. Namespace, labels and `gitrepoName` are the
/// writer's.
pub fn read_image_scans(
    tree: &dyn FileTree,
    location: &BundleLocation,
    options: &ReadOptions,
) -> Result<Vec<ImageScan>, ReadError> {
    let options_path = options_file(tree, location)?;
    let fleet_yaml = match &options_path {
        Some(path) => FleetYaml::parse(&read_text(tree, path)?, path.as_str())?,
        None => FleetYaml::default(),
    };
    let bundle = if fleet_yaml.name.is_empty() {
        bundle_id(&options.repo_name, location)
    } else {
        fleet_yaml.name.clone()
    };
    let scans = fleet_yaml
        .image_scans
        .into_iter()
        .enumerate()
        .filter(|(_, entry)| !entry.spec.image.is_empty() && !entry.spec.tag_name.is_empty())
        .map(|(position, entry)| {
            let name = names::safe_concat_name(&["imagescan", &bundle, &position.to_string()]);
            let mut spec = entry.spec;
            if spec.interval.is_empty() {
                spec.interval = "0s".to_string();
            }
            ImageScan::new(&name, spec)
        })
        .collect();
    Ok(scans)
}

fn json_size(bundle: &Bundle) -> usize {
    serde_json::to_vec(bundle).map_or(0, |json| json.len())
}

/// Checks Fleet validates at read time: `dependsOn` entries and image scans.
fn validate(fleet_yaml: &FleetYaml, file: &str) -> Result<(), ReadError> {
    for (index, dependency) in fleet_yaml.spec.depends_on.iter().enumerate() {
        if dependency.name.is_empty() && dependency.selector.is_none() {
            return Err(ReadError::DependsOn {
                file: file.to_string(),
                index,
                message: "either name or selector is required".to_string(),
            });
        }
        for state in &dependency.accepted_states {
            if !state.is_known() {
                return Err(ReadError::DependsOn {
                    file: file.to_string(),
                    index,
                    message: format!("invalid accepted state {:?}", state.as_str()),
                });
            }
        }
    }
    // Fleet skips entries without an image and requires a tag name on the others.
    if let Some(index) = fleet_yaml
        .image_scans
        .iter()
        .position(|entry| !entry.spec.image.is_empty() && entry.spec.tag_name.is_empty())
    {
        return Err(ReadError::ImageScanTagName {
            file: file.to_string(),
            index,
        });
    }
    Ok(())
}

/// Root `helm.repo`/`chart`/`version` fill in customizations that set `helm` without them.
fn propagate_chart(root: Option<&HelmOptions>, targets: &mut [BundleTarget]) {
    let Some(root) = root else { return };
    for helm in targets.iter_mut().filter_map(|t| t.options.helm.as_mut()) {
        for (field, inherited) in [
            (&mut helm.repo, &root.repo),
            (&mut helm.chart, &root.chart),
            (&mut helm.version, &root.version),
        ] {
            if field.is_empty() {
                field.clone_from(inherited);
            }
        }
    }
}

/// Names (relative to the bundle) kept out of resources: the options file and every values file, by path and
/// by base name.
fn excluded_names(
    options_path: Option<&TreePath>,
    dir: &TreePath,
    root_helm: Option<&HelmOptions>,
    targets: &[BundleTarget],
) -> Vec<String> {
    let mut excluded = vec!["fleet.yaml".to_string()];
    if let Some(path) = options_path
        && let Some(relative) = path.strip_prefix(dir)
    {
        excluded.push(relative.to_string());
    }
    let helms = root_helm
        .into_iter()
        .chain(targets.iter().filter_map(|t| t.options.helm.as_ref()));
    for helm in helms {
        for file in &helm.values_files {
            let normalised =
                TreePath::new(file).map_or_else(|| file.clone(), |p| p.as_str().to_string());
            let base = normalised
                .rsplit('/')
                .next()
                .unwrap_or(&normalised)
                .to_string();
            excluded.push(normalised);
            excluded.push(base);
        }
    }
    excluded
}

/// Merges each values file (relative to the bundle directory) over `helm.values`, later files winning.
fn merge_values_files(
    tree: &dyn FileTree,
    dir: &TreePath,
    helm: &mut HelmOptions,
) -> Result<(), ReadError> {
    if helm.values_files.is_empty() {
        return Ok(());
    }
    let mut merged = helm.values.clone().unwrap_or_default().to_value();
    for file in &helm.values_files {
        let path = dir
            .join_relative(file)
            .ok_or_else(|| ReadError::PathOutsideRoot { path: file.clone() })?;
        let text = read_text(tree, &path)?;
        let located = fleet_yaml::parse::located(&text, path.as_str())?;
        match located.into_value() {
            Value::Null => {}
            overlay @ Value::Object(_) => merge_maps(&mut merged, overlay),
            _ => {
                return Err(FleetYamlError::Invalid {
                    file: path.to_string(),
                    message: "a values file must hold a mapping".to_string(),
                }
                .into());
            }
        }
    }
    if let Value::Object(map) = merged
        && !map.is_empty()
    {
        helm.values = Some(GenericMap(map));
    }
    Ok(())
}

/// wrangler's `MergeMaps`: maps merge recursively, anything else from `overlay` replaces.
pub(crate) fn merge_maps(base: &mut Value, overlay: Value) {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            for (key, value) in overlay {
                match base.get_mut(&key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        merge_maps(existing, value)
                    }
                    _ => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, overlay) => *base = overlay,
    }
}

/// `overrideTargets` become targets and restrictions; otherwise the targets file's are appended. With no
/// targets at all, the default target (`clusterGroup: default`) applies.
fn apply_targets(
    spec: &mut BundleSpec,
    overrides: Option<&[GitTarget]>,
    targets_file: Option<&TargetsSpec>,
) {
    match (overrides, targets_file) {
        (Some(overrides), _) => {
            for target in overrides {
                spec.targets.push(BundleTarget {
                    name: target.name.clone(),
                    cluster_name: target.cluster_name.clone(),
                    cluster_selector: target.cluster_selector.clone(),
                    cluster_group: target.cluster_group.clone(),
                    cluster_group_selector: target.cluster_group_selector.clone(),
                    ..BundleTarget::default()
                });
                spec.target_restrictions.push(target.clone());
            }
        }
        (None, Some(file)) => {
            spec.targets.extend(file.targets.iter().cloned());
            spec.target_restrictions
                .extend(file.target_restrictions.iter().cloned());
        }
        (None, None) => {}
    }
    if spec.targets.is_empty() {
        spec.targets.push(BundleTarget {
            name: "default".to_string(),
            cluster_group: "default".to_string(),
            ..BundleTarget::default()
        });
    }
}

fn apply_forced_options(spec: &mut BundleSpec, options: &ReadOptions) {
    if !options.service_account.is_empty() {
        spec.options
            .service_account
            .clone_from(&options.service_account);
    }
    spec.options.force_sync_generation = options.sync_generation;
    if !options.target_namespace.is_empty() {
        spec.options
            .target_namespace
            .clone_from(&options.target_namespace);
        for target in &mut spec.targets {
            target
                .options
                .target_namespace
                .clone_from(&options.target_namespace);
        }
    }
    if options.paused {
        spec.paused = true;
    }
    if options.keep_resources {
        spec.options.keep_resources = true;
    }
    if options.delete_namespace {
        spec.options.delete_namespace = true;
    }
    if let Some(correct_drift) = &options.correct_drift
        && correct_drift.enabled
    {
        spec.options.correct_drift = Some(correct_drift.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::MemoryTree;

    fn options(repo: &str) -> ReadOptions {
        ReadOptions {
            repo_name: repo.to_string(),
            ..ReadOptions::default()
        }
    }

    #[test]
    fn names_follow_fleet() {
        let at = |dir: &str, opts: Option<&str>| BundleLocation {
            dir: TreePath::new(dir).unwrap(),
            options_file: opts.map(str::to_string),
        };
        assert_eq!(bundle_id("repo", &at(".", None)), "repo");
        assert_eq!(bundle_id("repo", &at("apps/web", None)), "repo-apps-web");
        assert_eq!(
            bundle_id("repo", &at("apps", Some("sub/fleet.yaml"))),
            "repo-apps-sub-fleet"
        );
        let mixed = bundle_id("repo", &at("My_App", None));
        assert_eq!(mixed, names::helm_release_name("repo/My_App"));
        assert!(mixed.starts_with("repo-my-app-"), "{mixed}");
    }

    /// Names from Fleet's `integrationtests/cli/apply/apply_test.go` (driven scan), where the GitRepo name is
    /// cancelled by a leading `../` so the IDs start at `assets/`.
    #[test]
    fn driven_scan_names_match_fleet_integration_tests() {
        let at = |dir: &str, opts: Option<&str>| BundleLocation {
            dir: TreePath::new(dir).unwrap(),
            options_file: opts.map(str::to_string),
        };
        let cases = [
            (at("driven/helm", None), "assets-driven-helm"),
            (
                at("driven/kustomize", Some("dev.yaml")),
                "assets-driven-kustomize-dev",
            ),
            (
                at("driven2/kustomize", Some("fleetDev.yaml")),
                "assets-driven2-kustomize-fleetdev-2946f474",
            ),
            (
                at("driven2/kustomize", Some("fleetProd.yaml")),
                "assets-driven2-kustomize-fleetprod-99f597b0",
            ),
            (
                at("driven_fleet_yaml_subfolder/helm", None),
                "assets-driven-fleet-yaml-subfolder-helm-f49dc35c",
            ),
            (
                at("driven_fleet_yaml_subfolder/helm", Some("test/fleet.yaml")),
                "assets-driven-fleet-yaml-subfolder-helm-test-fl-b676f",
            ),
        ];
        for (location, expected) in cases {
            assert_eq!(bundle_id("assets", &location), expected, "{location:?}");
        }
    }

    /// fleet.yaml `imageScans` are read (no longer refused): entries without an image are skipped, as Fleet
    /// skips them, and an entry with an image but no tag name is an error naming the file and entry.
    #[test]
    fn image_scans_are_read_and_need_a_tag_name() {
        let mut tree = MemoryTree::new();
        tree.add_file(
            "app/fleet.yaml",
            "imageScans:\n- {image: '', tagName: empty}\n- {image: reg.example/app, tagName: app, interval: 1m}\n",
        )
        .add_file("app/deploy.yaml", "kind: ConfigMap\napiVersion: v1\nmetadata: {name: x}\n");
        let location = BundleLocation {
            dir: TreePath::new("app").unwrap(),
            options_file: None,
        };
        assert!(
            read_bundle(&tree, &location, &options("repo"))
                .unwrap()
                .is_some()
        );
        let scans = read_image_scans(&tree, &location, &options("repo")).unwrap();
        assert_eq!(scans.len(), 1);
        assert_eq!(
            scans[0].metadata.name.as_deref(),
            Some("imagescan-repo-app-1")
        );
        assert_eq!(scans[0].spec.image, "reg.example/app");
        assert_eq!(scans[0].spec.tag_name, "app");
        assert_eq!(scans[0].spec.interval, "1m");

        let mut tree = MemoryTree::new();
        tree.add_file("fleet.yaml", "imageScans:\n- {image: reg.example/app}\n")
            .add_file("cm.yaml", "kind: ConfigMap\n");
        let location = BundleLocation {
            dir: TreePath::root(),
            options_file: None,
        };
        let err = read_bundle(&tree, &location, &options("repo")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "fleet.yaml: imageScans[0].tagName: the name of the scan is required"
        );
    }

    #[test]
    fn driven_options_files_stay_resources() {
        let mut tree = MemoryTree::new();
        tree.add_file("k/dev.yaml", "defaultNamespace: dev\n")
            .add_file("k/cm.yaml", "a: 1\n");
        let mut opts = options("r");
        opts.driven_scan_separator = Some(":".into());
        let bundle = read_bundles(&tree, &["k:dev.yaml".into()], &opts)
            .unwrap()
            .remove(0);
        let names = bundle.spec.resource_names();
        assert_eq!(names, ["cm.yaml", "dev.yaml"]);
        assert_eq!(bundle.spec.options.default_namespace, "dev");
    }

    #[test]
    fn default_target_labels_and_forced_options() {
        let mut tree = MemoryTree::new();
        tree.add_file("cm.yaml", "a: 1\n")
            .add_file("fleet.yaml", "labels: {team: x}\n");
        let mut opts = options("repo");
        opts.commit = Some("abc".into());
        opts.labels.insert("team".into(), "cli".into());
        opts.target_namespace = "forced".into();
        opts.service_account = "sa".into();
        let bundles = read_bundles(&tree, &[], &opts).unwrap();
        let bundle = &bundles[0];
        assert_eq!(bundle.metadata.name.as_deref(), Some("repo"));
        let labels = bundle.metadata.labels.as_ref().unwrap();
        assert_eq!(labels["team"], "x", "fleet.yaml labels win over -l");
        assert_eq!(labels[labels::COMMIT], "abc");
        assert_eq!(bundle.spec.targets.len(), 1);
        assert_eq!(bundle.spec.targets[0].name, "default");
        assert_eq!(bundle.spec.targets[0].options.target_namespace, "forced");
        assert_eq!(bundle.spec.options.service_account, "sa");
        assert_eq!(
            bundle.spec.resources.len(),
            1,
            "fleet.yaml is not a resource"
        );
    }

    #[test]
    fn values_files_merge_and_are_excluded() {
        let mut tree = MemoryTree::new();
        tree.add_file("fleet.yaml", "helm:\n  chart: ./chart\n  values: {a: 1, b: {c: 1}}\n  valuesFiles: [values/prod.yaml]\n")
            .add_file("values/prod.yaml", "b: {d: 2}\n")
            .add_file("prod.yaml", "excluded by base name\n")
            .add_file("chart/Chart.yaml", "name: x\n");
        let bundle = read_bundles(&tree, &[], &options("r")).unwrap().remove(0);
        let names = bundle.spec.resource_names();
        assert_eq!(names, ["chart/Chart.yaml"]);
        let values = bundle.spec.options.helm.unwrap().values.unwrap();
        assert_eq!(
            Value::Object(values.0),
            serde_json::json!({"a": 1, "b": {"c": 1, "d": 2}})
        );
    }

    #[test]
    fn values_files_apply_to_a_chart_in_the_bundle_directory_itself() {
        let mut tree = MemoryTree::new();
        tree.add_file(
            "fleet.yaml",
            "helm:\n  values: {a: 1}\n  valuesFiles: [values/extra.yaml]\n",
        )
        .add_file("values/extra.yaml", "a: 2\nb: 3\n")
        .add_file("Chart.yaml", "name: x\n")
        .add_file("values.yaml", "a: 0\n");
        let bundle = read_bundles(&tree, &[], &options("r")).unwrap().remove(0);
        let values = bundle.spec.options.helm.unwrap().values.unwrap();
        assert_eq!(
            Value::Object(values.0),
            serde_json::json!({"a": 2, "b": 3}),
            "values files merge over helm.values, as with helm.chart set"
        );
    }

    #[test]
    fn override_targets_replace_the_targets_file() {
        let mut tree = MemoryTree::new();
        tree.add_file("cm.yaml", "a: 1\n").add_file(
            "fleet.yaml",
            "targetCustomizations: [{clusterName: c}]\noverrideTargets: [{clusterGroup: g}]\n",
        );
        let mut opts = options("r");
        opts.targets = Some(
            TargetsSpec::parse("targets: [{clusterGroup: from-file}]\n", "targets.yaml").unwrap(),
        );
        let bundle = read_bundles(&tree, &[], &opts).unwrap().remove(0);
        let targets: Vec<_> = bundle
            .spec
            .targets
            .iter()
            .map(|t| (t.name.as_str(), t.cluster_group.as_str()))
            .collect();
        assert_eq!(targets, [("target000", ""), ("", "g")]);
        assert_eq!(bundle.spec.target_restrictions.len(), 1);
    }

    #[test]
    fn remote_charts_are_refused() {
        let mut tree = MemoryTree::new();
        tree.add_file(
            "fleet.yaml",
            "helm:\n  repo: https://charts.example.com\n  chart: nginx\n  version: 1.0.0\n",
        );
        assert_eq!(
            read_bundles(&tree, &[], &options("r"))
                .unwrap_err()
                .to_string(),
            "fleet.yaml: helm chart \"nginx\" from \"https://charts.example.com\" version \"1.0.0\": the chart is not \
             in the bundle and this reader has no network access to download it"
        );
        let mut tree = MemoryTree::new();
        tree.add_file(
            "fleet.yaml",
            "targetCustomizations:\n- name: a\n  helm: {chart: ./missing}\n",
        )
        .add_file("cm.yaml", "a: 1\n");
        assert!(
            read_bundles(&tree, &[], &options("r"))
                .unwrap_err()
                .to_string()
                .contains("\"./missing\"")
        );
    }

    #[test]
    fn nothing_found_is_an_error() {
        let mut tree = MemoryTree::new();
        tree.add_file("README.md", "x");
        assert_eq!(
            read_bundles(&tree, &[], &options("r"))
                .unwrap_err()
                .to_string(),
            "no resource found at the following paths to deploy: [.]"
        );
    }

    #[test]
    fn large_bundles_are_compressed() {
        let mut tree = MemoryTree::new();
        tree.add_file("big.yaml", "x".repeat(COMPRESS_THRESHOLD));
        let bundle = read_bundles(&tree, &[], &options("r")).unwrap().remove(0);
        assert_eq!(bundle.spec.resources[0].encoding, resources::BASE64_GZ);
    }
}
