//! The downstream agent: it watches the BundleDeployments in its own cluster namespace on the hub, renders
//! each with the same code as `fleet test` ([`fleet_render`]), applies the objects to the downstream
//! cluster with server-side apply, keeps an inventory per BundleDeployment for pruning and uninstall, and
//! writes readiness and drift back into the BundleDeployment's status.
//!
//! Data flow: [`agent`] (hub watch, queue) → [`depends_on`] → [`fetch`] (Content, options; a HelmOp's chart
//! is downloaded by [`remote_chart`] instead), [`values`]
//! (`helm.valuesFrom`) and [`copies`]
//! (`downstreamResources`) → [`render`] → [`restriction`] → [`hooks`] and [`release`] ([`apply`]: ordering,
//! namespaces, SSA; [`inventory`] / [`prune`]) → [`monitor`] ([`readiness`], [`drift`]) → [`status`].
//! [`watch`] re-checks a BundleDeployment when an object it applied changes; [`properties`] reports the
//! cluster's properties with the check-in ([`heartbeat`]); [`metrics`] counts requests and results and
//! serves the probes. [`scope`] names everything that must differ
//! between two agents on one cluster.

pub mod agent;
pub mod apply;
pub mod copies;
pub mod depends_on;
pub mod downstream;
pub mod drift;
pub mod error;
pub mod fetch;
pub mod heartbeat;
pub mod hooks;
pub mod inventory;
pub mod metrics;
pub mod monitor;
pub mod order;
pub mod properties;
pub mod prune;
pub mod readiness;
pub mod registration;
pub mod release;
pub mod remote_chart;
pub mod render;
pub mod restriction;
pub mod scope;
pub mod status;
pub mod tls;
pub mod values;
pub mod watch;

pub use agent::{Agent, AgentConfig};
pub use downstream::Downstream;
pub use error::Error;
pub use scope::Scope;
