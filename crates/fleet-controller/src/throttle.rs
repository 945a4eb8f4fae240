//! Throttled reconcile requests: a burst of watch events for the same objects (thousands of
//! BundleDeployment status reports) becomes at most one reconcile request per object per interval.
//! Unlike a debounce, a steady stream of events cannot postpone the request forever: the first request
//! of a batch is delivered one interval later, with everything that arrived meanwhile.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;

use crate::context::lock;

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

    /// Delivers batches to `send`, each `interval` after its first request, until the task is dropped.
    pub async fn run(&self, interval: Duration, mut send: impl FnMut(&str, &str)) {
        loop {
            self.wake.notified().await;
            tokio::time::sleep(interval).await;
            let batch = std::mem::take(&mut *lock(&self.pending));
            for (namespace, name) in &batch {
                send(namespace, name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

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
