//! Watches on what the agent applied: one cluster-wide watch per applied kind (apiVersion + kind), selected
//! by this agent's scope label, so another agent's objects never wake it. Each change or deletion names the
//! object-set ID of the object that changed, which the agent maps to the one BundleDeployment to re-check
//! (readiness and drift). After a watch had to list again (a reconnect the server could not resume), every
//! BundleDeployment is re-checked once, because changes may have been missed. An idle agent therefore
//! makes no requests but the watches' periodic reconnects.

use std::collections::BTreeSet;

use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tracing::{debug, warn};

use crate::downstream::Downstream;
use crate::render::Desired;
use crate::scope::{SCOPE_LABEL, SET_ID_ANNOTATION, Scope};

/// What a watch saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// An object of this object set changed or was deleted.
    Object(String),
    /// A watch listed again; anything may have changed.
    Resync,
}

/// The running watches of one agent; they stop when it is dropped.
pub struct Watches {
    downstream: Downstream,
    selector: String,
    sender: mpsc::UnboundedSender<Change>,
    watched: BTreeSet<(String, String)>,
    tasks: Vec<JoinHandle<()>>,
}

impl Watches {
    /// No watches yet, and the receiving end of their changes.
    pub fn new(downstream: Downstream, scope: &Scope) -> (Self, mpsc::UnboundedReceiver<Change>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        let watches = Watches {
            downstream,
            selector: format!("{SCOPE_LABEL}={}", scope.label_value()),
            sender,
            watched: BTreeSet::new(),
            tasks: Vec::new(),
        };
        (watches, receiver)
    }

    /// Starts a watch for every kind among `objects` not watched yet. A kind that cannot be resolved yet (a
    /// CRD not installed) is tried again on the next call.
    pub async fn ensure(&mut self, objects: &[Desired]) {
        for desired in objects {
            let key = (
                desired.object_ref.api_version.clone(),
                desired.object_ref.kind.clone(),
            );
            if self.watched.contains(&key) {
                continue;
            }
            let resource = match self.downstream.resolve(&key.0, &key.1).await {
                Ok((resource, _)) => resource,
                Err(err) => {
                    debug!(kind = %key.1, api_version = %key.0, error = %err, "not watching yet");
                    continue;
                }
            };
            let api: Api<DynamicObject> =
                Api::all_with(self.downstream.client().clone(), &resource);
            let config = watcher::Config::default().labels(&self.selector);
            let sender = self.sender.clone();
            let kind = format!("{}.{}", key.1, key.0);
            self.tasks
                .push(tokio::spawn(forward(api, config, sender, kind)));
            self.watched.insert(key);
        }
    }
}

impl Drop for Watches {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Forwards one kind's watch events as [`Change`]s until the receiver is gone.
async fn forward(
    api: Api<DynamicObject>,
    config: watcher::Config,
    sender: mpsc::UnboundedSender<Change>,
    kind: String,
) {
    let mut events = watcher::watcher(api, config).default_backoff().boxed();
    let mut listed_before = false;
    while let Some(event) = events.next().await {
        let change = match event {
            Ok(Event::Apply(object) | Event::Delete(object)) => set_id(&object).map(Change::Object),
            Ok(Event::InitDone) => {
                let again = listed_before;
                listed_before = true;
                again.then_some(Change::Resync)
            }
            Ok(Event::Init | Event::InitApply(_)) => None,
            Err(err) => {
                warn!(%kind, error = %err, "watching applied objects");
                None
            }
        };
        if let Some(change) = change
            && sender.send(change).is_err()
        {
            return;
        }
    }
}

fn set_id(object: &DynamicObject) -> Option<String> {
    object
        .metadata
        .annotations
        .as_ref()?
        .get(SET_ID_ANNOTATION)
        .cloned()
}
