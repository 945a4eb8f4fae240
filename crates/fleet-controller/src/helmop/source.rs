//! Where a HelmOp's chart comes from and how it is reached: the chart reference of its `helm` options,
//! the credentials of its `helmSecretName` Secret (sent to the chart source whatever its URL, as Fleet's
//! HelmOp does: there is no `helmRepoURLRegex` on a HelmOp) with `insecureSkipTLSVerify`, whether it polls
//! ([`polling_interval`], Fleet's `usesPolling`), and the resolution of its version constraint to a
//! concrete version through `fleet-chart-source`.

use std::time::Duration;

use fleet_api::HelmOp;
use fleet_bundle::remote::ChartRef;
use fleet_chart_source::Auth;
use kube::ResourceExt;

use crate::context::Context;
use crate::error::Result;
pub use crate::error::SourceProblem;

/// The chart `helmop` names (validated by [`super::bundle::validate`] first).
pub fn chart_ref(helmop: &HelmOp) -> Option<ChartRef> {
    let helm = helmop.spec.bundle.options.helm.as_ref()?;
    ChartRef::without_bundle(helm)
}

/// How often `helmop` polls for new chart versions, as Fleet's `usesPolling` decides: only with a non-zero
/// `pollingInterval` (there is no default: unset means no polling, as Fleet's HelmOps documentation
/// says), not for a chart URL (no index or tags to look at), and only when `version` is a constraint, not
/// a strict version (`1.2.3`, which can never resolve to another).
pub fn polling_interval(helmop: &HelmOp) -> Option<Duration> {
    let interval = helmop
        .spec
        .polling_interval
        .as_deref()
        .and_then(crate::gitrepo::poll::parse_go_duration)
        .filter(|d| !d.is_zero())?;
    let helm = helmop.spec.bundle.options.helm.as_ref()?;
    if helm.chart.to_ascii_lowercase().ends_with(".tgz") || is_strict_version(&helm.version) {
        return None;
    }
    Some(interval)
}

/// Masterminds' `StrictNewVersion`: `MAJOR.MINOR.PATCH` with optional `-prerelease` and `+build`, no `v`.
pub fn is_strict_version(text: &str) -> bool {
    let core = text.split(['-', '+']).next().unwrap_or_default();
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && fleet_bundle::remote::version::parse_version(text).is_some()
}

/// The settings requests to the chart source use.
pub async fn auth(
    ctx: &Context,
    helmop: &HelmOp,
) -> Result<std::result::Result<Auth, SourceProblem>> {
    let namespace = helmop.namespace().unwrap_or_default();
    let mut auth = Auth::default();
    let name = &helmop.spec.helm_secret_name;
    if !name.is_empty() {
        let Some(data) = crate::secrets::read_data(&ctx.client, &namespace, name).await? else {
            return Ok(Err(SourceProblem::SecretMissing {
                namespace,
                name: name.clone(),
            }));
        };
        auth = match Auth::from_secret(&data) {
            Ok(auth) => auth,
            Err(err) => {
                return Ok(Err(SourceProblem::SecretInvalid {
                    namespace,
                    name: name.clone(),
                    message: err.to_string(),
                }));
            }
        };
    }
    if helmop.spec.insecure_skip_tls_verify {
        auth.insecure_skip_verify = true;
    }
    Ok(Ok(auth))
}

/// The concrete version `helmop`'s constraint resolves to now (empty for a chart URL).
pub async fn resolve(
    ctx: &Context,
    helmop: &HelmOp,
) -> Result<std::result::Result<String, SourceProblem>> {
    let auth = match auth(ctx, helmop).await? {
        Ok(auth) => auth,
        Err(problem) => return Ok(Err(problem)),
    };
    let Some(chart) = chart_ref(helmop) else {
        return Ok(Err(SourceProblem::Resolve(
            "the HelmOp names no chart".to_string(),
        )));
    };
    Ok(ctx
        .charts
        .resolve_version(&chart, &auth)
        .await
        .map_err(|err| SourceProblem::Resolve(err.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn helmop(helm: serde_json::Value, polling: Option<&str>) -> HelmOp {
        serde_json::from_value(json!({
            "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "HelmOp",
            "metadata": {"name": "a", "namespace": "n"},
            "spec": {"helm": helm, "pollingInterval": polling},
        }))
        .unwrap()
    }

    #[test]
    fn polling_follows_fleets_uses_polling() {
        let repo = json!({"repo": "https://r", "chart": "c", "version": "~1.2"});
        assert_eq!(
            polling_interval(&helmop(repo.clone(), Some("30s"))),
            Some(Duration::from_secs(30))
        );
        assert_eq!(polling_interval(&helmop(repo.clone(), None)), None);
        assert_eq!(polling_interval(&helmop(repo, Some("0"))), None);
        let strict = json!({"repo": "https://r", "chart": "c", "version": "1.2.3"});
        assert_eq!(polling_interval(&helmop(strict, Some("30s"))), None);
        let latest = json!({"repo": "oci://reg/c"});
        assert!(polling_interval(&helmop(latest, Some("1m"))).is_some());
        let url = json!({"chart": "https://r/c-1.0.0.tgz"});
        assert_eq!(polling_interval(&helmop(url, Some("1m"))), None);
    }

    #[test]
    fn strict_versions_are_masterminds_strict() {
        for strict in ["1.2.3", "0.0.1-rc.1", "1.2.3+build.5", "104.1.0+up57.0.3"] {
            assert!(is_strict_version(strict), "{strict}");
        }
        for loose in [
            "",
            "*",
            "1.2",
            "v1.2.3",
            "~1.2.3",
            ">=1.0.0",
            "1.2.x",
            "1.2.3 || 2.0.0",
        ] {
            assert!(!is_strict_version(loose), "{loose}");
        }
    }
}
