//! The deployment store's record of one BundleDeployment ([`StoredDeployment`]): slimmed ([`slim`]), with
//! the parts a Bundle's BundleDeployments have in common shared between them. A leaf of the index: the
//! summaries, tallies and resource counts read it.

use std::collections::BTreeMap;
use std::sync::Arc;

use fleet_api::labels as fleet_labels;
use fleet_api::{BundleDeployment, BundleDeploymentSpec, BundleDeploymentStatus, BundleState};
use fleet_target::selector::Labels;
use kube::api::ObjectMeta;

/// Entries kept in `nonReadyResources` (Fleet's cap); the store keeps the status lists
/// capped the same.
pub const MAX_NON_READY: usize = 10;

/// A BundleDeployment as the index keeps it: [`slim`]med, with its spec, status and labels behind `Arc`s
/// that the Bundle's other BundleDeployments share when theirs are equal (a Bundle's thousand
/// BundleDeployments usually have one or two distinct specs and statuses, and labels that differ only
/// by cluster). Read like a `BundleDeployment`: `bd.spec.deployment_id`, `bd.namespace()`,
/// `bd.labels()` (an iterator in key order).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoredDeployment {
    pub metadata: StoredMeta,
    pub spec: Arc<BundleDeploymentSpec>,
    pub status: Option<Arc<BundleDeploymentStatus>>,
}

/// What the index keeps of a BundleDeployment's metadata.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoredMeta {
    pub name: String,
    pub namespace: String,
    pub uid: Option<String>,
    pub resource_version: Option<String>,
    pub generation: Option<i64>,
    pub annotations: BTreeMap<String, String>,
    /// The labels with the values of `cluster-namespace` and `cluster` left empty (so that a Bundle's
    /// BundleDeployments share them); those two are the fields below.
    pub(super) labels: Arc<Labels>,
    cluster_namespace: String,
    cluster: String,
}

impl StoredMeta {
    /// `metadata` as stored, its labels (split from their cluster values) from `share`.
    pub(super) fn of(
        metadata: ObjectMeta,
        share: impl FnOnce(Labels) -> Arc<Labels>,
    ) -> StoredMeta {
        let mut labels = metadata.labels.unwrap_or_default();
        let mut take = |key: &str| labels.get_mut(key).map(std::mem::take).unwrap_or_default();
        let cluster_namespace = take(fleet_labels::CLUSTER_NAMESPACE);
        let cluster = take(fleet_labels::CLUSTER);
        StoredMeta {
            name: metadata.name.unwrap_or_default(),
            namespace: metadata.namespace.unwrap_or_default(),
            uid: metadata.uid,
            resource_version: metadata.resource_version,
            generation: metadata.generation,
            annotations: metadata.annotations.unwrap_or_default(),
            labels: share(labels),
            cluster_namespace,
            cluster,
        }
    }
}

impl StoredDeployment {
    /// `bd` slimmed, sharing nothing.
    pub fn unshared(bd: BundleDeployment) -> StoredDeployment {
        SharedParts::default().store(slim(bd))
    }

    /// Fleet's state of this BundleDeployment (no status yet counts as an empty status).
    pub fn state(&self) -> BundleState {
        match &self.status {
            Some(status) => fleet_api::deployment_state(&self.spec, status),
            None => fleet_api::deployment_state(&self.spec, &BundleDeploymentStatus::default()),
        }
    }

    /// The name, as `ResourceExt::name_any` gives it.
    pub fn name_any(&self) -> String {
        self.metadata.name.clone()
    }

    /// The namespace, as `ResourceExt::namespace` gives it.
    pub fn namespace(&self) -> Option<String> {
        Some(self.metadata.namespace.clone())
    }

    pub fn annotations(&self) -> &BTreeMap<String, String> {
        &self.metadata.annotations
    }

    /// The labels in key order.
    pub fn labels(&self) -> impl Iterator<Item = (&String, &String)> {
        let meta = &self.metadata;
        meta.labels
            .iter()
            .map(move |(key, value)| match key.as_str() {
                fleet_labels::CLUSTER_NAMESPACE => (key, &meta.cluster_namespace),
                fleet_labels::CLUSTER => (key, &meta.cluster),
                _ => (key, value),
            })
    }

    /// The value of label `key`.
    pub fn label(&self, key: &str) -> Option<&String> {
        let meta = &self.metadata;
        let value = meta.labels.get(key)?;
        Some(match key {
            fleet_labels::CLUSTER_NAMESPACE => &meta.cluster_namespace,
            fleet_labels::CLUSTER => &meta.cluster,
            _ => value,
        })
    }

    /// The metadata as the API has it (what is kept of it).
    pub fn object_meta(&self) -> ObjectMeta {
        let meta = &self.metadata;
        ObjectMeta {
            name: Some(meta.name.clone()),
            namespace: Some(meta.namespace.clone()),
            uid: meta.uid.clone(),
            resource_version: meta.resource_version.clone(),
            generation: meta.generation,
            annotations: (!meta.annotations.is_empty()).then(|| meta.annotations.clone()),
            labels: Some(self.labels().map(|(k, v)| (k.clone(), v.clone())).collect()),
            ..ObjectMeta::default()
        }
    }
}

/// Distinct specs, statuses and labels a Bundle's BundleDeployments were stored with, the latest used
/// first.
#[derive(Default)]
pub(super) struct SharedParts {
    specs: Vec<Arc<BundleDeploymentSpec>>,
    statuses: Vec<Arc<BundleDeploymentStatus>>,
    labels: Vec<Arc<Labels>>,
}

/// Distinct specs (statuses, labels) kept per Bundle for sharing: enough for a rollout's old and new
/// deployment and a few customizations; a Bundle with more shares only the recent ones.
const SHARED_LIMIT: usize = 8;

impl SharedParts {
    /// `bd` as stored, its spec, status and labels shared with equal ones held.
    pub(super) fn store(&mut self, bd: BundleDeployment) -> StoredDeployment {
        StoredDeployment {
            metadata: StoredMeta::of(bd.metadata, |labels| share(&mut self.labels, labels)),
            spec: share(&mut self.specs, bd.spec),
            status: bd.status.map(|status| share(&mut self.statuses, status)),
        }
    }
}

/// The held value equal to `value` (moved to the front), or `value`, held from now on.
fn share<T: PartialEq>(held: &mut Vec<Arc<T>>, value: T) -> Arc<T> {
    let shared = match held.iter().position(|h| **h == value) {
        Some(i) => held.remove(i),
        None => Arc::new(value),
    };
    held.insert(0, Arc::clone(&shared));
    held.truncate(SHARED_LIMIT);
    shared
}

/// A BundleDeployment as the index keeps it: only what planning, status and placement read. Gone are
/// managedFields, the creation time, finalizers and owners, and from the status the deployed objects'
/// creation times, the release, the agent's display and the conditions' times; the non-ready and modified lists are
/// capped as summaries cap them. (Fifty thousand of these are held at scale; writers slim the objects
/// the API server returns as they arrive, so that a thousand written at once never hold their
/// managedFields together.)
pub fn slim(mut bd: BundleDeployment) -> BundleDeployment {
    let meta = &mut bd.metadata;
    meta.managed_fields = None;
    meta.creation_timestamp = None;
    meta.finalizers = None;
    meta.owner_references = None;
    if let Some(status) = bd.status.as_mut() {
        // The deployed objects stay for the GitRepo's `resources`, without their creation times, so
        // that equal statuses of a Bundle's BundleDeployments are still shared.
        for resource in &mut status.resources {
            resource.created_at = None;
        }
        status.release = String::new();
        status.display = Default::default();
        for condition in &mut status.conditions {
            condition.last_update_time = String::new();
            condition.last_transition_time = String::new();
        }
        status.non_ready_status.truncate(MAX_NON_READY);
        status.modified_status.truncate(MAX_NON_READY);
    }
    bd
}

/// `object` carries a later resourceVersion than `held` (unparseable versions count as later).
pub(super) fn is_newer(object: &BundleDeployment, held: &StoredDeployment) -> bool {
    let (new, old) = (
        object.metadata.resource_version.as_deref(),
        held.metadata.resource_version.as_deref(),
    );
    match (
        new.and_then(|v| v.parse::<u64>().ok()),
        old.and_then(|v| v.parse::<u64>().ok()),
    ) {
        (Some(new), Some(old)) => new > old,
        _ => new != old,
    }
}

impl fleet_target::plan::ExistingDeployment for StoredDeployment {
    fn name(&self) -> &str {
        &self.metadata.name
    }

    fn namespace(&self) -> &str {
        &self.metadata.namespace
    }

    fn spec(&self) -> &BundleDeploymentSpec {
        &self.spec
    }

    fn status(&self) -> Option<&BundleDeploymentStatus> {
        self.status.as_deref()
    }

    fn annotations(&self) -> &BTreeMap<String, String> {
        &self.metadata.annotations
    }

    fn labels(&self) -> Box<dyn Iterator<Item = (&String, &String)> + '_> {
        Box::new(StoredDeployment::labels(self))
    }
}
