//! Which GitRepos get their scans' images written back, and when: a finished scan asks for its GitRepo
//! ([`WriteBacks::request`]); one task takes the requests one GitRepo at a time (requests that came in
//! meanwhile are merged) and writes back ([`commit`]) a GitRepo whose scans all succeeded and found an image, at
//! most once per its `imageScanInterval` (15m when unset) since its last try or its
//! `status.lastSyncedImageScanTime`. As in Fleet, the write-back runs on its scans' cadence and a failed scan
//! holds it back.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

use fleet_api::{GitRepo, IMAGESCAN_SCANNED, ImageScan, find_condition};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ListParams};
use tokio::sync::mpsc;

use crate::context::Context;
use crate::gitrepo::poll::is_due;
use crate::imagescan::commit;
use crate::imagescan::schedule::interval;

/// A GitRepo: namespace and name.
type RepoKey = (String, String);

/// Where finished scans ask for their GitRepo's write-back.
#[derive(Clone)]
pub struct WriteBacks(mpsc::UnboundedSender<RepoKey>);

impl WriteBacks {
    /// Starts the write-back task; it ends when the controller stops.
    pub fn start(ctx: Arc<Context>) -> (Self, tokio::task::JoinHandle<()>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (Self(sender), tokio::spawn(run(ctx, receiver)))
    }

    /// Asks for a write-back of GitRepo `name` in `namespace` if one is due.
    pub fn request(&self, namespace: &str, name: &str) {
        // The task only stops with the controller; a request after that has nothing left to do.
        let _ = self.0.send((namespace.to_string(), name.to_string()));
    }
}

async fn run(ctx: Arc<Context>, mut requests: mpsc::UnboundedReceiver<RepoKey>) {
    let mut tried: HashMap<RepoKey, Instant> = HashMap::new();
    loop {
        let first = tokio::select! {
            request = requests.recv() => match request {
                Some(request) => request,
                None => return,
            },
            () = ctx.stopped() => return,
        };
        let mut due = BTreeSet::from([first]);
        while let Ok(request) = requests.try_recv() {
            due.insert(request);
        }
        for (namespace, name) in due {
            if let Err(err) = write_back(&ctx, &namespace, &name, &mut tried).await {
                tracing::debug!(%namespace, %name, error = %err, "image scan write-back check failed");
            }
        }
    }
}

/// Writes back GitRepo `namespace/name` if it is due and its scans are ready.
async fn write_back(
    ctx: &Context,
    namespace: &str,
    name: &str,
    tried: &mut HashMap<RepoKey, Instant>,
) -> Result<(), kube::Error> {
    let repos: Api<GitRepo> = Api::namespaced(ctx.client.clone(), namespace);
    let Some(repo) = repos.get_opt(name).await? else {
        tried.remove(&(namespace.to_string(), name.to_string()));
        return Ok(());
    };
    let every = interval(repo.spec.image_scan_interval.as_deref());
    let key = (namespace.to_string(), name.to_string());
    let tried_recently = tried.get(&key).is_some_and(|at| at.elapsed() < every);
    let last_synced = repo
        .status
        .as_ref()
        .and_then(|status| status.last_synced_image_scan_time.as_ref());
    if tried_recently || !is_due(last_synced, every, Timestamp::now()) {
        return Ok(());
    }
    let scans: Api<ImageScan> = Api::namespaced(ctx.client.clone(), namespace);
    let mut scans: Vec<ImageScan> = scans
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|scan| scan.spec.gitrepo_name == name)
        .collect();
    if !ready(&scans) {
        return Ok(());
    }
    scans.sort_by(|a, b| a.spec.tag_name.cmp(&b.spec.tag_name));
    tried.insert(key, Instant::now());
    let outcome = commit::sync(ctx, &repo, &scans).await;
    if let Err(err) = &outcome {
        tracing::info!(%namespace, %name, error = %err, "image scan write-back failed");
    }
    commit::record(ctx, &repo, &outcome).await
}

/// Whether a GitRepo's scans can be written back: none failed and at least one found an image.
fn ready(scans: &[ImageScan]) -> bool {
    let failed = scans.iter().any(|scan| {
        scan.status.as_ref().is_some_and(|status| {
            find_condition(&status.conditions, IMAGESCAN_SCANNED)
                .is_some_and(|condition| condition.status == "False")
        })
    });
    let found = scans.iter().any(|scan| {
        scan.status
            .as_ref()
            .is_some_and(|status| !status.latest_image.is_empty())
    });
    !failed && found
}
