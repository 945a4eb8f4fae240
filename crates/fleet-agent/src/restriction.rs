//! `allowedTargetNamespaceSelector` (set by the controller from GitRepoRestrictions): the BundleDeployment
//! deploys only into a target namespace that already exists downstream and whose labels match the selector,
//! as in Fleet; otherwise it is not deployed and the reason is its `Deployed` condition.

use fleet_api::BundleDeploymentOptions;
use fleet_target::selector::SelectorExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;

use crate::apply::{api_message, release_namespace};
use crate::downstream::Downstream;

/// `Ok` when the options allow deploying into their target namespace, else the reason.
pub async fn check(
    downstream: &Downstream,
    options: &BundleDeploymentOptions,
) -> Result<(), String> {
    let Some(selector) = &options.allowed_target_namespace_selector else {
        return Ok(());
    };
    selector
        .validate("allowedTargetNamespaceSelector")
        .map_err(|err| err.to_string())?;
    let namespace = release_namespace(options);
    let api: Api<Namespace> = Api::all(downstream.client().clone());
    let live = api
        .get_opt(&namespace)
        .await
        .map_err(|err| format!("namespace {namespace}: {}", api_message(&err)))?
        .ok_or_else(|| {
            format!(
                "namespace {namespace} does not exist; allowedTargetNamespaceSelector requires an existing namespace"
            )
        })?;
    let labels = live.metadata.labels.unwrap_or_default();
    if selector.matches(&labels) {
        Ok(())
    } else {
        Err(format!(
            "namespace {namespace} does not match allowedTargetNamespaceSelector"
        ))
    }
}
