//! Image scans (Fleet's experimental ImageScan): ImageScans come from fleet.yaml's `imageScans` ([`objects`])
//! or are created by hand. A controller watches them and keeps one timer per ImageScan: it is scanned when it
//! appears or its spec changes, then every `spec.interval` (15m by default), and not while suspended
//! ([`schedule`]); a deleted ImageScan's timer ends with it. A scan finds the newest tag of the registry by its
//! policy ([`scan`], [`policy`]); afterwards its GitRepo's scans get their images written into the GitRepo's
//! files' markers ([`markers`]), committed and pushed to its branch at most every `imageScanInterval` (15m by
//! default) ([`writeback`], [`commit`]). Scans that failed hold back their GitRepo's write-back, as in Fleet.

pub mod commit;
pub mod markers;
pub mod objects;
pub mod policy;
pub mod scan;
pub mod schedule;
pub mod writeback;

use std::sync::Arc;

use fleet_api::ImageScan;
use fleet_chart_source::ImageRegistry;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::runtime::controller::Action;

use crate::context::Context;
use crate::error::Error;
use crate::gitrepo::poll::jittered;
use crate::imagescan::schedule::{Next, next_scan, scan_interval};
use crate::imagescan::writeback::WriteBacks;

/// What the ImageScan reconcile shares: the registry client and the write-back requests.
#[derive(Clone)]
pub struct Scanner {
    registry: Arc<ImageRegistry>,
    write_backs: WriteBacks,
}

impl Scanner {
    /// A scanner whose finished scans ask `write_backs` for their GitRepo.
    pub fn new(write_backs: WriteBacks) -> Self {
        Self {
            registry: Arc::new(ImageRegistry::new()),
            write_backs,
        }
    }
}

/// Scans `scan` if it is due ([`schedule::next_scan`]) and writes its status; then asks for its GitRepo's
/// write-back. Requeued for its next scan (with the GitRepo poller's 10% jitter), or not at all while
/// suspended.
pub async fn reconcile(
    scan: Arc<ImageScan>,
    ctx: Arc<Context>,
    scanner: Scanner,
) -> Result<Action, Error> {
    match next_scan(&scan, Timestamp::now()) {
        Next::Suspended => return Ok(Action::await_change()),
        Next::After(wait) => return Ok(Action::requeue(jittered(wait))),
        Next::Now => {}
    }
    let status = scan::scan(&ctx, &scanner.registry, &scan).await;
    if Some(&status) != scan.status.as_ref() {
        scan::write_status(&ctx, &scan, &status).await?;
    }
    if !scan.spec.gitrepo_name.is_empty() {
        scanner.write_backs.request(
            &scan.namespace().unwrap_or_default(),
            &scan.spec.gitrepo_name,
        );
    }
    Ok(Action::requeue(jittered(scan_interval(&scan))))
}
