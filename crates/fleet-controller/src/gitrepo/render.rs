//! Reading a commit's tree into Bundles as `fleet apply` does in Fleet's git job, one bundle directory at a
//! time: a broken directory becomes an error naming its file and line, and the other bundles still come
//! through. The GitRepo's settings become the reader's options (labels, targets file, service account,
//! target namespace, paused, keepResources, deleteNamespace, correctDrift, forceSyncGeneration). Charts the
//! bundles name but do not hold are downloaded here, with each bundle path's credentials, and stored in the
//! Bundle (agents need no access to chart sources). A bundle whose chart cannot be had is an error for that
//! bundle only: its last good Bundle stays.

use std::collections::{BTreeMap, BTreeSet};

use fleet_api::{Bundle, BundleTarget, GitRepo, GitTarget, labels};
use fleet_bundle::discover::{self, BundleLocation};
use fleet_bundle::error::ReadError;
use fleet_bundle::read::{
    ReadOptions, TargetsSpec, bundle_id, read_bundle, read_bundle_with_charts,
};
use fleet_bundle::tree::FileTree;
use kube::ResourceExt;

/// The Bundles of one commit.
#[derive(Debug, Default)]
pub struct Rendered {
    pub bundles: Vec<Bundle>,
    /// Bundle name → why it could not be read.
    pub errors: BTreeMap<String, String>,
    /// Every bundle name the commit still has (read or broken): the rest are pruned.
    pub names: BTreeSet<String>,
    /// Some bundle's chart or chart dependency could not be downloaded: the commit is worth reading again.
    pub download_failed: bool,
}

/// Reads every bundle of `tree`; `Err` only when the paths themselves cannot be searched. Charts that are not
/// in the tree are an error (see [`render_with_charts`]).
pub fn render(tree: &dyn FileTree, repo: &GitRepo, commit: &str) -> Result<Rendered, String> {
    render_with_charts(tree, repo, commit, None)
}

/// [`render`], downloading charts through `charts` with each bundle path's credentials.
pub fn render_with_charts(
    tree: &dyn FileTree,
    repo: &GitRepo,
    commit: &str,
    charts: Option<&fleet_chart_source::ReadSession<'_>>,
) -> Result<Rendered, String> {
    let options = read_options(repo, commit);
    let (paths, locations) = locations(tree, repo).map_err(|e| e.to_string())?;
    let mut rendered = Rendered::default();
    for location in &locations {
        let name = bundle_id(&options.repo_name, location);
        let read = match charts {
            Some(charts) => read_bundle_with_charts(
                tree,
                location,
                &options,
                &charts.for_path(location.dir.as_str()),
            ),
            None => read_bundle(tree, location, &options),
        };
        match read {
            Ok(Some(mut bundle)) => {
                // The GitRepo's placement block applies to bundles without their own.
                crate::placement::inherit_gitrepo_placement(&mut bundle, repo);
                rendered.names.insert(bundle.name_any());
                rendered.bundles.push(bundle);
            }
            Ok(None) => {}
            Err(err) => {
                rendered.download_failed |= matches!(err, ReadError::ChartDownload { .. });
                rendered.names.insert(name.clone());
                rendered.errors.insert(name, err.to_string());
            }
        }
    }
    if rendered.bundles.is_empty() && rendered.errors.is_empty() {
        return Err(format!(
            "no resource found at the following paths to deploy: [{}]",
            paths.join(" ")
        ));
    }
    Ok(rendered)
}

/// The bundle directories of `repo` in `tree`, and the paths they came from (for the "nothing found"
/// error). With `spec.bundles` (a driven scan) exactly those, each with its own options file, and
/// `spec.paths` ignored, as Fleet's git job does (it passes `--driven-scan` and the bundles instead of
/// the paths); otherwise Fleet's recursive discovery under `spec.paths`.
fn locations(
    tree: &dyn FileTree,
    repo: &GitRepo,
) -> Result<(Vec<String>, Vec<BundleLocation>), ReadError> {
    if !repo.spec.bundles.is_empty() {
        let bundles = &repo.spec.bundles;
        let locations = bundles
            .iter()
            .map(|b| discover::driven_location(&b.base, Some(&b.options)))
            .collect::<Result<Vec<_>, _>>()?;
        let paths = bundles.iter().map(|b| b.base.clone()).collect();
        return Ok((paths, locations));
    }
    let paths = if repo.spec.paths.is_empty() {
        discover::default_paths()
    } else {
        repo.spec.paths.clone()
    };
    let locations = discover::discover(tree, &paths)?;
    Ok((paths, locations))
}

/// The reader options Fleet's git job passes to `fleet apply` for this GitRepo.
pub fn read_options(repo: &GitRepo, commit: &str) -> ReadOptions {
    let spec = &repo.spec;
    let mut bundle_labels = repo.labels().clone();
    bundle_labels.insert(labels::REPO_NAME.to_string(), repo.name_any());
    ReadOptions {
        repo_name: repo.name_any(),
        namespace: repo.namespace().unwrap_or_default(),
        labels: bundle_labels,
        commit: Some(commit.to_string()),
        service_account: spec.service_account.clone(),
        target_namespace: spec.target_namespace.clone(),
        paused: spec.paused,
        keep_resources: spec.keep_resources,
        delete_namespace: spec.delete_namespace,
        correct_drift: spec.correct_drift.clone(),
        sync_generation: spec.force_sync_generation,
        targets: Some(targets_file(&spec.targets)),
        ..ReadOptions::default()
    }
}

/// Fleet's targets file: the GitRepo's targets as both targets and restrictions; with none, the
/// ClusterGroup `default`.
fn targets_file(targets: &[GitTarget]) -> TargetsSpec {
    let restrictions: Vec<GitTarget> = if targets.is_empty() {
        vec![GitTarget {
            name: "default".to_string(),
            cluster_group: "default".to_string(),
            ..GitTarget::default()
        }]
    } else {
        targets.to_vec()
    };
    TargetsSpec {
        targets: restrictions
            .iter()
            .map(|t| BundleTarget {
                name: t.name.clone(),
                cluster_name: t.cluster_name.clone(),
                cluster_selector: t.cluster_selector.clone(),
                cluster_group: t.cluster_group.clone(),
                cluster_group_selector: t.cluster_group_selector.clone(),
                ..BundleTarget::default()
            })
            .collect(),
        target_restrictions: restrictions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_bundle::tree::MemoryTree;

    #[test]
    fn a_broken_bundle_does_not_hold_back_the_others() {
        let mut tree = MemoryTree::new();
        tree.add_file(
            "good/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
        );
        tree.add_file("bad/fleet.yaml", "defaultNamespace: [unclosed\n");
        tree.add_file("bad/cm.yaml", "kind: ConfigMap\n");
        let mut repo = GitRepo::new("repo", Default::default());
        repo.metadata.namespace = Some("fleet-local".into());
        repo.spec.paths = vec!["good".into(), "bad".into()];
        let rendered = render(&tree, &repo, "abc").unwrap();
        assert_eq!(rendered.bundles.len(), 1);
        assert_eq!(rendered.bundles[0].name_any(), "repo-good");
        assert_eq!(
            rendered.bundles[0]
                .labels()
                .get(labels::COMMIT)
                .map(String::as_str),
            Some("abc")
        );
        assert_eq!(
            rendered.bundles[0]
                .labels()
                .get(labels::REPO_NAME)
                .map(String::as_str),
            Some("repo")
        );
        let error = &rendered.errors["repo-bad"];
        assert!(error.contains("bad/fleet.yaml:1:"), "{error}");
        assert_eq!(rendered.names.len(), 2);
        // Without targets the default ClusterGroup is both target and restriction.
        assert_eq!(rendered.bundles[0].spec.targets[0].cluster_group, "default");
        assert_eq!(
            rendered.bundles[0].spec.target_restrictions[0].cluster_group,
            "default"
        );
    }

    #[test]
    fn spec_bundles_replace_discovery() {
        let mut tree = MemoryTree::new();
        tree.add_file("app/cm.yaml", "kind: ConfigMap\nmetadata: {name: a}\n")
            .add_file("app/dev.yaml", "defaultNamespace: dev\n")
            .add_file("nested/fleet.yaml", "defaultNamespace: nested\n")
            .add_file("nested/cm.yaml", "kind: ConfigMap\nmetadata: {name: b}\n");
        let mut repo = GitRepo::new("repo", Default::default());
        repo.metadata.namespace = Some("fleet-local".into());
        repo.spec.bundles = vec![
            fleet_api::BundlePath {
                base: "app".into(),
                options: "dev.yaml".into(),
            },
            fleet_api::BundlePath {
                base: "/app".into(),
                options: String::new(),
            },
        ];
        let rendered = render(&tree, &repo, "abc").unwrap();
        let names: Vec<String> = rendered.bundles.iter().map(|b| b.name_any()).collect();
        assert_eq!(names, ["repo-app-dev", "repo-app"]);
        assert_eq!(rendered.bundles[0].spec.options.default_namespace, "dev");
    }

    #[test]
    fn a_chart_source_that_is_down_fails_only_its_bundle_and_asks_for_a_retry() {
        let mut tree = MemoryTree::new();
        tree.add_file(
            "good/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
        );
        // Nothing listens on port 1 of the loopback address.
        tree.add_file(
            "remote/fleet.yaml",
            "helm:\n  repo: https://127.0.0.1:1/charts\n  chart: app\n  version: 1.0.0\n",
        );
        let mut repo = GitRepo::new("repo", Default::default());
        repo.metadata.namespace = Some("fleet-local".into());
        repo.spec.paths = vec!["good".into(), "remote".into()];
        let source = fleet_chart_source::ChartSource::new();
        let session = source.session(Default::default());
        let rendered = render_with_charts(&tree, &repo, "abc", Some(&session)).unwrap();
        assert_eq!(rendered.bundles.len(), 1);
        assert!(rendered.download_failed);
        assert!(rendered.names.contains("repo-remote"), "kept, not pruned");
        let error = &rendered.errors["repo-remote"];
        assert!(
            error.contains("remote/fleet.yaml")
                && error.contains("https://127.0.0.1:1/charts/index.yaml"),
            "{error}"
        );
        let offline = render(&tree, &repo, "abc").unwrap();
        assert!(offline.download_failed);
    }
}
