//! The live view until Ctrl-C: on a terminal, the [`FleetState`] table redrawn whenever it changes; when
//! not a terminal, one line per object whose state changed. Woken by watches on the hub's GitRepos,
//! Bundles and Clusters (and once a second, so "last seen" ages move). With a
//! readiness deadline it also ends once everything is deployed, or when the deadline passes.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use fleet_api::{Bundle, Cluster, GitRepo};
use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use kube::api::Api;
use kube::runtime::watcher;
use tokio::sync::mpsc;

use crate::dev::Dev;
use crate::error::Result;
use crate::ready::{Readiness, readiness};
use crate::task::Task;
use crate::view::FleetState;

/// How the view ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The shutdown future resolved (Ctrl-C).
    Interrupted,
    /// Everything was deployed (only with a readiness deadline).
    Ready,
    /// The readiness deadline passed; what was still awaited.
    TimedOut(Vec<String>),
}

/// Shows the view on `out` (a terminal's table ends with `footer`) until `shutdown` resolves or, with `exit_when_ready`, everything is deployed or
/// the deadline passes.
pub async fn run(
    dev: &Dev,
    out: &mut (dyn Write + Send),
    terminal: bool,
    footer: &str,
    exit_when_ready: Option<Duration>,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<Outcome> {
    let (wake, mut woken) = mpsc::unbounded_channel::<()>();
    let _watches = watch_changes(dev.hub_client(), wake);
    let deadline = exit_when_ready.map(|t| tokio::time::Instant::now() + t);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut shown_table = String::new();
    let mut shown_lines: BTreeMap<String, String> = BTreeMap::new();
    tokio::pin!(shutdown);
    loop {
        let state = dev.state().await?;
        let now = Timestamp::now();
        if terminal {
            let table = state.table(now);
            if table != shown_table {
                // Clear the screen and home the cursor, then draw.
                let _ = write!(out, "\x1b[2J\x1b[H{table}{footer}");
                let _ = out.flush();
                shown_table = table;
            }
        } else {
            let lines = state.lines(now);
            for (id, line) in &lines {
                if shown_lines.get(id) != Some(line) {
                    let _ = writeln!(out, "{line}");
                }
            }
            for id in shown_lines.keys().filter(|id| !lines.contains_key(*id)) {
                let _ = writeln!(out, "{id}: deleted");
            }
            let _ = out.flush();
            shown_lines = lines;
        }
        if let Some(deadline) = deadline {
            match readiness(&state, &dev.expected_clusters()) {
                Readiness::Ready => return Ok(Outcome::Ready),
                Readiness::Waiting(reasons) if tokio::time::Instant::now() >= deadline => {
                    return Ok(Outcome::TimedOut(reasons));
                }
                Readiness::Waiting(_) => {}
            }
        }
        tokio::select! {
            () = &mut shutdown => return Ok(Outcome::Interrupted),
            _ = woken.recv() => {
                // Let a burst of events settle into one redraw.
                tokio::time::sleep(Duration::from_millis(100)).await;
                while woken.try_recv().is_ok() {}
            }
            _ = tick.tick() => {}
        }
    }
}

/// Watches the three kinds on the hub and sends a wake-up for every change.
fn watch_changes(hub: kube::Client, wake: mpsc::UnboundedSender<()>) -> Task {
    Task::spawn(async move {
        let gitrepos = watcher(Api::<GitRepo>::all(hub.clone()), watcher::Config::default())
            .map(|_| ())
            .boxed();
        let bundles = watcher(Api::<Bundle>::all(hub.clone()), watcher::Config::default())
            .map(|_| ())
            .boxed();
        let clusters = watcher(Api::<Cluster>::all(hub), watcher::Config::default())
            .map(|_| ())
            .boxed();
        let mut all = futures::stream::select_all([gitrepos, bundles, clusters]);
        while all.next().await.is_some() {
            if wake.send(()).is_err() {
                return;
            }
        }
    })
}

/// `state` as the view would print it (for callers that print once).
pub fn render(state: &FleetState, terminal: bool) -> String {
    let now = Timestamp::now();
    if terminal {
        state.table(now)
    } else {
        state.lines(now).into_values().map(|l| l + "\n").collect()
    }
}
