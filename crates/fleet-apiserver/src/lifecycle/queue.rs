//! The garbage collector's queue: the work the write path hands to the collector's thread ([`Work`], queued
//! through [`Collector`]), and the propagation policies a deletion carries.

use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, Sender};

/// How a deletion treats the dependents of the deleted object (`propagationPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    Background,
    Foreground,
    Orphan,
}

/// One piece of collection work.
pub(crate) enum Work {
    /// Delete (or detach) the dependents of an owner.
    Dependents {
        owner_uid: String,
        propagation: Propagation,
    },
    /// Delete the contents of a terminating namespace.
    Namespace(String),
    /// Judge the ownerReferences just written on an object (see [`crate::lifecycle::owner_scope`]).
    Owners {
        key: crate::storage::store::ObjKey,
        uid: String,
    },
}

/// The queue the write path hands work to.
pub(crate) struct Collector {
    queue: Mutex<Sender<Work>>,
}

impl Collector {
    pub fn new() -> (Collector, Receiver<Work>) {
        let (tx, rx) = mpsc::channel();
        (
            Collector {
                queue: Mutex::new(tx),
            },
            rx,
        )
    }

    /// Asks for the dependents of `owner_uid` to be collected.
    pub fn enqueue(&self, owner_uid: &str, propagation: Propagation) {
        self.send(Work::Dependents {
            owner_uid: owner_uid.to_string(),
            propagation,
        });
    }

    /// Asks for the contents of the terminating namespace `name` to be deleted.
    pub fn enqueue_namespace(&self, name: &str) {
        self.send(Work::Namespace(name.to_string()));
    }

    /// Asks for the ownerReferences of the object just stored under `key` to be checked.
    pub fn enqueue_owner_check(
        &self,
        key: &crate::storage::store::ObjKey,
        obj: &serde_json::Value,
    ) {
        if crate::storage::object::owner_refs(obj).is_empty() {
            return;
        }
        self.send(Work::Owners {
            key: key.clone(),
            uid: crate::storage::object::uid(obj).to_string(),
        });
    }

    fn send(&self, work: Work) {
        let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        // The receiver lives as long as the server; a send can only fail while the server shuts down.
        let _ = queue.send(work);
    }
}
