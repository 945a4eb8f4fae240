//! `allowedTargetNamespaceSelector` (set by the controller from GitRepoRestrictions): the BundleDeployment
//! deploys only into a target namespace that already exists downstream and whose labels match the selector,
//! as in Fleet; otherwise it is not deployed and the reason is its `Deployed` condition.

use fleet_api::BundleDeploymentOptions;
use fleet_target::selector::SelectorExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;

use crate::apply::{api_message, release_namespace};
use crate::downstream::Downstream;

/// Why the BundleDeployment may not deploy into its target namespace; its text is the `Deployed`
/// condition's message.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// The selector itself is invalid.
    #[error(transparent)]
    InvalidSelector(#[from] fleet_target::TargetError),
    /// The target namespace could not be read.
    #[error("namespace {namespace}: {}", api_message(error))]
    Lookup {
        namespace: String,
        error: kube::Error,
    },
    /// The target namespace does not exist (it is never created for a restricted BundleDeployment).
    #[error(
        "namespace {namespace} does not exist; allowedTargetNamespaceSelector requires an existing namespace"
    )]
    Missing { namespace: String },
    /// The target namespace's labels do not match the selector.
    #[error("namespace {namespace} does not match allowedTargetNamespaceSelector")]
    NoMatch { namespace: String },
}

/// `Ok` when the options allow deploying into their target namespace, else the reason.
pub async fn check(
    downstream: &Downstream,
    options: &BundleDeploymentOptions,
) -> Result<(), Refused> {
    let Some(selector) = &options.allowed_target_namespace_selector else {
        return Ok(());
    };
    selector.validate("allowedTargetNamespaceSelector")?;
    let namespace = release_namespace(options);
    let api: Api<Namespace> = Api::all(downstream.client().clone());
    let live = match api.get_opt(&namespace).await {
        Ok(Some(live)) => live,
        Ok(None) => return Err(Refused::Missing { namespace }),
        Err(error) => return Err(Refused::Lookup { namespace, error }),
    };
    let labels = live.metadata.labels.unwrap_or_default();
    if selector.matches(&labels) {
        Ok(())
    } else {
        Err(Refused::NoMatch { namespace })
    }
}
