//! Image scans (Fleet's experimental ImageScan): ImageScans come from fleet.yaml's `imageScans` ([`objects`])
//! or are created by hand; a loop scans each one's registry every `interval` (15m by default) for the newest
//! tag by its policy ([`scan`], [`policy`]), and every GitRepo with scans gets their images written into its
//! files' markers ([`markers`]), committed and pushed to its branch at most every `imageScanInterval` (15m by
//! default) ([`commit`]). Scans that failed hold back their GitRepo's write-back, as in Fleet.

pub mod commit;
pub mod markers;
pub mod objects;
pub mod policy;
pub mod scan;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fleet_api::{GitRepo, IMAGESCAN_SCANNED, ImageScan, find_condition};
use fleet_chart_source::ImageRegistry;
use kube::api::{Api, ListParams};
use kube::{Resource, ResourceExt};

use crate::context::Context;
use crate::gitrepo::poll::parse_go_duration;

/// Fleet's default for both a scan's `interval` and a GitRepo's `imageScanInterval`.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(15 * 60);
/// How often the loop looks for scans and write-backs that are due.
const TICK: Duration = Duration::from_secs(2);

/// A Go duration field; unset, `0` or unreadable is the default.
fn interval(text: Option<&str>) -> Duration {
    text.and_then(parse_go_duration)
        .filter(|d| !d.is_zero())
        .unwrap_or(DEFAULT_INTERVAL)
}

/// Whether `last` (an RFC 3339 time) is at least `interval` ago, or absent.
fn elapsed_since(
    last: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
    interval: Duration,
) -> bool {
    let Some(last) = last else { return true };
    let now = k8s_openapi::jiff::Timestamp::now();
    let since = now.duration_since(last.0);
    since.as_secs_f64() >= interval.as_secs_f64()
}

/// Runs the scans and write-backs until the controller stops.
pub async fn run(ctx: Arc<Context>) {
    let registry = ImageRegistry::new();
    let mut loop_state = LoopState::default();
    loop {
        tokio::select! {
            () = tokio::time::sleep(TICK) => {}
            () = ctx.stopped() => return,
        }
        if let Err(err) = round(&ctx, &registry, &mut loop_state).await {
            tracing::debug!(error = %err, "image scan round failed");
        }
    }
}

/// What the loop remembers between rounds: when each scan and each GitRepo's write-back was last tried.
#[derive(Default)]
struct LoopState {
    scanned: HashMap<String, (Instant, i64)>,
    synced: HashMap<String, Instant>,
}

async fn round(
    ctx: &Context,
    registry: &ImageRegistry,
    state: &mut LoopState,
) -> Result<(), kube::Error> {
    let api: Api<ImageScan> = Api::all(ctx.client.clone());
    let mut scans = api.list(&ListParams::default()).await?.items;
    for scan in &mut scans {
        if scan.spec.suspend {
            continue;
        }
        let key = format!(
            "{}/{}",
            scan.namespace().unwrap_or_default(),
            scan.name_any()
        );
        let every = interval(Some(scan.spec.interval.as_str()));
        let generation = scan.meta().generation.unwrap_or_default();
        let due = match state.scanned.get(&key) {
            // A changed spec is scanned at once; otherwise once per interval.
            Some((at, seen)) => *seen != generation || at.elapsed() >= every,
            // First seen (e.g. after a restart): as Fleet's shouldScan, unless scanned within the interval.
            None => {
                let status = scan.status.clone().unwrap_or_default();
                status.latest_tag.is_empty()
                    || status.observed_generation != generation
                    || elapsed_since(status.last_scan_time.as_ref(), every)
            }
        };
        if !due {
            continue;
        }
        state.scanned.insert(key, (Instant::now(), generation));
        let status = scan::scan(ctx, registry, scan).await;
        if Some(&status) != scan.status.as_ref() {
            scan::write_status(ctx, scan, &status).await?;
        }
        scan.status = Some(status);
    }
    let mut by_repo: BTreeMap<(String, String), Vec<ImageScan>> = BTreeMap::new();
    for scan in scans {
        if scan.spec.gitrepo_name.is_empty() {
            continue;
        }
        by_repo
            .entry((
                scan.namespace().unwrap_or_default(),
                scan.spec.gitrepo_name.clone(),
            ))
            .or_default()
            .push(scan);
    }
    for ((namespace, name), mut scans) in by_repo {
        scans.sort_by(|a, b| a.spec.tag_name.cmp(&b.spec.tag_name));
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
        if failed || !found {
            continue;
        }
        let repos: Api<GitRepo> = Api::namespaced(ctx.client.clone(), &namespace);
        let Some(repo) = repos.get_opt(&name).await? else {
            continue;
        };
        let every = interval(repo.spec.image_scan_interval.as_deref());
        let key = format!("{namespace}/{name}");
        let tried_recently = state
            .synced
            .get(&key)
            .is_some_and(|at| at.elapsed() < every);
        let synced_recently = !elapsed_since(
            repo.status
                .as_ref()
                .and_then(|status| status.last_synced_image_scan_time.as_ref()),
            every,
        );
        if tried_recently || synced_recently {
            continue;
        }
        state.synced.insert(key, Instant::now());
        let outcome = commit::sync(ctx, &repo, &scans).await;
        if let Err(err) = &outcome {
            tracing::info!(%namespace, %name, error = %err, "image scan write-back failed");
        }
        commit::record(ctx, &repo, &outcome).await?;
    }
    Ok(())
}
