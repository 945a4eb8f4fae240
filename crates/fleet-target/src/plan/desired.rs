//! The BundleDeployment planning wants for one target, compared with the one that exists so that an
//! unchanged BundleDeployment is not written again.

use std::collections::BTreeMap;

use fleet_api::{BundleDeploymentOptions, BundleDeploymentSpec, BundleRef, HelmOpOptions};

use crate::model::ClusterKey;

/// `labels` hold every label of `bundle_labels` (the Bundle's BundleDeployment labels without a cluster),
/// with `cluster`'s namespace and name, as [`crate::labels::deployment_labels`] would build them.
pub fn labels_match<'a>(
    labels: impl IntoIterator<Item = (&'a String, &'a String)>,
    bundle_labels: &BTreeMap<String, String>,
    cluster: &ClusterKey,
) -> bool {
    // Both are sorted: one walk through `labels` finds every key.
    let mut held = labels.into_iter();
    bundle_labels.iter().all(|(key, value)| {
        let wanted = match key.as_str() {
            crate::labels::CLUSTER_NAMESPACE => cluster.namespace.as_str(),
            crate::labels::CLUSTER => cluster.name.as_str(),
            _ => value.as_str(),
        };
        held.find(|(k, _)| *k >= key)
            .is_some_and(|(k, v)| k == key && v == wanted)
    })
}

/// The spec planning wants for one BundleDeployment, borrowed, so that an existing one is compared
/// without building a new spec.
pub struct DesiredSpec<'a> {
    pub paused: bool,
    pub staged_options: &'a BundleDeploymentOptions,
    pub staged_deployment_id: &'a str,
    pub options: &'a BundleDeploymentOptions,
    pub deployment_id: &'a str,
    pub depends_on: &'a [BundleRef],
    /// A HelmOp's Bundle: how the agent reaches the chart it downloads (Fleet copies the Bundle's
    /// `helmOpOptions` into each BundleDeployment's `helmChartOptions`).
    pub helm_chart_options: Option<&'a HelmOpOptions>,
}

impl DesiredSpec<'_> {
    /// `spec` is exactly what [`DesiredSpec::to_spec`] builds (every field is listed, so a new field
    /// cannot be forgotten). A spec whose Helm values are in its options Secret (`valuesHash`; values the
    /// index does not know, as after a restart) matches by its deploymentIDs, which hash the full options,
    /// values included, so a restarted controller does not rewrite it.
    pub fn matches(&self, spec: &BundleDeploymentSpec) -> bool {
        let BundleDeploymentSpec {
            paused,
            staged_options,
            staged_deployment_id,
            options,
            deployment_id,
            depends_on,
            correct_drift,
            oci_contents,
            helm_chart_options,
            values_hash,
            downstream_resources_generation,
            off_schedule,
            waiting_for_values,
        } = spec;
        let values_moved = !values_hash.is_empty();
        *paused == self.paused
            && deployment_id == self.deployment_id
            && staged_deployment_id == self.staged_deployment_id
            && (values_moved || (staged_options == self.staged_options && options == self.options))
            && depends_on.as_slice() == self.depends_on
            && *correct_drift == self.staged_options.correct_drift
            && !oci_contents
            && helm_chart_options.as_ref() == self.helm_chart_options
            && *downstream_resources_generation == 0
            && !off_schedule
            && !waiting_for_values
    }

    pub fn to_spec(&self) -> BundleDeploymentSpec {
        BundleDeploymentSpec {
            paused: self.paused,
            correct_drift: self.staged_options.correct_drift.clone(),
            staged_options: self.staged_options.clone(),
            staged_deployment_id: self.staged_deployment_id.to_string(),
            options: self.options.clone(),
            deployment_id: self.deployment_id.to_string(),
            depends_on: self.depends_on.to_vec(),
            helm_chart_options: self.helm_chart_options.cloned(),
            ..BundleDeploymentSpec::default()
        }
    }
}
