//! ImageScans from fleet.yaml: after a GitRepo's commit is read, each bundle's `imageScans` entries that name
//! an image become ImageScan objects in the GitRepo's namespace, named `imagescan-<bundle>-<position>` with
//! `spec.gitrepoName` set and the Bundle's labels and annotations, as Fleet's apply writes them. They are
//! owned by the GitRepo (deleted with it), and those a later commit no longer has are deleted. ImageScans
//! created by hand are left alone.

use std::collections::BTreeSet;

use fleet_api::{GitRepo, ImageScan, labels};
use fleet_bundle::discover;
use fleet_bundle::read::read_image_scans;
use fleet_git::GitSource;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::{Resource, ResourceExt};

use crate::context::{Context, FIELD_MANAGER};
use crate::error::Result;

/// Writes the ImageScans of `commit` of `repo` and deletes the ones it no longer has.
pub async fn apply(ctx: &Context, repo: &GitRepo, source: &GitSource, commit: &str) -> Result<()> {
    let tree = crate::gitrepo::fetch::checkout(ctx, source, commit).await?;
    let options = crate::gitrepo::render::read_options(repo, commit);
    let locations = if repo.spec.bundles.is_empty() {
        let paths = if repo.spec.paths.is_empty() {
            discover::default_paths()
        } else {
            repo.spec.paths.clone()
        };
        discover::discover(&tree, &paths).unwrap_or_default()
    } else {
        repo.spec
            .bundles
            .iter()
            .filter_map(|b| discover::driven_location(&b.base, Some(&b.options)).ok())
            .collect()
    };
    let namespace = repo.namespace().unwrap_or_default();
    let api: Api<ImageScan> = Api::namespaced(ctx.client.clone(), &namespace);
    let mut wanted = BTreeSet::new();
    for location in &locations {
        // A broken fleet.yaml is reported by the bundle read; it has no scans here.
        let Ok(scans) = read_image_scans(&tree, location, &options) else {
            continue;
        };
        for mut scan in scans {
            let name = scan.name_any();
            scan.spec.gitrepo_name = repo.name_any();
            scan.metadata = ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(namespace.clone()),
                labels: Some(options.labels.clone()),
                owner_references: owner(repo).map(|owner| vec![owner]),
                ..ObjectMeta::default()
            };
            api.patch(
                &name,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&scan),
            )
            .await?;
            wanted.insert(name);
        }
    }
    let Some(uid) = repo.meta().uid.clone() else {
        return Ok(());
    };
    let selector = format!("{}={}", labels::REPO_NAME, repo.name_any());
    for existing in api.list(&ListParams::default().labels(&selector)).await? {
        let ours = existing.owner_references().iter().any(|o| o.uid == uid);
        if ours && !wanted.contains(&existing.name_any()) {
            api.delete(&existing.name_any(), &DeleteParams::default())
                .await?;
        }
    }
    Ok(())
}

fn owner(repo: &GitRepo) -> Option<OwnerReference> {
    Some(OwnerReference {
        api_version: GitRepo::api_version(&()).to_string(),
        kind: GitRepo::kind(&()).to_string(),
        name: repo.name_any(),
        uid: repo.meta().uid.clone()?,
        controller: Some(true),
        block_owner_deletion: Some(true),
    })
}
