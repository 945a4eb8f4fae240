//! The garbage collector: deletes (or detaches) the dependents of deleted owners, following their
//! ownerReferences, on its own thread once the delete request that started it has been answered, as
//! kube-controller-manager's collector does. A background deletion removes the owner at once and its
//! dependents shortly after; a foreground deletion keeps the owner (with the `foregroundDeletion` finalizer)
//! until the collector has removed every dependent, and then removes it.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Mutex, Weak};

use crate::lifecycle::{self, Propagation};
use crate::server::Inner;

/// One piece of collection work.
pub(crate) struct Work {
    pub owner_uid: String,
    pub propagation: Propagation,
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
        let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        // The receiver lives as long as the server; a send can only fail while the server shuts down.
        let _ = queue.send(Work {
            owner_uid: owner_uid.to_string(),
            propagation,
        });
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
                    lifecycle::collect_dependents(txn, &inner, &item.owner_uid, item.propagation);
                    Ok(())
                });
                if let Err(err) = result {
                    tracing::warn!(owner = %item.owner_uid, %err, "garbage collection failed");
                }
            }
        });
    if let Err(err) = spawned {
        tracing::error!(%err, "cannot start the garbage collector thread");
    }
}
