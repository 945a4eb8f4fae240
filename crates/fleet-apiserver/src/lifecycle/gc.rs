//! The garbage collector: deletes (or detaches) the dependents of deleted owners, following their
//! ownerReferences, on its own thread once the delete request that started it has been answered, as
//! kube-controller-manager's collector does. A background deletion removes the owner at once and its
//! dependents shortly after; a foreground deletion keeps the owner (with the `foregroundDeletion` finalizer)
//! until the collector has removed every dependent, and then removes it. The same thread empties
//! terminating namespaces, as kube-controller-manager's namespace controller does.

use std::sync::Weak;
use std::sync::mpsc::Receiver;

use crate::lifecycle::deletion;
use crate::lifecycle::queue::{Propagation, Work};
use crate::state::Inner;

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
                            if crate::lifecycle::owner_scope::check(txn, key, uid) {
                                let _ = deletion::delete(txn, &inner, key, Propagation::Background);
                            }
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
