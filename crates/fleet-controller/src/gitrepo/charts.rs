//! Chart credentials of a GitRepo, read from its secrets for the controller's chart downloads: `helmSecretName`
//! (basic auth, `cacerts`, `insecureSkipVerify`, `basicHTTP`), `helmSecretNameForPaths` (its `secrets-path.yaml`),
//! `helmRepoURLRegex`, and `insecureSkipTLSVerify`, which Fleet's git job also passes to its Helm downloads.

use std::collections::BTreeMap;

use fleet_api::GitRepo;
use fleet_chart_source::{Auth, Credentials};
use kube::ResourceExt;

use crate::context::Context;
use crate::error::{Error, Result};
use crate::secrets::read_data;

/// The secret's data, or an error naming the field that names a missing secret.
async fn secret_data(
    ctx: &Context,
    repo: &GitRepo,
    field: &str,
    name: &str,
) -> Result<BTreeMap<String, Vec<u8>>> {
    let namespace = repo.namespace().unwrap_or_default();
    read_data(&ctx.client, &namespace, name)
        .await?
        .ok_or_else(|| {
            Error::invalid(
                format!("GitRepo {namespace}/{}", repo.name_any()),
                format!("{field}: secret {name:?} not found"),
            )
        })
}

/// The credentials the GitRepo's chart downloads use.
pub async fn credentials(ctx: &Context, repo: &GitRepo) -> Result<Credentials> {
    let spec = &repo.spec;
    let origin = || {
        format!(
            "GitRepo {}/{}",
            repo.namespace().unwrap_or_default(),
            repo.name_any()
        )
    };
    let mut credentials = Credentials {
        url_regex: spec.helm_repo_url_regex.clone(),
        ..Default::default()
    };
    if !spec.helm_secret_name_for_paths.is_empty() {
        let data = secret_data(
            ctx,
            repo,
            "helmSecretNameForPaths",
            &spec.helm_secret_name_for_paths,
        )
        .await?;
        let text = data
            .get("secrets-path.yaml")
            .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
            .unwrap_or_default();
        credentials.by_path = Credentials::parse_by_path(&text)
            .map_err(|err| Error::invalid(origin(), format!("helmSecretNameForPaths: {err}")))?;
    } else if !spec.helm_secret_name.is_empty() {
        let data = secret_data(ctx, repo, "helmSecretName", &spec.helm_secret_name).await?;
        credentials.default = Auth::from_secret(&data)
            .map_err(|err| Error::invalid(origin(), format!("helmSecretName: {err}")))?;
    }
    if spec.insecure_skip_tls_verify {
        credentials.default.insecure_skip_verify = true;
        for auth in credentials.by_path.values_mut() {
            auth.insecure_skip_verify = true;
        }
    }
    Ok(credentials)
}
