//! Generic object storage: objects as JSON values keyed by storage key (group/resource), namespace and name;
//! one global monotonic resourceVersion; a bounded history of watch events for resuming watches; an index of
//! ownerReferences for the garbage collector; and the journal that makes writes durable before they are answered.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;
use tokio::sync::broadcast;

use crate::error::{ApiError, ApiResult};
pub use crate::storage::key::ObjKey;
use crate::storage::object;
use crate::storage::persist::{Journal, Record};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Added,
    Modified,
    Deleted,
}

/// One change, as watchers see it.
#[derive(Debug, Clone)]
pub struct WatchEvent {
    pub rv: u64,
    pub kind: EventKind,
    pub key: ObjKey,
    pub object: Arc<Value>,
    /// The object before a modification (decides ADDED/DELETED for watches whose selector it enters or leaves).
    pub previous: Option<Arc<Value>>,
}

/// What a new watch starts from: the events after its resourceVersion still in history, and a live feed.
pub struct Subscription {
    pub backlog: VecDeque<Arc<WatchEvent>>,
    pub live: broadcast::Receiver<Arc<WatchEvent>>,
    /// The resourceVersion the watch is positioned at once the backlog is sent.
    pub position: u64,
}

/// An object at rest: compact JSON. Parsed values cost about ten times more memory (serde_json maps with
/// preserved order), so the store keeps bytes and parses on read, except while the parsed value written
/// last is still alive elsewhere (in watch history, a response, a transaction): then reads share it.
/// Readers take the bytes (a shared pointer) under the lock and parse them after releasing it.
struct Stored {
    rv: u64,
    bytes: Arc<[u8]>,
    parsed: Weak<Value>,
    /// Namespaces stay parsed: every write into a namespace reads it.
    pinned: Option<Arc<Value>>,
}

/// A stored object taken out under the lock, parsed (if need be) once the lock is released.
enum Taken {
    Parsed(Arc<Value>),
    Bytes(Arc<[u8]>),
}

impl Taken {
    fn value(self) -> Arc<Value> {
        match self {
            Taken::Parsed(value) => value,
            Taken::Bytes(bytes) => Arc::new(serde_json::from_slice(&bytes).unwrap_or(Value::Null)),
        }
    }
}

impl Stored {
    fn new(key: &ObjKey, rv: u64, obj: &Arc<Value>) -> Stored {
        Stored {
            rv,
            bytes: serde_json::to_vec(&**obj).unwrap_or_default().into(),
            parsed: Arc::downgrade(obj),
            pinned: (key.resource == PINNED_RESOURCE).then(|| obj.clone()),
        }
    }

    fn take(&self) -> Taken {
        if let Some(pinned) = &self.pinned {
            return Taken::Parsed(pinned.clone());
        }
        match self.parsed.upgrade() {
            Some(value) => Taken::Parsed(value),
            None => Taken::Bytes(self.bytes.clone()),
        }
    }

    fn value(&self) -> Arc<Value> {
        self.take().value()
    }
}

/// The resource whose objects stay parsed in memory.
const PINNED_RESOURCE: &str = "/namespaces";

type Objects = HashMap<String, BTreeMap<(String, String), Stored>>;

struct State {
    rv: u64,
    /// Events at or below this resourceVersion are no longer in history.
    compacted_rv: u64,
    objects: Objects,
    history: VecDeque<Arc<WatchEvent>>,
    history_limit: usize,
    /// owner uid → dependents.
    owners: HashMap<String, BTreeSet<ObjKey>>,
    /// uid → object.
    uids: HashMap<String, ObjKey>,
    journal: Option<Journal>,
    /// Journal writes made (one per transaction) — group commit syncs up to a sequence number.
    written_seq: u64,
    /// Events written but not yet fsync'd: watchers see them only once durable, in order.
    unpublished: VecDeque<(u64, Arc<WatchEvent>)>,
    /// The highest resourceVersion watchers have been sent.
    published_rv: u64,
    count: usize,
}

/// The object store. All writes go through [`Store::transact`].
pub struct Store {
    state: Mutex<State>,
    /// Held while fsyncing; holds the highest journal sequence number known durable.
    synced: Mutex<u64>,
    events: broadcast::Sender<Arc<WatchEvent>>,
}

impl Store {
    pub fn new(history_limit: usize, journal: Option<Journal>) -> Self {
        let (events, _) = broadcast::channel(history_limit.max(1024));
        Store {
            synced: Mutex::new(0),
            state: Mutex::new(State {
                rv: 0,
                compacted_rv: 0,
                objects: HashMap::new(),
                history: VecDeque::new(),
                history_limit: history_limit.max(1),
                owners: HashMap::new(),
                uids: HashMap::new(),
                journal,
                written_seq: 0,
                unpublished: VecDeque::new(),
                published_rv: 0,
                count: 0,
            }),
            events,
        }
    }

    /// Loads objects recovered from the journal (at startup, before serving).
    pub fn restore(&self, rv: u64, objects: Vec<(ObjKey, Value)>) {
        let mut state = self.lock();
        for (key, obj) in objects {
            index_owners(&mut state.owners, &key, &obj, true);
            let object_rv = object::resource_version(&obj).unwrap_or(rv);
            state
                .uids
                .insert(object::uid(&obj).to_string(), key.clone());
            let stored = Stored::new(&key, object_rv, &Arc::new(obj));
            state
                .objects
                .entry(key.resource)
                .or_default()
                .insert((key.namespace, key.name), stored);
            state.count += 1;
        }
        state.rv = rv;
        state.compacted_rv = rv;
        state.published_rv = rv;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Owners that dependents still refer to but that are no longer stored (their collection was cut short,
    /// e.g. by a crash), and owners waiting in foreground deletion.
    pub fn owners_to_collect(&self) -> (Vec<String>, Vec<String>) {
        let state = self.lock();
        let mut gone = Vec::new();
        let mut waiting = Vec::new();
        for owner in state.owners.keys() {
            match state.uids.get(owner) {
                None => gone.push(owner.clone()),
                Some(key) => {
                    let deleting = get_in(&state.objects, key).is_some_and(|o| {
                        object::is_deleting(&o)
                            && object::finalizers(&o)
                                .iter()
                                .any(|f| f == crate::storage::object::FOREGROUND)
                    });
                    if deleting {
                        waiting.push(owner.clone());
                    }
                }
            }
        }
        (gone, waiting)
    }

    pub fn object_count(&self) -> usize {
        self.lock().count
    }

    pub fn get(&self, key: &ObjKey) -> Option<Arc<Value>> {
        let taken = {
            let state = self.lock();
            stored_at(&state.objects, key)?.take()
        };
        Some(taken.value())
    }

    /// A consistent snapshot of a resource's objects (optionally one namespace) and the resourceVersion it is at.
    pub fn list(&self, resource: &str, namespace: Option<&str>) -> (Vec<Arc<Value>>, u64) {
        let (taken, rv) = {
            let state = self.lock();
            let taken: Vec<Taken> = list_in(&state.objects, resource, namespace)
                .map(Stored::take)
                .collect();
            (taken, state.rv)
        };
        (taken.into_iter().map(Taken::value).collect(), rv)
    }

    /// Runs `f` with exclusive access. Its writes are journaled and, before this returns, fsync'd (group
    /// commit: concurrent transactions share one fsync); watchers see them once durable, in order.
    pub fn transact<T>(&self, f: impl FnOnce(&mut Txn<'_>) -> ApiResult<T>) -> ApiResult<T> {
        let mut state = self.lock();
        let mut txn = Txn {
            state: &mut state,
            events: Vec::new(),
        };
        let result = f(&mut txn);
        let events = std::mem::take(&mut txn.events);
        if events.is_empty() {
            return result;
        }
        let durable_mode = state.journal.is_some();
        if let Some(journal) = state.journal.as_mut() {
            let records: Vec<Record> = events
                .iter()
                .map(|e| Record {
                    rv: e.rv,
                    key: e.key.clone(),
                    object: (e.kind != EventKind::Deleted).then(|| (*e.object).clone()),
                })
                .collect();
            if let Err(err) = journal.write(&records) {
                tracing::error!(%err, "journal write failed");
                return Err(ApiError::internal(format!("storage write failed: {err}")));
            }
        }
        state.written_seq += 1;
        let seq = state.written_seq;
        let mut compacted = false;
        if state
            .journal
            .as_ref()
            .is_some_and(|j| j.wants_compaction(state.count))
        {
            let rv = state.rv;
            let objects = snapshot(&state.objects);
            match state.journal.as_mut().map(|j| j.rewrite(rv, &objects)) {
                Some(Err(err)) => {
                    tracing::warn!(%err, "journal compaction failed; the journal keeps growing")
                }
                _ => compacted = true,
            }
        }
        // Events leaving history are freed after the lock is released: dropping parsed objects is not free.
        let mut expired = Vec::new();
        for event in events {
            let event = Arc::new(event);
            if state.history.len() >= state.history_limit
                && let Some(dropped) = state.history.pop_front()
            {
                state.compacted_rv = dropped.rv;
                expired.push(dropped);
            }
            state.history.push_back(event.clone());
            if durable_mode {
                state.unpublished.push_back((seq, event));
            } else {
                state.published_rv = event.rv;
                let _ = self.events.send(event);
            }
        }
        drop(state);
        drop(expired);
        if durable_mode {
            // fsync blocks: on a multi-threaded runtime, let other requests move to other workers meanwhile
            // (they then queue their writes behind this sync and share the next one).
            let multi_thread = tokio::runtime::Handle::try_current()
                .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
            if multi_thread {
                tokio::task::block_in_place(|| self.sync_through(seq, compacted))?;
            } else {
                self.sync_through(seq, compacted)?;
            }
        }
        result
    }

    /// Makes every journal write up to `seq` durable (one fsync covers all writes made so far), then
    /// publishes the events that became durable.
    fn sync_through(&self, seq: u64, compacted: bool) -> ApiResult<()> {
        {
            let mut synced = self.synced.lock().unwrap_or_else(|p| p.into_inner());
            if *synced < seq && compacted {
                // The compaction snapshot, synced before its rename, holds every write up to `seq`.
                *synced = seq;
            } else if *synced < seq {
                let (target, handle) = {
                    let state = self.lock();
                    (
                        state.written_seq,
                        state.journal.as_ref().map(Journal::sync_handle),
                    )
                };
                if let Some(handle) = handle {
                    handle.sync_data().map_err(|err| {
                        tracing::error!(%err, "journal fsync failed");
                        ApiError::internal(format!("storage sync failed: {err}"))
                    })?;
                }
                *synced = target;
            }
        }
        let synced = *self.synced.lock().unwrap_or_else(|p| p.into_inner());
        let mut state = self.lock();
        while state.unpublished.front().is_some_and(|(s, _)| *s <= synced) {
            if let Some((_, event)) = state.unpublished.pop_front() {
                state.published_rv = event.rv;
                let _ = self.events.send(event);
            }
        }
        Ok(())
    }

    /// Subscribes to events after `from_rv`; `Expired` when history no longer reaches back that far.
    pub fn subscribe(&self, from_rv: u64) -> ApiResult<Subscription> {
        let state = self.lock();
        if from_rv < state.compacted_rv {
            return Err(ApiError::expired(format!(
                "too old resource version: {from_rv} ({})",
                state.compacted_rv + 1
            )));
        }
        let backlog: VecDeque<Arc<WatchEvent>> = state
            .history
            .iter()
            .filter(|e| e.rv > from_rv && e.rv <= state.published_rv)
            .cloned()
            .collect();
        Ok(Subscription {
            backlog,
            live: self.events.subscribe(),
            position: from_rv,
        })
    }

    /// Subscribes at the current resourceVersion, with a snapshot of a resource's objects at that point.
    pub fn subscribe_with_snapshot(
        &self,
        resource: &str,
        namespace: Option<&str>,
    ) -> (Vec<Arc<Value>>, Subscription) {
        let state = self.lock();
        let snapshot = list_in(&state.objects, resource, namespace)
            .map(Stored::value)
            .collect();
        let sub = Subscription {
            backlog: VecDeque::new(),
            live: self.events.subscribe(),
            position: state.rv,
        };
        (snapshot, sub)
    }
}

fn snapshot(objects: &Objects) -> Vec<(ObjKey, Arc<Value>)> {
    objects
        .iter()
        .flat_map(|(res, m)| {
            m.iter().map(move |((ns, name), obj)| {
                (
                    ObjKey::new(res.clone(), ns.clone(), name.clone()),
                    obj.value(),
                )
            })
        })
        .collect()
}

fn stored_at<'a>(objects: &'a Objects, key: &ObjKey) -> Option<&'a Stored> {
    objects
        .get(&key.resource)?
        .get(&(key.namespace.clone(), key.name.clone()))
}

fn get_in(objects: &Objects, key: &ObjKey) -> Option<Arc<Value>> {
    stored_at(objects, key).map(Stored::value)
}

fn list_in<'a>(
    objects: &'a Objects,
    resource: &str,
    namespace: Option<&str>,
) -> Box<dyn Iterator<Item = &'a Stored> + 'a> {
    let Some(map) = objects.get(resource) else {
        return Box::new(std::iter::empty());
    };
    match namespace {
        None => Box::new(map.values()),
        Some(ns) => {
            let ns = ns.to_string();
            Box::new(
                map.range((ns.clone(), String::new())..)
                    .take_while(move |((obj_ns, _), _)| *obj_ns == ns)
                    .map(|(_, v)| v),
            )
        }
    }
}

fn index_owners(
    owners: &mut HashMap<String, BTreeSet<ObjKey>>,
    key: &ObjKey,
    obj: &Value,
    add: bool,
) {
    for uid in object::owner_uids(obj) {
        if add {
            owners.entry(uid).or_default().insert(key.clone());
        } else if let Some(set) = owners.get_mut(&uid) {
            set.remove(key);
            if set.is_empty() {
                owners.remove(&uid);
            }
        }
    }
}

/// Exclusive access to the store during one logical write.
pub struct Txn<'a> {
    state: &'a mut State,
    events: Vec<WatchEvent>,
}

impl Txn<'_> {
    pub fn get(&self, key: &ObjKey) -> Option<Arc<Value>> {
        get_in(&self.state.objects, key)
    }

    /// The resourceVersion of the object stored under `key`, if any.
    pub fn resource_version(&self, key: &ObjKey) -> Option<u64> {
        stored_at(&self.state.objects, key).map(|stored| stored.rv)
    }

    pub fn list(&self, resource: &str, namespace: Option<&str>) -> Vec<Arc<Value>> {
        list_in(&self.state.objects, resource, namespace)
            .map(Stored::value)
            .collect()
    }

    /// Keys of every object in `namespace`, across all resources.
    pub fn keys_in_namespace(&self, namespace: &str) -> Vec<ObjKey> {
        let mut keys = Vec::new();
        for (resource, map) in &self.state.objects {
            for ((ns, name), _) in map.range((namespace.to_string(), String::new())..) {
                if ns != namespace {
                    break;
                }
                keys.push(ObjKey::new(resource.clone(), ns.clone(), name.clone()));
            }
        }
        keys.sort();
        keys
    }

    /// The object with `uid`, if it exists.
    pub fn by_uid(&self, uid: &str) -> Option<ObjKey> {
        self.state.uids.get(uid).cloned()
    }

    /// Objects whose ownerReferences name `uid`.
    pub fn dependents(&self, uid: &str) -> Vec<ObjKey> {
        self.state
            .owners
            .get(uid)
            .map(|set| set.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Stores `obj` under `key` with a new resourceVersion and records the event.
    pub fn put(&mut self, key: &ObjKey, obj: Value) -> Arc<Value> {
        self.replace(key, obj, None)
    }

    /// [`Txn::put`] for a writer that holds the object being replaced (saves parsing it under the lock).
    pub fn replace(
        &mut self,
        key: &ObjKey,
        mut obj: Value,
        replaced: Option<Arc<Value>>,
    ) -> Arc<Value> {
        self.state.rv += 1;
        let rv = self.state.rv;
        object::set_resource_version(&mut obj, rv);
        self.state
            .uids
            .insert(object::uid(&obj).to_string(), key.clone());
        let obj = Arc::new(obj);
        let stored = Stored::new(key, rv, &obj);
        let map = self.state.objects.entry(key.resource.clone()).or_default();
        let previous = map
            .insert((key.namespace.clone(), key.name.clone()), stored)
            .map(|old| match (old.parsed.upgrade(), replaced) {
                (Some(parsed), _) => parsed,
                (None, Some(replaced)) if object::resource_version(&replaced) == Some(old.rv) => {
                    replaced
                }
                (None, _) => old.value(),
            });
        let kind = match &previous {
            Some(old) => {
                index_owners(&mut self.state.owners, key, old, false);
                index_owners(&mut self.state.owners, key, &obj, true);
                EventKind::Modified
            }
            None => {
                index_owners(&mut self.state.owners, key, &obj, true);
                self.state.count += 1;
                EventKind::Added
            }
        };
        self.events.push(WatchEvent {
            rv,
            kind,
            key: key.clone(),
            object: obj.clone(),
            previous,
        });
        obj
    }

    /// Removes the object; the DELETED event carries the deletion's resourceVersion.
    pub fn remove(&mut self, key: &ObjKey) -> Option<Arc<Value>> {
        let map = self.state.objects.get_mut(&key.resource)?;
        let old = map
            .remove(&(key.namespace.clone(), key.name.clone()))?
            .value();
        self.state.count -= 1;
        index_owners(&mut self.state.owners, key, &old, false);
        self.state.uids.remove(object::uid(&old));
        self.state.rv += 1;
        let rv = self.state.rv;
        let mut deleted = (*old).clone();
        object::set_resource_version(&mut deleted, rv);
        let deleted = Arc::new(deleted);
        self.events.push(WatchEvent {
            rv,
            kind: EventKind::Deleted,
            key: key.clone(),
            object: deleted.clone(),
            previous: None,
        });
        Some(deleted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn journal_replays_and_compacts() {
        let dir = tempfile::tempdir().unwrap();
        let key = ObjKey::new("/configmaps", "default", "hot");
        {
            let (journal, recovered) = Journal::open(dir.path()).unwrap();
            assert!(recovered.objects.is_empty());
            let store = Store::new(100, Some(journal));
            // Twelve transactions of a thousand writes each (one fsync per transaction).
            for batch in 0..12 {
                store
                    .transact(|txn| {
                        for i in batch * 1000..(batch + 1) * 1000 {
                            txn.put(
                                &key,
                                json!({"metadata": {"name": "hot", "uid": "u"}, "data": {"i": i}}),
                            );
                        }
                        Ok(())
                    })
                    .unwrap();
            }
            store
                .transact(|txn| {
                    txn.put(
                        &ObjKey::new("/configmaps", "default", "gone"),
                        json!({"metadata": {"name": "gone"}}),
                    );
                    txn.remove(&ObjKey::new("/configmaps", "default", "gone"));
                    Ok(())
                })
                .unwrap();
        }
        let lines = std::fs::read_to_string(dir.path().join("objects.jsonl"))
            .unwrap()
            .lines()
            .count();
        assert!(lines < 5_000, "the journal was compacted ({lines} lines)");
        let (_, recovered) = Journal::open(dir.path()).unwrap();
        assert_eq!(recovered.rv, 12_002);
        assert_eq!(recovered.objects.len(), 1);
        assert_eq!(recovered.objects[0].1["data"]["i"], 11_999);
    }

    #[test]
    fn a_torn_last_line_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (journal, _) = Journal::open(dir.path()).unwrap();
            let store = Store::new(100, Some(journal));
            store
                .transact(|txn| {
                    txn.put(
                        &ObjKey::new("/configmaps", "default", "a"),
                        json!({"metadata": {"name": "a"}}),
                    );
                    Ok(())
                })
                .unwrap();
        }
        let path = dir.path().join("objects.jsonl");
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"rv\":2,\"resource\":\"/configmaps\",\"nam");
        std::fs::write(&path, text).unwrap();
        let (mut journal, recovered) = Journal::open(dir.path()).unwrap();
        assert_eq!((recovered.rv, recovered.objects.len()), (1, 1));
        journal
            .write(&[Record {
                rv: 2,
                key: ObjKey::new("/configmaps", "default", "b"),
                object: Some(json!({})),
            }])
            .unwrap();
        let (_, recovered) = Journal::open(dir.path()).unwrap();
        assert_eq!((recovered.rv, recovered.objects.len()), (2, 2));
    }
}
