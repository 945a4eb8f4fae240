//! The garbage collector: deletes (or detaches) the dependents of deleted owners, following their
//! ownerReferences, on its own thread once the delete request that started it has been answered, as
//! kube-controller-manager's collector does. A background deletion removes the owner at once and its
//! dependents shortly after; a foreground deletion keeps the owner (with the `foregroundDeletion` finalizer)
//! until the collector has removed every dependent, and then removes it. The same thread empties
//! terminating namespaces, as kube-controller-manager's namespace controller does.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Mutex, Weak};

use crate::lifecycle::deletion::{self, Propagation};
use crate::server::Inner;

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

/// Queues the collections a previous run left unfinished (the queue is not persisted).
pub(crate) fn resume(inner: &Inner) {
    let (gone, waiting) = inner.store.owners_to_collect();
    for owner in gone {
        inner.gc.enqueue(&owner, Propagation::Background);
    }
    for owner in waiting {
        inner.gc.enqueue(&owner, Propagation::Foreground);
    }
    let (namespaces, _) = inner
        .store
        .list(&crate::lifecycle::namespaces::key("").resource, None);
    for namespace in namespaces
        .iter()
        .filter(|ns| crate::storage::object::is_deleting(ns))
    {
        inner
            .gc
            .enqueue_namespace(crate::storage::object::name(namespace));
    }
}

/// Runs the collector on its own thread until the server is dropped.
pub(crate) fn start(inner: Weak<Inner>, work: Receiver<Work>) {
    let spawned = std::thread::Builder::new()
        .name("apiserver-gc".into())
        .spawn(move || {
            while let Ok(item) = work.recv() {
                let Some(inner) = inner.upgrade() else {
                    return;
                };
                let result = inner.store.transact(|txn| {
                    match &item {
                        Work::Dependents {
                            owner_uid,
                            propagation,
                        } => deletion::collect_dependents(txn, &inner, owner_uid, *propagation),
                        Work::Namespace(name) => deletion::empty_namespace(txn, &inner, name),
                        Work::Owners { key, uid } => {
                            crate::lifecycle::owner_scope::check(txn, &inner, key, uid)
                        }
                    }
                    Ok(())
                });
                if let Err(err) = result {
                    tracing::warn!(%err, "garbage collection failed");
                }
            }
        });
    if let Err(err) = spawned {
        tracing::error!(%err, "cannot start the garbage collector thread");
    }
}
