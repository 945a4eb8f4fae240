//! What every reconcile shares: the client, the index, the git cache, the reconcile triggers, metrics and
//! the controller's settings.

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fleet_git::GitCache;
use kube::Client;

use crate::index::{BundleKey, FleetIndex};
use crate::metrics::Metrics;
use crate::sync::Memo;
use crate::triggers::Triggers;

/// The field manager of every write the controller makes (server-side apply).
pub const FIELD_MANAGER: &str = "fleet-controller";

/// Settings of one controller process.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where bare git repositories are cached.
    pub git_cache_dir: PathBuf,
    /// Polling interval of GitRepos that set none (Fleet: 15 s).
    pub default_polling_interval: Duration,
    /// Namespace of the controller (webhook secret, lease).
    pub system_namespace: String,
    /// The OpenSSH client run for `ssh://` and `git@host:path` remotes (default `ssh`, found on `PATH`).
    pub ssh_program: OsString,
    /// Accept any ssh host key (Fleet's `insecureSkipHostKeyChecks`); by default a host must match the
    /// `known_hosts` of the GitRepo's secret or, without one, of the `known-hosts` ConfigMap.
    pub insecure_skip_host_key_checks: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            git_cache_dir: std::env::temp_dir().join("fleet-git-cache"),
            default_polling_interval: Duration::from_secs(15),
            system_namespace: "cattle-fleet-system".to_string(),
            ssh_program: OsString::from("ssh"),
            insecure_skip_host_key_checks: false,
        }
    }
}

/// Shared by all reconciles.
pub struct Context {
    pub client: Client,
    pub index: FleetIndex,
    pub git: Arc<GitCache>,
    pub triggers: Triggers,
    pub metrics: Arc<Metrics>,
    pub settings: Settings,
    /// Content objects known to exist (so a reconcile does not re-create them).
    pub contents: Mutex<HashSet<String>>,
    /// The manifest ID each Bundle currently deploys (Content GC keeps these).
    pub manifests: Mutex<BTreeMap<BundleKey, String>>,
    /// GitRepos (namespace/name) a webhook asked to fetch now.
    pub webhook_requests: Mutex<HashSet<String>>,
    /// The display state of each Bundle (the `bundles` metric by state).
    pub bundle_states: Mutex<BTreeMap<BundleKey, String>>,
    /// Set once shutdown begins: work that cannot be cancelled (a git fetch) is abandoned.
    pub stopping: tokio::sync::watch::Sender<bool>,
    /// Kubernetes Events on GitRepos and Bundles.
    pub events: crate::events::Events,
    /// Each placed Bundle's latest decisions, for its GitRepo's status.
    pub placement_decisions: crate::placement::decisions::Decisions,
    /// Heartbeat timeout and other membership limits; set it before the controller
    /// starts (in `run`'s `started` callback), the defaults apply otherwise ([`crate::placement::settings`]).
    pub placement_settings: std::sync::OnceLock<crate::placement::limits::PlacementSettings>,
    /// The GitRepoRestriction-checked access each GitRepo was last read with (its fingerprint, by
    /// `namespace/name`; [`crate::gitrepo::restrict`]).
    pub gitrepo_access: Memo,
    /// Each Bundle's targeting, kept while nothing it reads changes.
    pub targeting: crate::bundle::cache::TargetingCache,
    /// Values Secrets written ahead of their Bundle.
    pub values_ahead: crate::bundle::cache::WrittenAhead,
    /// The hash of the agent objects last applied to each imported Cluster's downstream cluster, by the
    /// Cluster's UID ([`crate::cluster::import`]).
    pub agent_imports: Memo,
    /// Chart downloads for GitRepos' bundles, cached by digest across bundles and GitRepos.
    pub charts: Arc<fleet_chart_source::ChartSource>,
    /// The HelmOp reconciler's memory (resolved versions, Secret copies).
    pub helmops: crate::helmop::state::State,
    /// Consecutive failures per object, for the shared error policy ([`crate::retry`]).
    pub retries: crate::retry::backoff::Backoff,
}

impl Context {
    pub fn new(
        client: Client,
        index: FleetIndex,
        triggers: Triggers,
        metrics: Arc<Metrics>,
        settings: Settings,
    ) -> Self {
        Context {
            events: crate::events::Events::new(client.clone()),
            client,
            index,
            git: Arc::new(
                GitCache::new(settings.git_cache_dir.clone())
                    .with_ssh_program(settings.ssh_program.clone()),
            ),
            triggers,
            metrics,
            settings,
            contents: Mutex::default(),
            manifests: Mutex::default(),
            webhook_requests: Mutex::default(),
            bundle_states: Mutex::default(),
            stopping: tokio::sync::watch::Sender::new(false),
            placement_decisions: Default::default(),
            placement_settings: Default::default(),
            gitrepo_access: Default::default(),
            targeting: Default::default(),
            values_ahead: Default::default(),
            agent_imports: Default::default(),
            charts: Arc::new(fleet_chart_source::ChartSource::new()),
            helmops: Default::default(),
            retries: Default::default(),
        }
    }
}

impl Context {
    /// Whether shutdown has begun.
    pub fn is_stopping(&self) -> bool {
        *self.stopping.borrow()
    }

    /// Resolves once shutdown begins.
    pub async fn stopped(&self) {
        let mut receiver = self.stopping.subscribe();
        // The sender lives in `self`, so waiting cannot fail while we wait.
        let _ = receiver.wait_for(|stopping| *stopping).await;
    }
}

pub use crate::sync::lock;
