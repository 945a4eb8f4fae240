//! The `--repo` arguments and the GitRepos made from them:
//! - an example folder (`gitrepo.yaml` + `repo/`): `repo/` is committed with gix into a local bare
//!   repository in the data dir, every GitRepo document of `gitrepo.yaml` is applied with `spec.repo` set to
//!   it (its `spec.paths` are relative to `repo/`), the ClusterGroups (GitRepoRestrictions,
//!   BundleNamespaceMappings) beside them are applied first, and `repo/` is watched: a change (debounced) commits a
//!   new snapshot and triggers those GitRepos at once;
//! - a git work tree or bare repository: a GitRepo following its current branch, whose refs are watched
//!   so that a new commit triggers it at once;
//! - a URL: a plain GitRepo (polled).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use fleet_api::GitRepo;
use futures::FutureExt;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Map, Value, json};

use crate::controller::ControllerSlot;
use crate::data_dir::DataDir;
use crate::error::{Error, Result};
use crate::hub::{FIELD_MANAGER, WORKSPACE, ensure_namespace};
use crate::snapshot::SnapshotRepo;
use crate::watch::{self, DebouncedWatch};

/// What one `--repo` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RepoSource {
    /// A folder with `gitrepo.yaml` and `repo/`.
    Example(PathBuf),
    /// A git work tree or bare repository.
    Git(PathBuf),
    /// A remote repository URL.
    Url(String),
}

impl RepoSource {
    /// Tells the three forms apart: a URL (`scheme://…` or `user@host:path`), else an existing path that is
    /// an example folder or a git repository.
    pub fn parse(argument: &str) -> Result<Self> {
        let invalid = |message: String| Error::Repo {
            argument: argument.to_string(),
            message,
        };
        if argument.contains("://") || is_scp_like(argument) {
            return Ok(RepoSource::Url(argument.to_string()));
        }
        let path = Path::new(argument);
        if !path.exists() {
            return Err(invalid("no such file or directory (and not a URL)".into()));
        }
        let path = std::fs::canonicalize(path).map_err(|e| Error::io(path, e))?;
        if path.join("gitrepo.yaml").is_file() && path.join("repo").is_dir() {
            return Ok(RepoSource::Example(path));
        }
        match gix::open(&path) {
            Ok(_) => Ok(RepoSource::Git(path)),
            Err(err) => Err(invalid(format!(
                "neither an example folder (gitrepo.yaml and repo/) nor a git repository ({err})"
            ))),
        }
    }
}

/// A `--repo` with, for the git and URL forms, extra GitRepo spec fields (e.g. `targets`, `paths`,
/// `pollingInterval`) merged over the generated spec, and an optional GitRepo name.
#[derive(Debug, Clone)]
pub struct RepoRequest {
    pub source: RepoSource,
    pub name: Option<String>,
    pub spec: Map<String, Value>,
}

impl From<RepoSource> for RepoRequest {
    fn from(source: RepoSource) -> Self {
        RepoRequest {
            source,
            name: None,
            spec: Map::new(),
        }
    }
}

/// A GitRepo dev mode created: `(namespace, name)`.
pub type GitRepoKey = (String, String);

/// A `--repo` in effect: its GitRepos, the snapshot repository (example folders) and the watch.
pub struct ActiveRepo {
    pub source: RepoSource,
    pub gitrepos: Vec<GitRepoKey>,
    pub snapshot: Option<SnapshotRepo>,
    _watch: Option<DebouncedWatch>,
}

/// Sets up one `--repo`: GitRepos applied on the hub, local sources watched.
pub async fn activate(
    request: &RepoRequest,
    data_dir: &DataDir,
    hub: &kube::Client,
    slot: Arc<ControllerSlot>,
    debounce: Duration,
) -> Result<ActiveRepo> {
    match &request.source {
        RepoSource::Example(folder) => {
            activate_example(folder, data_dir, hub, slot, debounce).await
        }
        RepoSource::Git(path) => activate_git(request, path, hub, slot, debounce).await,
        RepoSource::Url(url) => {
            let name = request.name.clone().unwrap_or_else(|| name_from(url));
            let mut spec = json!({"repo": url});
            merge(&mut spec, &request.spec);
            let key = apply_gitrepo(hub, gitrepo(&name, spec)).await?;
            Ok(ActiveRepo {
                source: request.source.clone(),
                gitrepos: vec![key],
                snapshot: None,
                _watch: None,
            })
        }
    }
}

async fn activate_example(
    folder: &Path,
    data_dir: &DataDir,
    hub: &kube::Client,
    slot: Arc<ControllerSlot>,
    debounce: Duration,
) -> Result<ActiveRepo> {
    let argument = folder.display().to_string();
    let manifest = folder.join("gitrepo.yaml");
    let text = std::fs::read_to_string(&manifest).map_err(|e| Error::io(&manifest, e))?;
    let documents: Vec<Value> = serde_saphyr::from_multiple(&text).map_err(|e| Error::Repo {
        argument: argument.clone(),
        message: format!("{}: {e}", manifest.display()),
    })?;
    let (mut gitrepos, hub_objects) = split_documents(documents, &manifest, &argument)?;
    // An example of HelmOps only (charts from repositories, no git): its objects are applied, nothing is
    // committed or watched.
    if gitrepos.is_empty() && hub_objects.iter().any(|doc| doc["kind"] == "HelmOp") {
        for doc in &hub_objects {
            apply_hub_object(hub, doc).await?;
        }
        return Ok(ActiveRepo {
            source: RepoSource::Example(folder.to_path_buf()),
            gitrepos: Vec::new(),
            snapshot: None,
            _watch: None,
        });
    }
    if gitrepos.is_empty() {
        return Err(Error::Repo {
            argument,
            message: format!("{}: no GitRepo document", manifest.display()),
        });
    }
    let mut branches: Vec<String> = Vec::new();
    for (index, doc) in gitrepos.iter_mut().enumerate() {
        if doc
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .is_none()
        {
            return Err(Error::Repo {
                argument,
                message: format!(
                    "{}: GitRepo document {}: metadata.name is missing",
                    manifest.display(),
                    index + 1
                ),
            });
        }
        let branch = doc
            .pointer("/spec/branch")
            .and_then(Value::as_str)
            .filter(|b| !b.is_empty())
            .unwrap_or("main")
            .to_string();
        if !branches.contains(&branch) {
            branches.push(branch.clone());
        }
        doc["spec"]["branch"] = json!(branch);
    }
    let name = name_from(&argument);
    let snapshot = SnapshotRepo::init(&data_dir.git_dir(&name))?;
    let content = folder.join("repo");
    let message = format!("fleet dev: snapshot of {}", content.display());
    let commit = {
        let (snapshot, folder, branches, message) = (
            snapshot.clone(),
            content.clone(),
            branches.clone(),
            message.clone(),
        );
        tokio::task::spawn_blocking(move || snapshot.commit_dir(&folder, &branches, &message))
            .await
            .map_err(|e| Error::git(&content, e))??
    };
    tracing::info!(folder = %content.display(), commit = ?commit, "example committed");
    // The groups (and restrictions, mappings) first, so that the GitRepos' first targeting finds them.
    for doc in &hub_objects {
        apply_hub_object(hub, doc).await?;
    }
    let mut keys = Vec::new();
    for mut doc in gitrepos {
        doc["spec"]["repo"] = json!(snapshot.url());
        keys.push(apply_gitrepo(hub, doc).await?);
    }
    let action: watch::Action = {
        let (snapshot, keys) = (snapshot.clone(), keys.clone());
        Arc::new(move || {
            let (snapshot, content, branches, message, keys, slot) = (
                snapshot.clone(),
                content.clone(),
                branches.clone(),
                message.clone(),
                keys.clone(),
                slot.clone(),
            );
            async move {
                let committed = tokio::task::spawn_blocking(move || {
                    snapshot.commit_dir(&content, &branches, &message)
                })
                .await;
                match committed {
                    Ok(Ok(Some(commit))) => {
                        tracing::info!(%commit, "new snapshot committed");
                        trigger_all(&slot, &keys);
                    }
                    Ok(Ok(None)) => {}
                    Ok(Err(err)) => tracing::warn!(error = %err, "committing a snapshot"),
                    Err(err) => tracing::warn!(error = %err, "committing a snapshot"),
                }
            }
            .boxed()
        })
    };
    let watched = folder.join("repo");
    let watch = watch::watch(
        &watched,
        debounce,
        Arc::new(|p| !is_editor_scratch(p)),
        action,
    )?;
    Ok(ActiveRepo {
        source: RepoSource::Example(folder.to_path_buf()),
        gitrepos: keys,
        snapshot: Some(snapshot),
        _watch: Some(watch),
    })
}

async fn activate_git(
    request: &RepoRequest,
    path: &Path,
    hub: &kube::Client,
    slot: Arc<ControllerSlot>,
    debounce: Duration,
) -> Result<ActiveRepo> {
    let (git_dir, branch) = {
        let repo = gix::open(path).map_err(|e| Error::git(path, e))?;
        let head = repo.head_name().map_err(|e| Error::git(path, e))?;
        let Some(head) = head else {
            return Err(Error::Repo {
                argument: path.display().to_string(),
                message: "HEAD is detached; check out a branch".into(),
            });
        };
        let branch = head.shorten().to_string();
        let git_dir = std::fs::canonicalize(repo.git_dir()).map_err(|e| Error::io(path, e))?;
        (git_dir, branch)
    };
    let name = request
        .name
        .clone()
        .unwrap_or_else(|| name_from(&path.display().to_string()));
    let mut spec = json!({"repo": format!("file://{}", path.display()), "branch": branch});
    merge(&mut spec, &request.spec);
    let key = apply_gitrepo(hub, gitrepo(&name, spec)).await?;
    let action: watch::Action = {
        let key = key.clone();
        Arc::new(move || {
            let (slot, key) = (slot.clone(), key.clone());
            async move { trigger_all(&slot, std::slice::from_ref(&key)) }.boxed()
        })
    };
    let filter = {
        let git_dir = git_dir.clone();
        Arc::new(move |p: &Path| watch::is_ref_change(&git_dir, p))
    };
    let watch = watch::watch(&git_dir, debounce, filter, action)?;
    Ok(ActiveRepo {
        source: request.source.clone(),
        gitrepos: vec![key],
        snapshot: None,
        _watch: Some(watch),
    })
}

/// The documents of an example's `gitrepo.yaml`: its GitRepos, and the other Fleet hub objects they rely on
/// (ClusterGroups, GitRepoRestrictions, BundleNamespaceMappings) or deploy without git (HelmOps). Any other kind
/// is an error naming it, rather
/// than an object silently left out.
fn split_documents(
    documents: Vec<Value>,
    manifest: &Path,
    argument: &str,
) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut gitrepos = Vec::new();
    let mut others = Vec::new();
    for (index, doc) in documents.into_iter().enumerate() {
        if doc.is_null() {
            continue;
        }
        let kind = doc.get("kind").and_then(Value::as_str).unwrap_or_default();
        let api_version = doc
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let unsupported = || Error::Repo {
            argument: argument.to_string(),
            message: format!(
                "{}: document {}: kind {kind:?} (apiVersion {api_version:?}) is not one dev mode applies; \
                 gitrepo.yaml holds GitRepos, HelmOps, ClusterGroups, GitRepoRestrictions and BundleNamespaceMappings",
                manifest.display(),
                index + 1
            ),
        };
        if api_version != fleet_api::API_VERSION {
            return Err(unsupported());
        }
        match kind {
            "GitRepo" => gitrepos.push(doc),
            _ if hub_resource(kind).is_some() => {
                if doc
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
                {
                    return Err(Error::Repo {
                        argument: argument.to_string(),
                        message: format!(
                            "{}: document {} ({kind}): metadata.name is missing",
                            manifest.display(),
                            index + 1
                        ),
                    });
                }
                others.push(doc);
            }
            _ => return Err(unsupported()),
        }
    }
    Ok((gitrepos, others))
}

/// The API resource of the Fleet kinds an example may create beside its GitRepos.
fn hub_resource(kind: &str) -> Option<kube::api::ApiResource> {
    use kube::api::ApiResource;
    match kind {
        "ClusterGroup" => Some(ApiResource::erase::<fleet_api::ClusterGroup>(&())),
        "GitRepoRestriction" => Some(ApiResource::erase::<fleet_api::GitRepoRestriction>(&())),
        "HelmOp" => Some(ApiResource::erase::<fleet_api::HelmOp>(&())),
        "BundleNamespaceMapping" => {
            Some(ApiResource::erase::<fleet_api::BundleNamespaceMapping>(&()))
        }
        _ => None,
    }
}

/// Server-side applies one of [`hub_resource`]'s kinds (any other kind is skipped).
async fn apply_hub_object(hub: &kube::Client, doc: &Value) -> Result<()> {
    let kind = doc.get("kind").and_then(Value::as_str).unwrap_or_default();
    if let Some(resource) = hub_resource(kind) {
        apply(hub, doc.clone(), kind, &resource).await?;
    }
    Ok(())
}

fn trigger_all(slot: &ControllerSlot, keys: &[GitRepoKey]) {
    for (namespace, name) in keys {
        if !slot.trigger(namespace, name) {
            tracing::info!(%namespace, %name, "no controller running; the GitRepo is polled when it starts");
        }
    }
}

/// A GitRepo in the dev workspace.
fn gitrepo(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": fleet_api::API_VERSION, "kind": "GitRepo",
        "metadata": {"name": name, "namespace": WORKSPACE},
        "spec": spec,
    })
}

/// Server-side applies a GitRepo document.
async fn apply_gitrepo(hub: &kube::Client, doc: Value) -> Result<GitRepoKey> {
    apply(
        hub,
        doc,
        "GitRepo",
        &kube::api::ApiResource::erase::<GitRepo>(&()),
    )
    .await
}

/// Server-side applies a hub document of `resource` (namespace defaulting to the dev workspace, which is created
/// when missing); returns its namespace and name.
async fn apply(
    hub: &kube::Client,
    mut doc: Value,
    kind: &str,
    resource: &kube::api::ApiResource,
) -> Result<GitRepoKey> {
    let name = doc
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let namespace = doc
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or(WORKSPACE)
        .to_string();
    doc["metadata"]["namespace"] = json!(namespace);
    ensure_namespace(hub, &namespace).await?;
    Api::<kube::api::DynamicObject>::namespaced_with(hub.clone(), &namespace, resource)
        .patch(
            &name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&doc),
        )
        .await
        .map_err(|e| Error::kube(format!("applying {kind} {namespace}/{name}"), e))?;
    Ok((namespace, name))
}

fn merge(spec: &mut Value, extra: &Map<String, Value>) {
    for (key, value) in extra {
        spec[key.as_str()] = value.clone();
    }
}

/// A Kubernetes name from the last segment of a path or URL (`.git` dropped, lower case, `-` for the rest).
pub fn name_from(text: &str) -> String {
    let last = text
        .trim_end_matches('/')
        .rsplit(['/', ':'])
        .next()
        .unwrap_or_default();
    let last = last.strip_suffix(".git").unwrap_or(last);
    let mut name: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    name.truncate(50);
    let name = name.trim_matches('-').to_string();
    if name.is_empty() {
        "repo".to_string()
    } else {
        name
    }
}

/// `git@host:path` style remotes.
fn is_scp_like(text: &str) -> bool {
    match text.split_once(':') {
        Some((user_host, _)) => user_host.contains('@') && !user_host.contains('/'),
        None => false,
    }
}

/// Editor swap and backup files, which do not make a new snapshot.
fn is_editor_scratch(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    name.ends_with('~')
        || name.ends_with(".swp")
        || name.ends_with(".swx")
        || name.starts_with(".#")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_told_apart() {
        assert_eq!(
            RepoSource::parse("https://github.com/rancher/fleet-examples").unwrap(),
            RepoSource::Url("https://github.com/rancher/fleet-examples".into())
        );
        assert_eq!(
            RepoSource::parse("git@github.com:rancher/fleet-examples.git").unwrap(),
            RepoSource::Url("git@github.com:rancher/fleet-examples.git".into())
        );
        let temp = tempfile::tempdir().unwrap();
        std::fs::write(temp.path().join("gitrepo.yaml"), "kind: GitRepo\n").unwrap();
        std::fs::create_dir(temp.path().join("repo")).unwrap();
        assert!(matches!(
            RepoSource::parse(temp.path().to_str().unwrap()).unwrap(),
            RepoSource::Example(_)
        ));
        let err = RepoSource::parse("/no/such/dir").unwrap_err().to_string();
        assert!(
            err.starts_with("--repo /no/such/dir: no such file"),
            "{err}"
        );
        let plain = tempfile::tempdir().unwrap();
        let err = RepoSource::parse(plain.path().to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("neither an example folder"), "{err}");
    }

    #[test]
    fn gitrepo_yaml_keeps_cluster_groups_and_refuses_other_kinds() {
        let docs: Vec<Value> = serde_saphyr::from_multiple(
            "apiVersion: fleet.cattle.io/v1alpha1\nkind: ClusterGroup\nmetadata: {name: prod}\nspec: {selector: {}}\n---\n\
             apiVersion: fleet.cattle.io/v1alpha1\nkind: GitRepo\nmetadata: {name: app}\n---\n\
             apiVersion: fleet.cattle.io/v1alpha1\nkind: HelmOp\nmetadata: {name: chart}\n",
        )
        .unwrap();
        let (gitrepos, others) = split_documents(docs, Path::new("gitrepo.yaml"), "ex").unwrap();
        assert_eq!(gitrepos.len(), 1);
        assert_eq!(others[0]["kind"], "ClusterGroup");
        assert_eq!(others[1]["kind"], "HelmOp");
        let docs: Vec<Value> =
            serde_saphyr::from_multiple("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
                .unwrap();
        let err = split_documents(docs, Path::new("gitrepo.yaml"), "ex")
            .unwrap_err()
            .to_string();
        assert!(err.contains("document 1: kind \"ConfigMap\""), "{err}");
        let docs: Vec<Value> = serde_saphyr::from_multiple(
            "apiVersion: fleet.cattle.io/v1alpha1\nkind: ClusterGroup\nmetadata: {}\n",
        )
        .unwrap();
        let err = split_documents(docs, Path::new("gitrepo.yaml"), "ex")
            .unwrap_err()
            .to_string();
        assert!(err.contains("metadata.name is missing"), "{err}");
    }

    #[test]
    fn names_come_from_the_last_segment() {
        assert_eq!(
            name_from("https://github.com/org/Fleet_Examples.git"),
            "fleet-examples"
        );
        assert_eq!(
            name_from("/work/examples/gitrepos/multi-cluster/"),
            "multi-cluster"
        );
        assert_eq!(name_from("git@host:repo.git"), "repo");
        assert_eq!(name_from("///"), "repo");
    }
}
