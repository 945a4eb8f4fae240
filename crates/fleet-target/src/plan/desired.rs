//! The BundleDeployment planning wants for one target: compared with the one that exists so that an
//! unchanged BundleDeployment is not written again, and built only when it is written ([`PlannedWrite`],
//! [`WriteTemplate::build`]), one at a time, so that a plan of a thousand writes never holds a thousand
//! objects.

use std::collections::BTreeMap;
use std::sync::Arc;

use fleet_api::{
    Bundle, BundleDeployment, BundleDeploymentOptions, BundleDeploymentSpec, BundleRef,
    HelmOpOptions,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::labels::{self, deployment_labels};
use crate::model::ClusterKey;
use crate::selector::Labels;

use super::cache::Targeted;
use super::existing::ExistingDeployment;

/// One BundleDeployment to create or update (server-side apply), as the plan decided it; built by
/// [`WriteTemplate::build`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedWrite {
    /// Its target: an index into the plan's targets.
    pub target: usize,
    /// Its cluster's namespace, where it is written.
    pub namespace: String,
    /// It keeps its deployed options while its staged options change, and its deployed Helm values are
    /// in its options Secret, not known here (it was written before this process started): the caller
    /// reads them back into the built object before writing it.
    pub deployed_values_unknown: bool,
    pub(super) options_set: usize,
    pub(super) staged_deployment_id: String,
    pub(super) deployment_id: String,
    pub(super) paused: bool,
    pub(super) annotations: BTreeMap<String, String>,
}

/// What every BundleDeployment of one plan shares: the Bundle's name, the labels without the cluster's,
/// the option sets, and the spec fields copied from the Bundle.
pub struct WriteTemplate {
    name: String,
    labels: Labels,
    targeted: Arc<Targeted>,
    depends_on: Vec<BundleRef>,
    helm_chart_options: Option<HelmOpOptions>,
}

impl std::fmt::Debug for WriteTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteTemplate")
            .field("name", &self.name)
            .field("labels", &self.labels)
            .finish_non_exhaustive()
    }
}

impl WriteTemplate {
    pub(super) fn new(bundle: &Bundle, targeted: Arc<Targeted>) -> Self {
        static NO_LABELS: Labels = BTreeMap::new();
        let name = bundle.metadata.name.clone().unwrap_or_default();
        let labels = deployment_labels(
            bundle.metadata.namespace.as_deref().unwrap_or_default(),
            &name,
            bundle.metadata.labels.as_ref().unwrap_or(&NO_LABELS),
            &ClusterKey::new("", ""),
            &targeted.manifest_id,
        );
        WriteTemplate {
            name,
            labels,
            targeted,
            depends_on: bundle.spec.depends_on.clone(),
            helm_chart_options: bundle.spec.helm_op_options.clone(),
        }
    }

    /// The spec one target's BundleDeployment should have: option set `set` staged at `staged_id`,
    /// deployed at `deployed_id` (with the staged options when both are the same, else with the options
    /// `existing` has).
    pub(super) fn desired<'a>(
        &'a self,
        set: usize,
        (staged_id, deployed_id): (&'a str, &'a str),
        paused: bool,
        existing: Option<&'a BundleDeploymentSpec>,
    ) -> DesiredSpec<'a> {
        static NO_OPTIONS: std::sync::LazyLock<BundleDeploymentOptions> =
            std::sync::LazyLock::new(BundleDeploymentOptions::default);
        let staged = &self.targeted.options[set].options;
        DesiredSpec {
            paused,
            staged_options: staged,
            staged_deployment_id: staged_id,
            options: if deployed_id == staged_id {
                staged
            } else {
                existing.map_or(&*NO_OPTIONS, |spec| &spec.options)
            },
            deployment_id: deployed_id,
            depends_on: &self.depends_on,
            helm_chart_options: self.helm_chart_options.as_ref(),
        }
    }

    /// Whether `existing`, the BundleDeployment of `cluster`, is what planning wants: the `desired` spec,
    /// in the cluster's `namespace`, with the Bundle's labels and at least `annotations`.
    pub(super) fn unchanged<D: ExistingDeployment>(
        &self,
        existing: &D,
        cluster: &ClusterKey,
        desired: &DesiredSpec<'_>,
        namespace: &str,
        annotations: &BTreeMap<String, String>,
    ) -> bool {
        desired.matches(existing.spec())
            && existing.namespace() == namespace
            && labels_match(existing.labels(), &self.labels, cluster)
            && annotations
                .iter()
                .all(|(k, v)| existing.annotations().get(k) == Some(v))
    }

    /// The BundleDeployment `write` asks for on `cluster`, whose current one is `existing`.
    pub(super) fn build<D: ExistingDeployment>(
        &self,
        write: &PlannedWrite,
        cluster: &ClusterKey,
        existing: Option<&D>,
    ) -> BundleDeployment {
        let spec = self
            .desired(
                write.options_set,
                (&write.staged_deployment_id, &write.deployment_id),
                write.paused,
                existing.map(ExistingDeployment::spec),
            )
            .to_spec();
        let mut labels = self.labels.clone();
        labels.insert(
            labels::CLUSTER_NAMESPACE.to_string(),
            cluster.namespace.clone(),
        );
        labels.insert(labels::CLUSTER.to_string(), cluster.name.clone());
        let mut desired = BundleDeployment::new(&self.name, spec);
        desired.metadata = ObjectMeta {
            name: Some(self.name.clone()),
            namespace: Some(write.namespace.clone()),
            labels: Some(labels),
            annotations: (!write.annotations.is_empty()).then(|| write.annotations.clone()),
            ..ObjectMeta::default()
        };
        desired
    }
}

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
