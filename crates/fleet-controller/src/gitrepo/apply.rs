//! Writing a commit's Bundles: server-side apply of each Bundle read (owned by the GitRepo, labelled with
//! its name and the commit, annotated with the access it was read with, [`restrict::ACCESS_ANNOTATION`]) with its Helm values moved into its values Secret as Fleet does
//! ([`crate::bundle::values::extract_bundle`]; a Bundle without values loses an old values Secret), the read
//! error recorded on a broken Bundle (whose last good spec stays), and pruning of the GitRepo's Bundles whose
//! directory is gone. A paused GitRepo that has read a commit before creates no missing Bundle.

use std::collections::{BTreeMap, BTreeSet};

use fleet_api::{Bundle, GitRepo, labels};
use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::{Resource, ResourceExt};
use serde_json::json;

use crate::bundle::values::{self, BundleValues};
use crate::context::{Context, FIELD_MANAGER};
use crate::delete::delete;
use crate::error::Result;
use crate::gitrepo::render::Rendered;
use crate::gitrepo::restrict;

pub use super::annotations::READ_ERROR_ANNOTATION;
/// The field manager that writes [`READ_ERROR_ANNOTATION`], apart from the Bundle's spec.
const READ_ERROR_MANAGER: &str = "fleet-controller-read-error";

const PARALLEL_WRITES: usize = 8;

/// Applies `rendered` for `repo`: writes the Bundles read, marks the broken ones, prunes the vanished.
pub async fn apply(ctx: &Context, repo: &GitRepo, rendered: &Rendered) -> Result<()> {
    let namespace = repo.namespace().unwrap_or_default();
    let api: Api<Bundle> = Api::namespaced(ctx.client.clone(), &namespace);
    let existing = api
        .list_metadata(&ListParams::default().labels(&format!(
            "{}={}",
            labels::REPO_NAME,
            repo.name_any()
        )))
        .await?;
    let marked: BTreeSet<String> = existing
        .items
        .iter()
        .filter(|m| m.annotations().contains_key(READ_ERROR_ANNOTATION))
        .map(ResourceExt::name_any)
        .collect();
    let uids: BTreeMap<String, String> = existing
        .items
        .iter()
        .filter_map(|m| Some((m.name_any(), m.metadata.uid.clone()?)))
        .collect();
    let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
    let owner = repo.controller_owner_ref(&());
    let access = restrict::fingerprint(repo);
    // While the GitRepo is paused, Bundles it already has are updated (their BundleDeployments only
    // stage the change), but one that is missing is not created again until the GitRepo is unpaused, as
    // Fleet's documentation says (gitrepo-add, "Pausing"). The first read of a GitRepo created paused
    // still writes its Bundles, as Fleet's git job does.
    let has_read = repo.status.as_ref().is_some_and(|s| !s.commit.is_empty());
    let held_back = |name: &str| repo.spec.paused && has_read && !uids.contains_key(name);
    let mut writes = Vec::new();
    for bundle in rendered
        .bundles
        .iter()
        .filter(|b| !held_back(&b.name_any()))
    {
        let (api, secrets) = (api.clone(), secrets.clone());
        let mut bundle = bundle.clone();
        bundle.metadata.owner_references = owner.clone().map(|o| vec![o]);
        bundle
            .annotations_mut()
            .insert(restrict::ACCESS_ANNOTATION.to_string(), access.clone());
        let moved = values::extract_bundle(&mut bundle);
        let was_marked = marked.contains(&bundle.name_any());
        let uid = uids.get(&bundle.name_any()).cloned();
        let namespace = namespace.as_str();
        writes.push(async move {
            let name = bundle.name_any();
            // Until the Bundle is written, a reconcile of its previous version waits for it instead of
            // failing on the new values.
            let _ahead = moved
                .as_ref()
                .map(|moved| ctx.values_ahead.begin(namespace, &name, &moved.hash));
            if let Some(moved) = &moved {
                // Before the Bundle, so that its reconcile finds values matching its valuesHash; owned by the
                // Bundle (once it exists).
                let mut owner = bundle.clone();
                owner.metadata.uid = uid.clone();
                write_values(&secrets, &owner, moved).await?;
            }
            let stored = api
                .patch(
                    &name,
                    &PatchParams::apply(FIELD_MANAGER).force(),
                    &Patch::Apply(&bundle),
                )
                .await?;
            match &moved {
                Some(moved) if uid.is_none() => write_values(&secrets, &stored, moved).await?,
                Some(_) => {}
                None => delete_values(&secrets, &name).await?,
            }
            if was_marked {
                set_read_error(&api, &name, None).await?;
            }
            Ok::<_, crate::error::Error>(())
        });
    }
    stream::iter(writes)
        .buffer_unordered(PARALLEL_WRITES)
        .try_collect::<Vec<()>>()
        .await?;

    for meta in existing.items {
        let name = meta.name_any();
        if !rendered.names.contains(&name) {
            delete(&api, &name).await?;
        } else if let Some(error) = rendered.errors.get(&name)
            && meta.annotations().get(READ_ERROR_ANNOTATION) != Some(error)
        {
            set_read_error(&api, &name, Some(error)).await?;
        }
    }
    Ok(())
}

/// Applies the values Secret of `bundle`.
async fn write_values(secrets: &Api<Secret>, bundle: &Bundle, moved: &BundleValues) -> Result<()> {
    secrets
        .patch(
            &bundle.name_any(),
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&values::bundle_secret(bundle, moved)),
        )
        .await?;
    Ok(())
}

/// Deletes the values Secret named `name`, if there is one (a Secret of another type is left alone).
async fn delete_values(secrets: &Api<Secret>, name: &str) -> Result<()> {
    let Some(secret) = secrets.get_opt(name).await? else {
        return Ok(());
    };
    if secret.type_.as_deref() == Some(labels::SECRET_TYPE_BUNDLE_VALUES) {
        delete(secrets, name).await?;
    }
    Ok(())
}

/// Sets or (with `None`) removes the read-error annotation.
async fn set_read_error(api: &Api<Bundle>, name: &str, error: Option<&str>) -> Result<()> {
    let patch = json!({
        "apiVersion": fleet_api::API_VERSION,
        "kind": "Bundle",
        "metadata": {"annotations": error.map(|e| json!({READ_ERROR_ANNOTATION: e})).unwrap_or(json!({}))},
    });
    api.patch(
        name,
        &PatchParams::apply(READ_ERROR_MANAGER).force(),
        &Patch::Apply(&patch),
    )
    .await?;
    Ok(())
}
