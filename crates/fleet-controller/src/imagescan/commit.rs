//! The write-back of one GitRepo's scans, as Fleet's git commit job does it: the GitRepo's branch fetched
//! (shallow, into the controller's git cache), the markers of its `paths` (the whole repository by default)
//! rewritten to the scans' latest images, and the changed files committed with the GitRepo's
//! `imageScanCommit` author and message on top of the fetched commit and pushed to the branch. A branch that
//! moved meanwhile refuses the push; the next write-back fetches it again. The GitRepo then reads the new commit
//! at once (as after a webhook). The outcome becomes the GitRepo's `ImageSynced` condition and
//! `lastSyncedImageScanTime`.

use std::collections::BTreeMap;
use std::sync::Arc;

use fleet_api::{GitRepo, IMAGESCAN_SYNCED, ImageScan};
use fleet_bundle::tree::{EntryKind, FileTree, TreePath};
use fleet_git::{Change, GitCache, GitError, GitSource, PushOutcome};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};

use crate::context::Context;
use crate::imagescan::markers;
use crate::status::conditions;

/// Fleet's commit message when `imageScanCommit.messageTemplate` is empty.
pub const DEFAULT_MESSAGE: &str = "Update from image update automation";

/// What Fleet's commit job gives the message template as its data (dot): a placeholder string, nothing about
/// the change yet.
const MESSAGE_DATA: &str = "no data! yet";

/// Why a write-back failed.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("spec.imageScanCommit (authorName, authorEmail) is required to commit image updates")]
    NoCommitSpec,
    #[error("spec.paths: path {0:?} resolves outside the repository root")]
    PathOutside(String),
    #[error(transparent)]
    Git(#[from] GitError),
    /// The GitRepo's source (URL, credentials, CA) could not be set up.
    #[error(transparent)]
    Source(Box<crate::error::Error>),
    #[error("reading the repository: {0}")]
    Read(#[from] fleet_bundle::tree::TreeError),
    #[error("the write-back task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// `imageScanCommit.messageTemplate` does not parse or execute as a Go template.
    #[error("spec.imageScanCommit.messageTemplate: {0}")]
    MessageTemplate(fleet_helm::TemplateError),
}

/// The commit message: `template` (Fleet's default when empty) executed as Fleet executes it, a Go text/template
/// without a function map whose dot is [`MESSAGE_DATA`].
pub fn commit_message(template: &str) -> Result<String, SyncError> {
    let template = if template.is_empty() {
        DEFAULT_MESSAGE
    } else {
        template
    };
    let data = fleet_helm::values_from_json(&serde_json::Value::from(MESSAGE_DATA));
    fleet_helm::render_text(
        "commit message",
        template,
        &data,
        &fleet_helm::TextOptions::go(),
    )
    .map_err(SyncError::MessageTemplate)
}

/// Commits and pushes the scans' images into `repo`'s repository; the new commit, if any.
pub async fn sync(
    ctx: &Context,
    repo: &GitRepo,
    scans: &[ImageScan],
) -> Result<Option<String>, SyncError> {
    let commit_spec = repo
        .spec
        .image_scan_commit
        .clone()
        .ok_or(SyncError::NoCommitSpec)?;
    // Fleet refuses to push without clientSecretName; here the remote decides (a server that takes anonymous
    // pushes gets them, the others answer with an authentication error on the condition).
    let source = crate::gitrepo::fetch::source(ctx, repo)
        .await
        .map_err(|err| SyncError::Source(Box::new(err)))?;
    let paths = if repo.spec.paths.is_empty() {
        vec![TreePath::root()]
    } else {
        repo.spec
            .paths
            .iter()
            .map(|path| {
                let relative = path.trim_start_matches('/');
                if relative.is_empty() || relative == "." {
                    return Ok(TreePath::root());
                }
                TreePath::new(relative).ok_or_else(|| SyncError::PathOutside(path.clone()))
            })
            .collect::<Result<Vec<_>, _>>()?
    };
    let setters = markers::setters(scans);
    let message = commit_message(&commit_spec.message_template)?;
    let git = ctx.git.clone();
    tokio::task::spawn_blocking(move || {
        write_back(&git, &source, &paths, &setters, |files| Change {
            files,
            author_name: commit_spec.author_name.clone(),
            author_email: commit_spec.author_email.clone(),
            message: message.clone(),
        })
    })
    .await?
}

fn write_back(
    git: &Arc<GitCache>,
    source: &GitSource,
    paths: &[TreePath],
    setters: &BTreeMap<String, String>,
    change: impl Fn(BTreeMap<String, Vec<u8>>) -> Change,
) -> Result<Option<String>, SyncError> {
    let base = git.resolve(source)?;
    git.fetch(source, &base)?;
    let tree = git.tree(source, &base)?;
    let mut files = BTreeMap::new();
    for path in paths {
        rewrite_under(&tree, path, setters, &mut files)?;
    }
    if files.is_empty() {
        return Ok(None);
    }
    match git.push(source, &base, &change(files))? {
        PushOutcome::Pushed { commit } => Ok(Some(commit)),
        PushOutcome::Unchanged => Ok(None),
    }
}

/// Rewrites the YAML files under `dir` (recursively; symlinks are not followed), adding the changed ones.
fn rewrite_under(
    tree: &dyn FileTree,
    dir: &TreePath,
    setters: &BTreeMap<String, String>,
    files: &mut BTreeMap<String, Vec<u8>>,
) -> Result<(), SyncError> {
    let entries = match tree.list_dir(dir) {
        Ok(entries) => entries,
        // A path that is a file, or missing in this commit: nothing to rewrite there.
        Err(_) => return Ok(()),
    };
    for entry in entries {
        let path = dir.child(&entry.name);
        match entry.kind {
            EntryKind::Dir => rewrite_under(tree, &path, setters, files)?,
            EntryKind::File if markers::is_yaml(&entry.name) => {
                let bytes = tree.read_file(&path)?;
                let Ok(text) = String::from_utf8(bytes) else {
                    continue;
                };
                if let Some(new) = markers::rewrite(&text, setters) {
                    files.insert(path.to_string(), new.into_bytes());
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Records the outcome on the GitRepo: `ImageSynced` and, after a success, `lastSyncedImageScanTime`. A
/// pushed commit is read at once.
pub async fn record(
    ctx: &Context,
    repo: &GitRepo,
    outcome: &Result<Option<String>, SyncError>,
) -> Result<(), kube::Error> {
    let namespace = repo.namespace().unwrap_or_default();
    let name = repo.name_any();
    let api: Api<GitRepo> = Api::namespaced(ctx.client.clone(), &namespace);
    let Some(current) = api.get_opt(&name).await? else {
        return Ok(());
    };
    let mut status = current.status.clone().unwrap_or_default();
    let now = conditions::now();
    match outcome {
        Ok(_) => {
            status.last_synced_image_scan_time = Some(Time(k8s_openapi::jiff::Timestamp::now()));
            conditions::set(
                &mut status.base.conditions,
                IMAGESCAN_SYNCED,
                true,
                "",
                "",
                &now,
            );
        }
        Err(err) => conditions::set(
            &mut status.base.conditions,
            IMAGESCAN_SYNCED,
            false,
            "Error",
            &err.to_string(),
            &now,
        ),
    }
    let patch = serde_json::json!({
        "status": {
            "conditions": status.base.conditions,
            "lastSyncedImageScanTime": status.last_synced_image_scan_time,
        }
    });
    api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    if let Ok(Some(commit)) = outcome {
        tracing::info!(%namespace, %name, %commit, "image scan: pushed a commit");
        ctx.webhook_requests
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(format!("{namespace}/{name}"));
        ctx.triggers.gitrepo(&namespace, &name);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fleet parses the message as a Go template with no functions and executes it on a placeholder string.
    #[test]
    fn the_message_template_runs_as_fleet_runs_it() {
        assert_eq!(commit_message("").unwrap(), DEFAULT_MESSAGE);
        assert_eq!(
            commit_message("bump images\n\nby the scanner").unwrap(),
            "bump images\n\nby the scanner"
        );
        assert_eq!(
            commit_message("automation: {{ . }} {{ len . }}").unwrap(),
            "automation: no data! yet 12"
        );
        let unknown = commit_message("{{ upper . }}").unwrap_err().to_string();
        assert!(
            unknown.starts_with("spec.imageScanCommit.messageTemplate: ")
                && unknown.contains("function \"upper\" not defined"),
            "{unknown}"
        );
        assert!(commit_message("{{ if . }}").is_err());
    }
}
