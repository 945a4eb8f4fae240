//! The Bundle reconciler's reads of values Secrets ([`super::values`] moves the values there): a Bundle's
//! Helm values read back before targeting, and the deployed values of BundleDeployments this process did
//! not write, kept when their staged options change.

use std::borrow::Cow;

use fleet_api::{Bundle, BundleDeployment, OPTIONS_SECRET_VALUES};
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::Api;

use super::values::{bundle_values_hash, put_values, restore_bundle};

/// `bundle` with its Helm values read back from its values Secret when `valuesHash` says they were moved
/// there (borrowed as it is otherwise). `None` when the Secret is not this version's because a newer
/// version is on its way: its values were written ahead of the Bundle ([`super::cache::WrittenAhead`]), or the API
/// server already holds a newer Bundle than the one reconciled; that version's watch event wakes the
/// reconcile again, so nothing fails. Otherwise a missing or mismatched Secret is an error, so that the
/// reconcile is retried, as Fleet's is.
pub async fn with_bundle_values<'a>(
    ctx: &crate::context::Context,
    bundle: &'a Bundle,
) -> crate::error::Result<Option<Cow<'a, Bundle>>> {
    if bundle.spec.values_hash.is_empty() {
        return Ok(Some(Cow::Borrowed(bundle)));
    }
    let namespace = bundle.namespace().unwrap_or_default();
    let name = bundle.name_any();
    let object = format!("Bundle {namespace}/{name}");
    let data = crate::secrets::read_data(&ctx.client, &namespace, &name).await?;
    let found = data.as_ref().map(bundle_values_hash);
    if let (Some(data), Some(found)) = (&data, &found)
        && *found == bundle.spec.values_hash
    {
        let mut with_values = bundle.clone();
        restore_bundle(&mut with_values, data)
            .map_err(|message| crate::error::Error::invalid(&object, message))?;
        return Ok(Some(Cow::Owned(with_values)));
    }
    let written_ahead = found
        .as_ref()
        .is_some_and(|found| ctx.values_ahead.holds(&namespace, &name, found));
    if written_ahead || newer_bundle_stored(ctx, bundle).await? {
        tracing::debug!(bundle = %object, "values secret of a newer version; waiting for it");
        return Ok(None);
    }
    let problem = if data.is_some() {
        "does not match valuesHash"
    } else {
        "does not exist"
    };
    Err(crate::error::Error::waiting(
        &object,
        format!("its values secret {name:?} {problem} (yet)"),
    ))
}

/// Whether the API server holds a newer version of `bundle` than this one (a reconcile may see the
/// controller's cache before the new version's watch event).
async fn newer_bundle_stored(
    ctx: &crate::context::Context,
    bundle: &Bundle,
) -> crate::error::Result<bool> {
    let api: Api<Bundle> =
        Api::namespaced(ctx.client.clone(), &bundle.namespace().unwrap_or_default());
    Ok(api
        .get_opt(&bundle.name_any())
        .await?
        .is_some_and(|stored| stored.metadata.generation != bundle.metadata.generation))
}

/// Puts back into `bd` the Helm values of its deployed `options`, read from the `values` key of its
/// options Secret: a BundleDeployment that keeps its deployed options while its staged options change,
/// written before this process started, so planning knows its options without their values
/// ([`fleet_target::plan::PlannedWrite::deployed_values_unknown`]). Without this its rewrite would empty
/// them. A missing Secret is an error (retried), never a write without the values.
pub async fn keep_deployed_values(
    ctx: &crate::context::Context,
    bd: &mut BundleDeployment,
) -> crate::error::Result<()> {
    let namespace = bd.namespace().unwrap_or_default();
    let name = bd.name_any();
    let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
    let object = format!("BundleDeployment {namespace}/{name}");
    let secret = secrets.get_opt(&name).await?.ok_or_else(|| {
        crate::error::Error::waiting(&object, "its options secret does not exist")
    })?;
    let values = fleet_api::options_secret_values(secret.data.as_ref(), OPTIONS_SECRET_VALUES)
        .map_err(|_| {
            crate::error::Error::invalid(
                &object,
                "its options secret's values are not a JSON object",
            )
        })?;
    put_values(&mut bd.spec.options, values);
    Ok(())
}
