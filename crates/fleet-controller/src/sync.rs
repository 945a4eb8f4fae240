//! Locking shared by every module: a mutex whose data survives a panicking holder, and [`Memo`], a string
//! remembered per key (what a reconciler last applied, so it can skip writing the same again).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// Locks a mutex, recovering the data if a panicking thread poisoned it.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// A string remembered per key, e.g. the hash of what a reconciler last applied for an object.
#[derive(Debug, Default)]
pub struct Memo(Mutex<HashMap<String, String>>);

impl Memo {
    /// What is remembered for `key`.
    pub fn get(&self, key: &str) -> Option<String> {
        lock(&self.0).get(key).cloned()
    }

    /// Remembers `value` for `key`.
    pub fn record(&self, key: &str, value: &str) {
        lock(&self.0).insert(key.to_string(), value.to_string());
    }

    /// Forgets `key`.
    pub fn forget(&self, key: &str) {
        lock(&self.0).remove(key);
    }
}
