//! Pushing a commit: a changed set of files becomes a tree and a commit on top of a fetched commit in the
//! cache's bare repository, and that commit is sent to the remote's branch — over smart HTTP(S) or ssh with the
//! receive-pack protocol and a pack of the new objects ([`http`], [`protocol`], [`pack`]), or to a local
//! repository by writing the objects and moving its ref in-process. No `git` binary runs. The branch must
//! still point at the commit the change was made on; otherwise the push is refused as a non-fast-forward
//! ([`GitError::PushRejected`]) and the caller fetches again and retries. ssh remotes get the same protocol
//! through the system client ([`ssh`]).

mod http;
mod pack;
mod protocol;
mod ssh;

use std::collections::{BTreeMap, HashSet};

use gix::objs::Write as _;
use gix::objs::tree::EntryKind;

use crate::error::GitError;
use crate::local::{local_path, open_source};
use crate::source::{DEFAULT_BRANCH, GitSource};
use crate::tree::tree_entries;
use pack::PackObject;
use protocol::{Advertisement, Report};

/// A commit to make: files to write (path relative to the repository root, `/`-separated → new content) and
/// who makes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub files: BTreeMap<String, Vec<u8>>,
    pub author_name: String,
    pub author_email: String,
    pub message: String,
}

/// The result of [`crate::GitCache::push`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushOutcome {
    /// The new commit is on the remote's branch.
    Pushed { commit: String },
    /// The files already had that content: nothing was committed.
    Unchanged,
}

/// The branch a push updates: the source's branch, or Fleet's default.
pub(crate) fn branch_ref(source: &GitSource) -> String {
    format!(
        "refs/heads/{}",
        source.branch.as_deref().unwrap_or(DEFAULT_BRANCH)
    )
}

/// Commits `change` on top of `base` (which `repo`, the cache, holds) and pushes it to the source's branch.
pub(crate) fn push(
    repo: &gix::Repository,
    ssh_program: &std::ffi::OsString,
    source: &GitSource,
    base: gix::ObjectId,
    change: &Change,
) -> Result<PushOutcome, GitError> {
    let corrupt = |reason: String| GitError::Corrupt {
        url: source.display_url(),
        reason,
    };
    let base_tree = repo
        .find_commit(base)
        .and_then(|commit| commit.tree_id())
        .map_err(|err| corrupt(format!("commit {base}: {err}")))?
        .detach();
    let mut editor = repo
        .edit_tree(base_tree)
        .map_err(|err| corrupt(format!("tree {base_tree}: {err}")))?;
    for (path, content) in &change.files {
        let kind = match editor.get(path.as_str()).map(|entry| entry.mode().kind()) {
            Some(EntryKind::BlobExecutable) => EntryKind::BlobExecutable,
            _ => EntryKind::Blob,
        };
        let blob = repo
            .write_blob(content)
            .map_err(|err| corrupt(format!("writing {path}: {err}")))?;
        editor
            .upsert(path.as_str(), kind, blob.detach())
            .map_err(|err| corrupt(format!("writing {path}: {err}")))?;
    }
    let tree = editor
        .write()
        .map_err(|err| corrupt(format!("writing the tree: {err}")))?
        .detach();
    if tree == base_tree {
        return Ok(PushOutcome::Unchanged);
    }
    let signature = gix::actor::Signature {
        name: change.author_name.as_str().into(),
        email: change.author_email.as_str().into(),
        time: gix::date::Time::now_utc(),
    };
    let commit = gix::objs::Commit {
        tree,
        parents: std::iter::once(base).collect(),
        author: signature.clone(),
        committer: signature,
        encoding: None,
        message: change.message.as_str().into(),
        extra_headers: Vec::new(),
    };
    let id = repo
        .write_object(&commit)
        .map_err(|err| corrupt(format!("writing the commit: {err}")))?
        .detach();
    let objects = new_objects(repo, base_tree, tree, id).map_err(corrupt)?;
    let update = BranchUpdate {
        reference: branch_ref(source),
        base,
        new: id,
        objects: &objects,
    };
    if let Some(path) = local_path(&source.url) {
        push_local(&open_source(&path, source)?, source, &update)?;
    } else if is_http(&source.url) {
        push_to(http::HttpRemote::new(source)?, source, &update)?;
    } else {
        push_to(
            ssh::SshRemote::connect(source, ssh_program)?,
            source,
            &update,
        )?;
    }
    let commit = id.to_hex().to_string();
    repo.reference(
        crate::fetch::cache_ref(&commit),
        id,
        gix::refs::transaction::PreviousValue::Any,
        "fleet: pushed",
    )
    .map_err(|err| corrupt(format!("writing ref for {commit}: {err}")))?;
    tracing::info!(url = %source.display_url(), reference = %update.reference, %commit, "pushed");
    Ok(PushOutcome::Pushed { commit })
}

fn is_http(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://")
}

/// The objects of commit `commit` (tree `tree`) that the base commit's tree `base_tree` lacks, commit first.
fn new_objects(
    repo: &gix::Repository,
    base_tree: gix::ObjectId,
    tree: gix::ObjectId,
    commit: gix::ObjectId,
) -> Result<Vec<PackObject>, String> {
    let mut known = HashSet::new();
    collect(repo, base_tree, &mut known, &mut |_, _| Ok(()))?;
    let mut objects = vec![read(repo, commit)?];
    collect(repo, tree, &mut known, &mut |repo, id| {
        objects.push(read(repo, id)?);
        Ok(())
    })?;
    Ok(objects)
}

/// Visits the tree `id` and every tree and blob under it that is not in `seen` yet, adding them to it.
fn collect(
    repo: &gix::Repository,
    id: gix::ObjectId,
    seen: &mut HashSet<gix::ObjectId>,
    visit: &mut dyn FnMut(&gix::Repository, gix::ObjectId) -> Result<(), String>,
) -> Result<(), String> {
    if !seen.insert(id) {
        return Ok(());
    }
    visit(repo, id)?;
    for (kind, oid) in tree_entries(repo, id)? {
        match kind {
            EntryKind::Tree => collect(repo, oid, seen, visit)?,
            EntryKind::Commit => {}
            EntryKind::Blob | EntryKind::BlobExecutable | EntryKind::Link => {
                if seen.insert(oid) {
                    visit(repo, oid)?;
                }
            }
        }
    }
    Ok(())
}

fn read(repo: &gix::Repository, id: gix::ObjectId) -> Result<PackObject, String> {
    let object = repo
        .find_object(id)
        .map_err(|err| format!("object {id}: {err}"))?;
    Ok(PackObject {
        kind: object.kind,
        data: object.data.clone(),
    })
}

fn rejected(source: &GitSource, reference: &str, reason: String) -> GitError {
    GitError::PushRejected {
        url: source.display_url(),
        reference: reference.to_string(),
        reason,
    }
}

/// The check a `git push` makes before sending: the remote's branch still points at `base`.
fn check_fast_forward(
    source: &GitSource,
    reference: &str,
    base: gix::ObjectId,
    current: Option<&str>,
) -> Result<(), GitError> {
    match current {
        Some(current) if gix::ObjectId::from_hex(current.as_bytes()).is_ok_and(|id| id == base) => {
            Ok(())
        }
        Some(current) => Err(rejected(
            source,
            reference,
            format!(
                "non-fast-forward: the branch moved from {base} to {current} after it was fetched"
            ),
        )),
        None => Err(rejected(
            source,
            reference,
            "the branch no longer exists on the remote".to_string(),
        )),
    }
}

/// A remote's receive-pack service, over smart HTTP(S) or ssh: what it advertises, then its report on the
/// pushed pack.
trait ReceivePack {
    fn advertisement(&mut self) -> Result<Advertisement, GitError>;
    fn receive_pack(self, body: Vec<u8>, reference: &str) -> Result<Report, GitError>;
}

impl ReceivePack for http::HttpRemote<'_> {
    fn advertisement(&mut self) -> Result<Advertisement, GitError> {
        http::HttpRemote::advertisement(self)
    }

    fn receive_pack(self, body: Vec<u8>, reference: &str) -> Result<Report, GitError> {
        http::HttpRemote::receive_pack(&self, body, reference)
    }
}

impl ReceivePack for ssh::SshRemote<'_> {
    fn advertisement(&mut self) -> Result<Advertisement, GitError> {
        ssh::SshRemote::advertisement(self)
    }

    fn receive_pack(self, body: Vec<u8>, reference: &str) -> Result<Report, GitError> {
        ssh::SshRemote::receive_pack(self, &body, reference)
    }
}

/// What a push does: move branch `reference` from `base` to `new`, sending `objects` (those `new` has and
/// `base` has not).
struct BranchUpdate<'a> {
    reference: String,
    base: gix::ObjectId,
    new: gix::ObjectId,
    objects: &'a [PackObject],
}

/// Sends the objects as one pack with the command moving the branch from `base` to `new`, as `git push`
/// does: only while the remote's branch still points at `base`.
fn push_to(
    mut remote: impl ReceivePack,
    source: &GitSource,
    update: &BranchUpdate<'_>,
) -> Result<(), GitError> {
    let (reference, base, new) = (update.reference.as_str(), update.base, update.new);
    let advertisement = remote.advertisement()?;
    check_fast_forward(source, reference, base, advertisement.get(reference))?;
    let pack = pack::write_pack(update.objects).map_err(|err| GitError::Other {
        url: source.display_url(),
        reason: format!("writing the pack: {err}"),
    })?;
    let body = protocol::request(
        &base.to_hex().to_string(),
        &new.to_hex().to_string(),
        reference,
        &pack,
    );
    match remote.receive_pack(body, reference)? {
        Report::Ok => Ok(()),
        Report::Rejected(reason) => Err(rejected(source, reference, reason)),
        Report::UnpackFailed(reason) => Err(GitError::Other {
            url: source.display_url(),
            reason: format!("the server could not unpack the pushed objects: {reason}"),
        }),
    }
}

/// Writes the objects into the local repository and moves its branch from `base` to `new` atomically.
fn push_local(
    target: &gix::Repository,
    source: &GitSource,
    update: &BranchUpdate<'_>,
) -> Result<(), GitError> {
    let (reference, base, new) = (update.reference.as_str(), update.base, update.new);
    let current = target
        .try_find_reference(reference)
        .ok()
        .flatten()
        .and_then(|mut found| found.peel_to_id().ok())
        .map(|id| id.detach().to_hex().to_string());
    check_fast_forward(source, reference, base, current.as_deref())?;
    // git refuses by default to move the branch checked out in a work tree (receive.denyCurrentBranch).
    if !target.is_bare()
        && target
            .head_name()
            .ok()
            .flatten()
            .is_some_and(|head| head.as_bstr() == reference)
    {
        return Err(rejected(
            source,
            reference,
            "the branch is checked out in the repository's work tree".to_string(),
        ));
    }
    for object in update.objects {
        target
            .objects
            .write_buf(object.kind, &object.data)
            .map_err(|err| GitError::Other {
                url: source.display_url(),
                reason: format!("writing objects: {err}"),
            })?;
    }
    target
        .reference(
            reference,
            new,
            gix::refs::transaction::PreviousValue::MustExistAndMatch(base.into()),
            "fleet: image scan update",
        )
        .map_err(|err| {
            rejected(
                source,
                reference,
                format!("updating the branch failed: {err}"),
            )
        })?;
    Ok(())
}
