//! The per-object memory of the error policy: consecutive failures and the objects it stalled, and the
//! backoff delay they give. Context holds one [`Backoff`]; [`super::policy`] reads and updates it.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use crate::sync::lock;

/// The first delay of the backoff.
pub const BACKOFF_MIN: Duration = Duration::from_secs(1);
/// The longest delay of the backoff.
pub const BACKOFF_MAX: Duration = Duration::from_secs(300);

/// The backoff delay after `failures` consecutive failures (1 for the first): [`BACKOFF_MIN`] doubled
/// for each further failure, at most [`BACKOFF_MAX`].
pub fn backoff_delay(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(31);
    BACKOFF_MIN
        .saturating_mul(1u32 << doublings)
        .min(BACKOFF_MAX)
}

/// Consecutive failures per object (a key naming the controller and the object).
#[derive(Debug, Default)]
pub struct Backoff {
    failures: Mutex<HashMap<String, u32>>,
    /// Objects the policy stalled, whose `Stalled` condition a successful reconcile clears.
    stalled: Mutex<HashSet<String>>,
}

impl Backoff {
    /// Counts one more failure of `key` and returns the delay before its next attempt.
    pub fn failed(&self, key: &str) -> Duration {
        let mut failures = lock(&self.failures);
        let count = failures.entry(key.to_string()).or_insert(0);
        *count = count.saturating_add(1);
        backoff_delay(*count)
    }

    /// Forgets the failures of `key`, which reconciled successfully; `true` when the policy had stalled it
    /// (so that its `Stalled` condition is cleared).
    pub fn succeeded(&self, key: &str) -> bool {
        lock(&self.failures).remove(key);
        lock(&self.stalled).remove(key)
    }

    /// Marks `key` stalled: it waits for a change, with no failures counted.
    pub(super) fn stalled(&self, key: &str) {
        lock(&self.failures).remove(key);
        lock(&self.stalled).insert(key.to_string());
    }

    /// The consecutive failures of `key` so far.
    pub fn failures(&self, key: &str) -> u32 {
        lock(&self.failures).get(key).copied().unwrap_or(0)
    }
}
