//! Throttled reconcile requests: a burst of watch events for the same objects (thousands of
//! BundleDeployment status reports) becomes at most one reconcile request per object per interval.
//! Unlike a debounce, a steady stream of events cannot postpone the request forever: the first request
//! of a batch is delivered one interval later, with everything that arrived meanwhile. After a batch of
//! hundreds of objects the interval stretches ([`stretched`]), so that aggregate status at scale is
//! rewritten at a bounded rate.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;

use crate::sync::lock;

/// Objects (namespace, name) waiting for the next batch.
#[derive(Default)]
pub struct Throttled {
    pending: Mutex<BTreeSet<(String, String)>>,
    wake: Notify,
}

impl Throttled {
    /// Asks for a reconcile of `namespace/name` in the next batch.
    pub fn request(&self, namespace: &str, name: &str) {
        let inserted = lock(&self.pending).insert((namespace.to_string(), name.to_string()));
        if inserted {
            self.wake.notify_one();
        }
    }

    /// Requests waiting for the next batch.
    pub fn len(&self) -> usize {
        lock(&self.pending).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Delivers batches to `send`, each `interval` after its first request (longer after a large
    /// batch, see [`stretched`]), until the task is dropped.
    pub async fn run(&self, interval: Duration, mut send: impl FnMut(&str, &str)) {
        let mut wait = interval;
        loop {
            self.wake.notified().await;
            tokio::time::sleep(wait).await;
            let batch = std::mem::take(&mut *lock(&self.pending));
            for (namespace, name) in &batch {
                send(namespace, name);
            }
            wait = stretched(interval, batch.len());
        }
    }
}

/// Objects per batch that stretch the next interval by one more `interval`.
const OBJECTS_PER_STRETCH: usize = 100;

/// The longest wait, in intervals.
const MAX_STRETCH: usize = 10;

/// The wait before the batch after one of `batch` objects: one interval for up to
/// [`OBJECTS_PER_STRETCH`] objects, one more per further [`OBJECTS_PER_STRETCH`], at most
/// [`MAX_STRETCH`] intervals. A small fleet keeps its status current within one interval; a fleet of
/// thousands of clusters, all changing at once, rewrites each aggregate status a few times a second at
/// most instead of after every BundleDeployment event.
pub fn stretched(interval: Duration, batch: usize) -> Duration {
    let intervals = (1 + batch / OBJECTS_PER_STRETCH).min(MAX_STRETCH);
    interval * u32::try_from(intervals).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn large_batches_stretch_the_interval_up_to_a_bound() {
        let interval = Duration::from_millis(300);
        assert_eq!(stretched(interval, 1), interval);
        assert_eq!(stretched(interval, 99), interval);
        assert_eq!(stretched(interval, 100), interval * 2);
        assert_eq!(stretched(interval, 450), interval * 5);
        assert_eq!(stretched(interval, 50_000), interval * 10);
    }

    #[tokio::test]
    async fn a_burst_becomes_one_request_per_object() {
        let throttled = Arc::new(Throttled::default());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let runner = {
            let throttled = throttled.clone();
            tokio::spawn(async move {
                throttled
                    .run(Duration::from_millis(20), |ns, name| {
                        let _ = tx.send(format!("{ns}/{name}"));
                    })
                    .await;
            })
        };
        for _ in 0..1000 {
            throttled.request("ns", "a");
            throttled.request("ns", "b");
        }
        assert_eq!(throttled.len(), 2);
        let mut got = vec![rx.recv().await.unwrap(), rx.recv().await.unwrap()];
        got.sort();
        assert_eq!(got, ["ns/a", "ns/b"]);
        assert!(throttled.is_empty());
        throttled.request("ns", "a");
        assert_eq!(rx.recv().await.unwrap(), "ns/a");
        assert!(rx.try_recv().is_err());
        runner.abort();
    }
}
