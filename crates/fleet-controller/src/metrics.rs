//! Prometheus metrics (prometheus-client), served on `/metrics`: reconciles, errors and durations per
//! controller, git fetch time and bytes, the reconcile queue (triggers waiting), and bundles and
//! BundleDeployments by state.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ControllerLabel {
    pub controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ErrorLabels {
    pub controller: String,
    pub kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StateLabel {
    pub state: String,
}

/// Every metric the controller exports.
pub struct Metrics {
    pub registry: Registry,
    pub reconciles: Family<ControllerLabel, Counter>,
    pub errors: Family<ErrorLabels, Counter>,
    pub durations: Family<ControllerLabel, Histogram>,
    pub git_fetch_seconds: Histogram,
    pub git_fetch_bytes: Counter,
    pub queue_depth: Family<ControllerLabel, Gauge>,
    pub bundles_by_state: Family<StateLabel, Gauge>,
    pub deployments_by_state: Family<StateLabel, Gauge>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("fleet_controller");
        let reconciles = Family::<ControllerLabel, Counter>::default();
        let errors = Family::<ErrorLabels, Counter>::default();
        let durations = Family::<ControllerLabel, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.001, 2.0, 16))
        });
        let git_fetch_seconds = Histogram::new(exponential_buckets(0.01, 2.0, 14));
        let git_fetch_bytes = Counter::default();
        let queue_depth = Family::<ControllerLabel, Gauge>::default();
        let bundles_by_state = Family::<StateLabel, Gauge>::default();
        let deployments_by_state = Family::<StateLabel, Gauge>::default();
        registry.register("reconciles", "Reconciles run", reconciles.clone());
        registry.register("reconcile_errors", "Reconciles that failed", errors.clone());
        registry.register(
            "reconcile_duration_seconds",
            "Reconcile duration",
            durations.clone(),
        );
        registry.register(
            "git_fetch_duration_seconds",
            "Git fetch duration",
            git_fetch_seconds.clone(),
        );
        registry.register(
            "git_fetch_bytes",
            "Bytes of git packs fetched",
            git_fetch_bytes.clone(),
        );
        registry.register(
            "queue_depth",
            "Reconcile requests waiting",
            queue_depth.clone(),
        );
        registry.register(
            "bundles",
            "Bundles by display state",
            bundles_by_state.clone(),
        );
        registry.register(
            "bundle_deployments",
            "BundleDeployments by state",
            deployments_by_state.clone(),
        );
        Metrics {
            registry,
            reconciles,
            errors,
            durations,
            git_fetch_seconds,
            git_fetch_bytes,
            queue_depth,
            bundles_by_state,
            deployments_by_state,
        }
    }

    /// Records one finished reconcile.
    pub fn reconciled(&self, controller: &str, took: Duration, error: Option<&str>) {
        let label = ControllerLabel {
            controller: controller.to_string(),
        };
        self.reconciles.get_or_create(&label).inc();
        self.durations
            .get_or_create(&label)
            .observe(took.as_secs_f64());
        if let Some(kind) = error {
            self.errors
                .get_or_create(&ErrorLabels {
                    controller: controller.to_string(),
                    kind: kind.to_string(),
                })
                .inc();
        }
    }

    /// Sets the by-state gauges from counts (states missing from `counts` go to zero).
    pub fn set_by_state(
        family: &Family<StateLabel, Gauge>,
        counts: impl IntoIterator<Item = (String, i64)>,
    ) {
        let mut counts: std::collections::BTreeMap<String, i64> = counts.into_iter().collect();
        for state in fleet_api::BundleState::KNOWN {
            counts.entry(state.as_str().to_string()).or_insert(0);
        }
        for (state, count) in counts {
            family.get_or_create(&StateLabel { state }).set(count);
        }
    }

    /// The text exposition format.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}
