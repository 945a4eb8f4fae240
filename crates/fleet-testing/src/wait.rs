//! Waiting on a condition in tests: poll with a deadline instead of sleeping a fixed time; waiting for an
//! object to be gone.

use std::future::Future;
use std::time::{Duration, Instant};

/// Waits up to 90 s for `check` to return `Some`, checking again every 50 ms; panics naming `what` when time runs
/// out.
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits (as [`eventually`]) until `api` answers that the object `name` does not exist; a failed read counts
/// as not yet gone.
pub async fn gone<K>(what: &str, api: &kube::Api<K>, name: &str)
where
    K: kube::Resource + Clone + k8s_openapi::serde::de::DeserializeOwned + std::fmt::Debug,
{
    eventually(what, || async {
        api.get_opt(name).await.ok()?.is_none().then_some(())
    })
    .await;
}
