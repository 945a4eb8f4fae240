//! The agent loop: one watch on the BundleDeployments of the agent's cluster namespace on the hub (it reads
//! nothing else upstream but their Content and options Secrets), a queue of BundleDeployments to reconcile,
//! watches on the applied kinds downstream ([`crate::watch`]) that re-check only the BundleDeployment whose
//! object changed (readiness and drift), and a slow resync tick that re-observes every BundleDeployment as a
//! safety net. Hub errors are retried with
//! backoff while the downstream cluster keeps its last applied state; after a reconnect only
//! BundleDeployments whose spec changed are deployed again. Errors about one BundleDeployment (content,
//! rendering, downstream API) become its status, never a crash.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use fleet_api::{BundleDeployment, BundleDeploymentOptions, BundleDeploymentStatus, CorrectDrift};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use tokio::sync::mpsc;
use tracing::{info, warn};

use crate::apply::{ensure_namespaces, release_namespace};
use crate::copies;
use crate::depends_on;
use crate::downstream::Downstream;
use crate::error::{Error, Result};
use crate::fetch;
use crate::heartbeat::{self, ClusterRef};
use crate::hooks;
use crate::inventory::{self, Inventory};
use crate::monitor::{self, ListCache, Report};
use crate::properties;
use crate::prune;
use crate::release::{Target, apply_and_prune, correct, failure_message};
use crate::remote_chart;
use crate::render::{self, Desired};
use crate::restriction;
use crate::scope::Scope;
use crate::status::{self, Observation};
use crate::values;
use crate::watch::{Change, Watches};

/// How an agent runs.
#[derive(Clone)]
pub struct AgentConfig {
    /// A client for the hub, with the agent's (cluster-namespace-scoped) credentials.
    pub hub: kube::Client,
    /// The cluster namespace on the hub holding this cluster's BundleDeployments.
    pub cluster_namespace: String,
    /// Who this agent is on the downstream cluster.
    pub scope: Scope,
    /// How often every deployed BundleDeployment is observed again regardless of watch events (a safety
    /// net; readiness and drift changes arrive through watches).
    pub monitor_interval: Duration,
    /// How soon a BundleDeployment whose reconcile hit a hub error is tried again.
    pub retry_interval: Duration,
    /// The Cluster to check in on, when known (from registration).
    pub cluster: Option<ClusterRef>,
    /// How often the agent checks in (Fleet's `CHECKIN_INTERVAL`, 15 minutes) and collects the cluster's
    /// properties (written to the Cluster's status only when they changed).
    pub checkin_interval: Duration,
}

impl AgentConfig {
    /// A config with a 30-minute resync, a 5s retry and Fleet's 15-minute check-in.
    pub fn new(hub: kube::Client, cluster_namespace: impl Into<String>, scope: Scope) -> Self {
        AgentConfig {
            hub,
            cluster_namespace: cluster_namespace.into(),
            scope,
            monitor_interval: Duration::from_secs(30 * 60),
            retry_interval: Duration::from_secs(5),
            cluster: None,
            checkin_interval: Duration::from_secs(15 * 60),
        }
    }
}

/// What was rendered for one deploymentID, kept between reconciles.
struct Rendered {
    deployment_id: String,
    options: BundleDeploymentOptions,
    /// `downstreamResourcesGeneration` the copies were read at.
    copies_generation: i64,
    objects: Vec<Desired>,
    /// Helm install and upgrade hooks (not part of the release's objects).
    hooks: Vec<Desired>,
    /// Helm hooks the agent does not run (reported in the `Installed` condition).
    hooks_not_run: Vec<String>,
}

/// What the agent keeps between reconciles about one BundleDeployment of its cluster namespace.
struct Tracked {
    /// As last seen on the hub, or as last written by the agent.
    bd: BundleDeployment,
    /// What was rendered for its current deploymentID.
    rendered: Option<Rendered>,
    /// Its inventory as this agent last wrote it (the agent is the only writer), so monitoring needs no reads.
    inventory: Option<Inventory>,
    /// The Helm hooks of its current deployment.
    hook_run: Option<hooks::Run>,
    /// Waiting for a dependency: reconciled again when another BundleDeployment's status changes.
    waiting_for_dependency: bool,
    /// Its last reconcile failed: reconciled again on the retry tick.
    failed: bool,
    /// A hook of it is still running: reconciled again on every retry tick, so that a timeout is noticed.
    hook_running: bool,
}

impl Tracked {
    fn new(bd: BundleDeployment) -> Self {
        Tracked {
            bd,
            rendered: None,
            inventory: None,
            hook_run: None,
            waiting_for_dependency: false,
            failed: false,
            hook_running: false,
        }
    }
}

/// A BundleDeployment being reconciled is tracked: reconciles start from the tracked ones and nothing untracks
/// one while it is reconciled.
const TRACKED: &str = "a BundleDeployment being reconciled is tracked";

/// One agent.
pub struct Agent {
    config: AgentConfig,
    downstream: Downstream,
    inventories: inventory::Store,
    /// The BundleDeployments of the cluster namespace, by name.
    tracked: BTreeMap<String, Tracked>,
    /// An uninstall failed: the inventories of BundleDeployments that are gone are collected again on the retry
    /// tick.
    uninstall_pending: bool,
    /// Downstream lists shared by the reconciles of one pass.
    lists: ListCache,
    /// The cluster properties last written to the hub.
    reported: Option<properties::Observed>,
    /// Watches on the applied kinds downstream.
    watches: Watches,
    /// Their changes (taken by [`Agent::run`]).
    changes: Option<mpsc::UnboundedReceiver<Change>>,
    /// The BundleDeployment of each object-set ID (to route watch events).
    owners: BTreeMap<String, String>,
    /// Downloads of HelmOp charts, cached by digest.
    charts: std::sync::Arc<fleet_chart_source::ChartSource>,
}

impl Agent {
    pub fn new(config: AgentConfig, downstream: Downstream) -> Self {
        let inventories = inventory::Store::new(downstream.client().clone(), config.scope.clone());
        let (watches, changes) = Watches::new(downstream.clone(), &config.scope);
        Agent {
            config,
            downstream,
            inventories,
            tracked: BTreeMap::new(),
            uninstall_pending: false,
            lists: ListCache::default(),
            reported: None,
            watches,
            changes: Some(changes),
            owners: BTreeMap::new(),
            charts: std::sync::Arc::new(fleet_chart_source::ChartSource::new()),
        }
    }

    /// Runs until the future is dropped.
    pub async fn run(mut self) -> Result<()> {
        self.ensure_agent_namespace().await;
        let api: Api<BundleDeployment> =
            Api::namespaced(self.config.hub.clone(), &self.config.cluster_namespace);
        let mut events = watcher::watcher(api, watcher::Config::default())
            .default_backoff()
            .boxed();
        let mut monitor = tokio::time::interval(self.config.monitor_interval);
        monitor.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut retry = tokio::time::interval(self.config.retry_interval);
        let mut checkin = tokio::time::interval(self.config.checkin_interval);
        let mut changes = self.changes.take().expect("run is called once");
        let mut listing: Option<BTreeSet<String>> = None;
        let mut dirty = BTreeSet::new();
        loop {
            tokio::select! {
                event = events.next() => match event {
                    None => return Ok(()),
                    Some(Err(err)) => {
                        if let Some(message) = unauthorized(&err) {
                            warn!(%message, "the hub refuses this agent's credentials; they may have been revoked");
                            return Err(Error::Revoked(message));
                        }
                        warn!(error = %err, "watching BundleDeployments on the hub");
                    }
                    Some(Ok(Event::Init)) => listing = Some(BTreeSet::new()),
                    Some(Ok(Event::InitApply(bd))) => {
                        if let Some(names) = &mut listing {
                            names.insert(bd.metadata.name.clone().unwrap_or_default());
                        }
                        self.upsert(bd, &mut dirty);
                    }
                    Some(Ok(Event::InitDone)) => {
                        let names = listing.take().unwrap_or_default();
                        let gone: Vec<String> =
                            self.tracked.keys().filter(|n| !names.contains(*n)).cloned().collect();
                        for name in gone {
                            let orphan =
                                self.tracked.remove(&name).is_some_and(|t| orphaned(&t.bd));
                            self.uninstall(&name, orphan).await;
                        }
                        self.collect_garbage().await;
                    }
                    Some(Ok(Event::Apply(bd))) => self.upsert(bd, &mut dirty),
                    Some(Ok(Event::Delete(bd))) => {
                        let name = bd.metadata.name.clone().unwrap_or_default();
                        self.tracked.remove(&name);
                        self.uninstall(&name, orphaned(&bd)).await;
                    }
                },
                _ = monitor.tick() => dirty.extend(self.tracked.keys().cloned()),
                Some(change) = changes.recv() => {
                    self.note_change(change, &mut dirty);
                    while let Ok(change) = changes.try_recv() {
                        self.note_change(change, &mut dirty);
                    }
                }
                _ = retry.tick() => {
                    for (name, tracked) in &mut self.tracked {
                        if std::mem::take(&mut tracked.failed) || tracked.hook_running {
                            dirty.insert(name.clone());
                        }
                    }
                    if std::mem::take(&mut self.uninstall_pending) {
                        self.collect_garbage().await;
                    }
                }
                _ = checkin.tick() => self.check_in().await,
            }
            self.lists = ListCache::default();
            for name in std::mem::take(&mut dirty) {
                if let Err(err) = self.reconcile(&name).await {
                    if let Error::Kube {
                        source: kube::Error::Api(status),
                        ..
                    } = &err
                        && status.code == 401
                    {
                        warn!(message = %status.message, "the hub refuses this agent's credentials; they may have been revoked");
                        return Err(Error::Revoked(status.message.clone()));
                    }
                    crate::metrics::global().errors.inc();
                    warn!(bundle_deployment = %name, error = %err, "reconcile failed; retrying");
                    if let Some(tracked) = self.tracked.get_mut(&name) {
                        tracked.failed = true;
                    }
                }
            }
        }
    }

    /// Records a BundleDeployment from the watch; queues it when its spec, labels or generation changed, and
    /// queues the BundleDeployments waiting on dependencies when only a status changed.
    fn upsert(&mut self, bd: BundleDeployment, dirty: &mut BTreeSet<String>) {
        let name = bd.metadata.name.clone().unwrap_or_default();
        let changed = match self.tracked.get(&name).map(|t| &t.bd) {
            None => true,
            Some(old) => {
                old.spec != bd.spec
                    || old.metadata.labels != bd.metadata.labels
                    || old.metadata.generation != bd.metadata.generation
                    || orphaned(old) != orphaned(&bd)
            }
        };
        if changed {
            dirty.insert(name.clone());
        } else {
            dirty.extend(
                self.tracked
                    .iter()
                    .filter(|(_, t)| t.waiting_for_dependency)
                    .map(|(name, _)| name.clone()),
            );
        }
        self.owners
            .insert(self.config.scope.set_id(&name), name.clone());
        match self.tracked.get_mut(&name) {
            Some(tracked) => tracked.bd = bd,
            None => {
                self.tracked.insert(name, Tracked::new(bd));
            }
        }
    }

    /// Queues the BundleDeployment a downstream change belongs to (all of them after a resync).
    fn note_change(&self, change: Change, dirty: &mut BTreeSet<String>) {
        match change {
            Change::Resync => dirty.extend(self.tracked.keys().cloned()),
            Change::Object(set_id) => {
                if let Some(name) = self.owners.get(&set_id)
                    && self.tracked.contains_key(name)
                {
                    dirty.insert(name.clone());
                }
            }
        }
    }

    /// Checks in on the Cluster, and reports its properties when they changed since the last report.
    async fn check_in(&mut self) {
        let Some(cluster) = &self.config.cluster else {
            return;
        };
        if let Err(err) = heartbeat::check_in(
            &self.config.hub,
            cluster,
            &self.config.scope.agent_namespace,
        )
        .await
        {
            crate::metrics::Metrics::result(&crate::metrics::global().check_ins, false);
            warn!(error = %err, "check-in failed");
            return;
        }
        crate::metrics::Metrics::result(&crate::metrics::global().check_ins, true);
        crate::metrics::global().set_ready(true);
        let observed = match properties::observe(self.downstream.client()).await {
            Ok(observed) => observed,
            Err(err) => {
                warn!(error = %err, "collecting cluster properties");
                return;
            }
        };
        if self.reported.as_ref() == Some(&observed) {
            return;
        }
        let now = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::now(),
        );
        match properties::report(&self.config.hub, cluster, &observed, &now).await {
            Ok(()) => self.reported = Some(observed),
            Err(err) => warn!(error = %err, "reporting cluster properties"),
        }
    }

    async fn ensure_agent_namespace(&self) {
        let api: Api<Namespace> = Api::all(self.downstream.client().clone());
        let body = serde_json::json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": self.config.scope.agent_namespace}});
        if let Err(err) = api
            .patch(
                &self.config.scope.agent_namespace,
                &PatchParams::apply(&self.config.scope.field_manager()),
                &Patch::Apply(body),
            )
            .await
        {
            warn!(error = %err, "creating the agent namespace downstream");
        }
    }

    /// Uninstalls BundleDeployments whose inventory outlived them (deleted while the agent was away).
    async fn collect_garbage(&mut self) {
        match self.inventories.list().await {
            Ok(inventories) => {
                for inventory in inventories {
                    if !self.tracked.contains_key(&inventory.bundle_deployment) {
                        self.uninstall(&inventory.bundle_deployment, false).await;
                    }
                }
            }
            Err(err) => {
                warn!(error = %err, "listing inventories");
                self.uninstall_pending = true;
            }
        }
    }

    /// Removes everything a deleted BundleDeployment deployed (as its inventory says); when it was orphaned
    /// (now, or as its inventory recorded), only forgets the inventory and leaves the objects in place. One that
    /// fails is tried again on the retry tick, through the inventories left behind. The callers have already
    /// stopped tracking it.
    async fn uninstall(&mut self, name: &str, orphan: bool) {
        debug_assert!(
            !self.tracked.contains_key(name),
            "{name} is uninstalled while still tracked"
        );
        self.owners.remove(&self.config.scope.set_id(name));
        let inventory = match self.inventories.load(name).await {
            Ok(Some(inventory)) => inventory,
            Ok(None) => return,
            Err(err) => {
                warn!(bundle_deployment = %name, error = %err, "reading the inventory to uninstall");
                self.uninstall_pending = true;
                return;
            }
        };
        if orphan || inventory.orphan {
            match self.inventories.delete(name).await {
                Ok(()) => info!(bundle_deployment = %name, "orphaned: objects left in place"),
                Err(err) => {
                    warn!(bundle_deployment = %name, error = %err, "deleting the inventory");
                    self.uninstall_pending = true;
                }
            }
            return;
        }
        let set_id = self.config.scope.set_id(name);
        let failed = prune::uninstall(&self.downstream, &set_id, &inventory).await;
        crate::metrics::global()
            .prunes
            .inc_by((inventory.objects.len() - failed.len().min(inventory.objects.len())) as u64);
        if failed.is_empty() {
            if let Err(err) = self.inventories.delete(name).await {
                warn!(bundle_deployment = %name, error = %err, "deleting the inventory");
                self.uninstall_pending = true;
            }
            info!(bundle_deployment = %name, "uninstalled");
        } else {
            for (object, reason) in failed {
                warn!(bundle_deployment = %name, %object, %reason, "could not delete");
            }
            self.uninstall_pending = true;
        }
    }

    /// Deploys and observes one BundleDeployment and writes its status. Errors are hub errors.
    async fn reconcile(&mut self, name: &str) -> Result<()> {
        let Some(bd) = self.tracked.get(name).map(|t| t.bd.clone()) else {
            return Ok(());
        };
        let spec = &bd.spec;
        if spec.paused
            || spec.off_schedule
            || spec.waiting_for_values
            || spec.deployment_id.is_empty()
        {
            return Ok(());
        }
        let previous = bd.status.clone().unwrap_or_default();
        let all: Vec<&BundleDeployment> = self.tracked.values().map(|t| &t.bd).collect();
        let dependencies = depends_on::check(&bd, &all);
        self.tracked
            .get_mut(name)
            .expect(TRACKED)
            .waiting_for_dependency = dependencies.is_err();
        if let Err(not_ready) = dependencies {
            let observation =
                Observation::failed(&previous.applied_deployment_id, not_ready.to_string());
            return self.write_status(&bd, &previous, &observation).await;
        }
        let observation = match self.deploy(&bd).await {
            Ok(observation) => observation,
            // Shown as still deploying, and retried (the Secret's write is not watched).
            Err(pending @ Error::OptionsSecretPending { .. }) => {
                let observation =
                    Observation::waiting(&previous.applied_deployment_id, pending.to_string());
                self.write_status(&bd, &previous, &observation).await?;
                return Err(pending);
            }
            // Reported, and retried: the ConfigMap or Secret may be created later, the chart source may come
            // back. Nothing is removed.
            Err(missing @ (Error::ValuesFrom { .. } | Error::ChartDownload { .. })) => {
                let observation =
                    Observation::failed(&previous.applied_deployment_id, missing.to_string());
                self.write_status(&bd, &previous, &observation).await?;
                return Err(missing);
            }
            // The hub's errors go back to the loop (backoff; a 401 means revoked credentials).
            Err(hub @ Error::Kube { .. }) => return Err(hub),
            Err(other) => Observation::failed(&previous.applied_deployment_id, other.to_string()),
        };
        self.write_status(&bd, &previous, &observation).await
    }

    async fn rendered_for(&mut self, bd: &BundleDeployment) -> Result<&Rendered> {
        let name = bd.metadata.name.clone().unwrap_or_default();
        let id = &bd.spec.deployment_id;
        let tracked = self.tracked.get(&name).expect(TRACKED);
        let fresh = tracked.rendered.as_ref().is_some_and(|r| {
            &r.deployment_id == id
                && r.options == bd.spec.options
                && r.copies_generation == bd.spec.downstream_resources_generation
        });
        if !fresh {
            let mut options = fetch::options(&self.config.hub, bd).await?;
            // A HelmOp's BundleDeployment names its chart instead of a Content.
            let resources = if bd.spec.helm_chart_options.is_some() {
                remote_chart::resources(&self.config.hub, &self.charts, bd, &options).await?
            } else {
                fetch::content(&self.config.hub, id).await?
            };
            let values_client = self
                .downstream
                .deploy_client(&self.config.scope.agent_namespace, &options.service_account);
            values::resolve(&values_client, &mut options).await?;
            let placed = render::render(
                &resources,
                &options,
                &self.config.scope,
                &name,
                &self.downstream,
            )
            .await?;
            let mut split = match placed.style {
                fleet_render::Style::Helm { .. } => hooks::split(placed.objects),
                _ => hooks::Split {
                    release: placed.objects,
                    ..Default::default()
                },
            };
            if !options.downstream_resources.is_empty() {
                let copies = copies::read(
                    &self.config.hub,
                    &self.config.cluster_namespace,
                    &options.downstream_resources,
                    &release_namespace(&options),
                )
                .await?;
                let marked = render::mark(copies, &options, &self.config.scope, &name)?;
                split.release.extend(marked);
            }
            self.tracked.get_mut(&name).expect(TRACKED).rendered = Some(Rendered {
                deployment_id: id.clone(),
                options: bd.spec.options.clone(),
                copies_generation: bd.spec.downstream_resources_generation,
                objects: split.release,
                hooks: split.hooks,
                hooks_not_run: split.not_run,
            });
        }
        let tracked = self.tracked.get(&name).expect(TRACKED);
        Ok(tracked
            .rendered
            .as_ref()
            .expect("rendered above when not fresh"))
    }

    async fn deploy(&mut self, bd: &BundleDeployment) -> Result<Observation> {
        let name = bd.metadata.name.clone().unwrap_or_default();
        let previous = bd.status.clone().unwrap_or_default();
        let deployment_id = bd.spec.deployment_id.clone();
        let cached = self.tracked.get(&name).and_then(|t| t.inventory.as_ref());
        let mut inventory = match cached {
            Some(inventory) => inventory.clone(),
            None => self
                .inventories
                .load(&name)
                .await
                .map_err(Error::in_downstream)?
                .unwrap_or_else(|| Inventory {
                    bundle_deployment: name.clone(),
                    ..Default::default()
                }),
        };
        if inventory.orphan != orphaned(bd) {
            inventory.orphan = orphaned(bd);
            self.inventories
                .save(&inventory)
                .await
                .map_err(Error::in_downstream)?;
        }
        let options = bd.spec.options.clone();
        let force_sync = (options.force_sync_generation > 0
            && previous.sync_generation != Some(options.force_sync_generation))
        .then_some(options.force_sync_generation);
        let copies_generation = bd.spec.downstream_resources_generation;
        let needs_apply = inventory.deployment_id != deployment_id
            || force_sync.is_some()
            || previous.downstream_resources_generation != copies_generation;
        let scope = self.config.scope.clone();
        let set_id = scope.set_id(&name);
        let downstream = self.downstream.clone();
        let store = self.inventories.clone();
        let rendered = self.rendered_for(bd).await?;
        let objects = rendered.objects.clone();
        let hook_objects = rendered.hooks.clone();
        let render_options = rendered.options.clone();
        let installed_note = if rendered.hooks_not_run.is_empty() {
            String::new()
        } else {
            format!(
                "Helm hooks not run by the agent: {}",
                rendered.hooks_not_run.join(", ")
            )
        };
        self.watches.ensure(&objects).await;
        self.watches.ensure(&hook_objects).await;
        let mut applied_id = inventory.deployment_id.clone();
        self.tracked.get_mut(&name).expect(TRACKED).inventory = Some(inventory.clone());
        let mut deploy_error = None;
        let installed = !inventory.deployment_id.is_empty();
        self.track_hook_run(
            &name,
            &deployment_id,
            options.force_sync_generation,
            needs_apply,
            installed,
        );
        let hook_context = hooks::Context {
            downstream: &downstream,
            client: downstream
                .deploy_client(&scope.agent_namespace, &render_options.service_account),
            manager: scope.field_manager(),
            hooks: &hook_objects,
            timeout: hooks::timeout(&render_options),
        };
        self.tracked.get_mut(&name).expect(TRACKED).hook_running = false;
        if let Err(refused) = restriction::check(&downstream, &render_options).await {
            return Ok(Observation::failed(
                &previous.applied_deployment_id,
                refused.to_string(),
            ));
        }
        if needs_apply {
            let applied = &previous.applied_deployment_id;
            let context = &hook_context;
            match self
                .pre_hooks(&name, &mut inventory, context, &objects, &render_options)
                .await?
            {
                hooks::Progress::Done => {}
                hooks::Progress::Waiting(message) => {
                    return Ok(Observation::waiting(applied, message));
                }
                hooks::Progress::Failed(message) => {
                    return Ok(Observation::failed(applied, message));
                }
            }
        }
        let mut waiting = None;
        let mut copied = None;
        if needs_apply {
            let (next, failures) = apply_and_prune(
                &downstream,
                &store,
                &scope,
                &inventory,
                Target {
                    deployment_id: &deployment_id,
                    objects: &objects,
                    options: &render_options,
                    force_all: force_sync.is_some(),
                },
            )
            .await
            .map_err(Error::in_downstream)?;
            let metrics = crate::metrics::global();
            crate::metrics::Metrics::result(&metrics.applies, failures.is_empty());
            let pruned = inventory
                .objects
                .iter()
                .filter(|e| !next.objects.contains(e))
                .count();
            metrics.prunes.inc_by(pruned as u64);
            self.tracked.get_mut(&name).expect(TRACKED).inventory = Some(next);
            if failures.is_empty() {
                applied_id = deployment_id.clone();
                copied = Some(copies_generation);
            } else {
                deploy_error = Some(failure_message(&failures));
            }
        }
        if deploy_error.is_none() {
            match self
                .run_hooks(&name, &hook_context, hooks::Phase::Post)
                .await
            {
                hooks::Progress::Done => {}
                hooks::Progress::Waiting(message) => {
                    applied_id = previous.applied_deployment_id.clone();
                    waiting = Some(message);
                }
                hooks::Progress::Failed(message) => {
                    applied_id = previous.applied_deployment_id.clone();
                    deploy_error = Some(message);
                }
            }
        }
        let mut report = self
            .observe(&set_id, &objects, &render_options, needs_apply)
            .await;
        let correct_drift: CorrectDrift = bd
            .spec
            .correct_drift
            .clone()
            .or_else(|| render_options.correct_drift.clone())
            .unwrap_or_default();
        if !report.drifted.is_empty() {
            crate::metrics::global().drift.inc();
        }
        if correct_drift.enabled && deploy_error.is_none() && !report.drifted.is_empty() {
            correct(&downstream, &scope, &objects, &report, correct_drift.force).await;
            report = self.observe(&set_id, &objects, &render_options, true).await;
        }
        Ok(Observation {
            applied_deployment_id: applied_id,
            deploy_error,
            waiting,
            report: Some(report),
            sync_generation: force_sync,
            downstream_resources_generation: copied,
            installed_note,
        })
    }

    /// Keeps the hook run of `name` for the current deploymentID and force-sync generation: a run for another
    /// one is dropped, and a deployment that applies starts a new run (an upgrade once anything was installed).
    fn track_hook_run(
        &mut self,
        name: &str,
        deployment_id: &str,
        generation: i64,
        applies: bool,
        installed: bool,
    ) {
        let tracked = self.tracked.get_mut(name).expect(TRACKED);
        if !tracked
            .hook_run
            .as_ref()
            .is_some_and(|run| run.is_for(deployment_id, generation))
        {
            tracked.hook_run = None;
        }
        if applies && tracked.hook_run.is_none() {
            let event = if installed {
                hooks::Event::Upgrade
            } else {
                hooks::Event::Install
            };
            tracked.hook_run = Some(hooks::Run::new(deployment_id, generation, event));
        }
    }

    /// Before the release is applied: creates the namespaces the hooks need (recording those created in the
    /// inventory), then runs the pre hooks; `Done` when the release may be applied.
    async fn pre_hooks(
        &mut self,
        name: &str,
        inventory: &mut Inventory,
        context: &hooks::Context<'_>,
        objects: &[Desired],
        options: &BundleDeploymentOptions,
    ) -> Result<hooks::Progress> {
        if context.hooks.is_empty() {
            return Ok(hooks::Progress::Done);
        }
        let mut outcome = crate::apply::Outcome::default();
        let all: Vec<Desired> = context.hooks.iter().chain(objects).cloned().collect();
        let missing = ensure_namespaces(
            context.downstream,
            &context.manager,
            &all,
            options,
            &mut outcome,
        )
        .await;
        if !outcome.created_namespaces.is_empty() {
            inventory
                .created_namespaces
                .extend(outcome.created_namespaces);
            inventory.created_namespaces.sort();
            inventory.created_namespaces.dedup();
            self.inventories
                .save(inventory)
                .await
                .map_err(Error::in_downstream)?;
            self.tracked.get_mut(name).expect(TRACKED).inventory = Some(inventory.clone());
        }
        if let Some((_, reason)) = missing.into_iter().next() {
            return Ok(hooks::Progress::Failed(reason.to_string()));
        }
        Ok(self.run_hooks(name, context, hooks::Phase::Pre).await)
    }

    /// Advances the hooks of the current run of `name` through `phase` (`Done` when no run is current); a
    /// running hook keeps the BundleDeployment on the retry tick, so that its timeout is noticed.
    async fn run_hooks(
        &mut self,
        name: &str,
        context: &hooks::Context<'_>,
        phase: hooks::Phase,
    ) -> hooks::Progress {
        let tracked = self.tracked.get_mut(name).expect(TRACKED);
        let Some(run) = tracked.hook_run.as_mut() else {
            return hooks::Progress::Done;
        };
        let progress = run.advance(context, phase).await;
        if matches!(progress, hooks::Progress::Waiting(_)) {
            tracked.hook_running = true;
        }
        progress
    }

    /// Observes a BundleDeployment's objects; `written` drops the cached lists they were just changed in.
    async fn observe(
        &mut self,
        set_id: &str,
        objects: &[Desired],
        options: &BundleDeploymentOptions,
        written: bool,
    ) -> Report {
        if written {
            self.lists.invalidate(objects);
        }
        monitor::observe(
            &self.downstream,
            &mut self.lists,
            &self.config.scope,
            set_id,
            objects,
            options,
        )
        .await
    }

    async fn write_status(
        &mut self,
        bd: &BundleDeployment,
        previous: &BundleDeploymentStatus,
        observation: &Observation,
    ) -> Result<()> {
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let status = status::build(previous, &bd.spec, observation, &now);
        let Some(patch) = status::merge_patch(previous, &status) else {
            return Ok(());
        };
        let name = bd.metadata.name.clone().unwrap_or_default();
        let api: Api<BundleDeployment> =
            Api::namespaced(self.config.hub.clone(), &self.config.cluster_namespace);
        let updated = api
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|err| Error::kube(format!("writing the status of {name}"), err))?;
        if let Some(tracked) = self.tracked.get_mut(&name) {
            tracked.bd = updated;
        }
        Ok(())
    }
}

/// Whether a BundleDeployment is annotated to be orphaned on deletion (`fleet.cattle.io/uninstall: orphan`).
fn orphaned(bd: &BundleDeployment) -> bool {
    bd.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(fleet_api::labels::UNINSTALL))
        .is_some_and(|value| value == fleet_api::labels::UNINSTALL_ORPHAN)
}

/// The API's message when a watch failed because the credentials are not accepted (401).
fn unauthorized(err: &watcher::Error) -> Option<String> {
    let status = match err {
        watcher::Error::InitialListFailed(kube::Error::Api(status))
        | watcher::Error::WatchStartFailed(kube::Error::Api(status))
        | watcher::Error::WatchFailed(kube::Error::Api(status)) => status.as_ref(),
        watcher::Error::WatchError(status) => status.as_ref(),
        _ => return None,
    };
    (status.code == 401).then(|| status.message.clone())
}
