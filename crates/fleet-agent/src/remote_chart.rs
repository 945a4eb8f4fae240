//! The chart of a HelmOp's BundleDeployment (one with `helmChartOptions`), downloaded by the agent itself as
//! Fleet's agent does: the chart its options name (repository + chart + version, an OCI reference, or a
//! chart URL) through `fleet-chart-source` (archives cached by digest), with the credentials of the Secret
//! that `helmChartOptions.helmOpSecretName` names in the BundleDeployment's namespace on the hub (the copy
//! the controller makes there), `helmOpInsecureSkipTLSVerify` and `helmOpCABundle`. The files are stored
//! under the chart's `.chart/<checksum>` prefix, where rendering looks for a downloaded chart.

use std::collections::BTreeMap;

use fleet_api::{BundleDeployment, BundleDeploymentOptions, BundleResource};
use fleet_bundle::remote::{ChartRef, chart_prefix};
use fleet_bundle::resources::{BundleFile, encode};
use fleet_chart_source::{Auth, ChartSource};
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;

use crate::error::{Error, Result};

/// The resources to render for `bd` with `options`: its chart's files.
pub async fn resources(
    hub: &kube::Client,
    charts: &ChartSource,
    bd: &BundleDeployment,
    options: &BundleDeploymentOptions,
) -> Result<Vec<BundleResource>> {
    let access = bd.spec.helm_chart_options.clone().unwrap_or_default();
    let helm = options.helm.clone().unwrap_or_default();
    let failed = |chart: &str, message: String| Error::ChartDownload {
        chart: chart.to_string(),
        message,
    };
    let Some(chart) = ChartRef::without_bundle(&helm) else {
        return Err(failed("", "the options name no chart".to_string()));
    };
    let described = chart.describe();
    let mut auth = Auth::default();
    if !access.secret_name.is_empty() {
        let namespace = bd.metadata.namespace.clone().unwrap_or_default();
        let secret = Api::<Secret>::namespaced(hub.clone(), &namespace)
            .get_opt(&access.secret_name)
            .await
            .map_err(|err| {
                Error::kube(
                    format!(
                        "reading the chart access secret {namespace}/{}",
                        access.secret_name
                    ),
                    err,
                )
            })?
            .ok_or_else(|| {
                failed(
                    &described,
                    format!(
                        "the access secret {namespace}/{} does not exist (yet)",
                        access.secret_name
                    ),
                )
            })?;
        let data: BTreeMap<String, Vec<u8>> = secret
            .data
            .unwrap_or_default()
            .into_iter()
            .map(|(key, value)| (key, value.0))
            .collect();
        auth = Auth::from_secret(&data).map_err(|err| failed(&described, err.to_string()))?;
    }
    if access.insecure_skip_tls_verify {
        auth.insecure_skip_verify = true;
    }
    if auth.ca_bundle.is_empty()
        && let Some(ca) = &access.ca_bundle
    {
        auth.ca_bundle = ca.0.clone();
    }
    let files = charts
        .fetch_chart(&chart, &auth)
        .await
        .map_err(|err| failed(&described, err.to_string()))?;
    let prefix = chart_prefix(&helm);
    let mut files: Vec<BundleFile> = files
        .into_iter()
        .map(|(name, bytes)| BundleFile {
            name: format!("{prefix}/{name}"),
            bytes,
        })
        .collect();
    files.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(encode(&files, false))
}
