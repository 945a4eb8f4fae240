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

use crate::error::{ChartDownloadProblem, Error, Result};

/// The resources to render for `bd` with `options`: its chart's files.
pub async fn resources(
    hub: &kube::Client,
    charts: &ChartSource,
    bd: &BundleDeployment,
    options: &BundleDeploymentOptions,
) -> Result<Vec<BundleResource>> {
    let access = bd.spec.helm_chart_options.clone().unwrap_or_default();
    let helm = options.helm.clone().unwrap_or_default();
    let failed = |chart: &str, problem: ChartDownloadProblem| Error::ChartDownload {
        chart: chart.to_string(),
        problem,
    };
    let Some(chart) = ChartRef::without_bundle(&helm) else {
        return Err(failed("", ChartDownloadProblem::NoChart));
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
                    ChartDownloadProblem::SecretMissing {
                        namespace: namespace.clone(),
                        name: access.secret_name.clone(),
                    },
                )
            })?;
        let data: BTreeMap<String, Vec<u8>> = secret
            .data
            .unwrap_or_default()
            .into_iter()
            .map(|(key, value)| (key, value.0))
            .collect();
        auth = Auth::from_secret(&data).map_err(|err| failed(&described, err.into()))?;
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
        .map_err(|err| failed(&described, err.into()))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What went wrong is a kind the caller can match, not only text.
    #[test]
    fn a_missing_chart_and_a_missing_access_secret_are_told_apart() {
        // The chart source owns a runtime; it outlives the test's own.
        let charts = ChartSource::new();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let hub = fleet_testing::TestCluster::empty();
            let bd: BundleDeployment = serde_json::from_value(json!({
                "metadata": {"name": "b", "namespace": "ns"},
                "spec": {"helmChartOptions": {"helmOpSecretName": "access"}},
            }))
            .unwrap();
            let err = resources(&hub.client, &charts, &bd, &Default::default())
                .await
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::ChartDownload {
                        problem: ChartDownloadProblem::NoChart,
                        ..
                    }
                ),
                "{err:?}"
            );
            let options: BundleDeploymentOptions = serde_json::from_value(json!({
                "helm": {"repo": "https://charts.example.com", "chart": "app", "version": "1.0.0"},
            }))
            .unwrap();
            let err = resources(&hub.client, &charts, &bd, &options)
                .await
                .unwrap_err();
            let Error::ChartDownload {
                problem: ChartDownloadProblem::SecretMissing { namespace, name },
                ..
            } = &err
            else {
                panic!("{err:?}");
            };
            assert_eq!((namespace.as_str(), name.as_str()), ("ns", "access"));
            assert!(
                err.to_string()
                    .ends_with("the access secret ns/access does not exist (yet)"),
                "{err}"
            );
        });
        drop(runtime);
    }
}
