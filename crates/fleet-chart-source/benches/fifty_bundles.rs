//! Reads a repository of 50 bundles that all name one chart in a Helm repository (the HTTPS chart repository
//! server of the tests, with basic auth and a private CA) and the same 50 bundles with the chart vendored, and
//! prints both times, their ratio (target: remote under 2× vendored) and the downloads per read (must be 1: one
//! download per chart version however many bundles use it).
//!
//! Each remote read uses a new [`ChartSource`] (an empty archive cache, as after a controller restart) and a new
//! read session (the repository's `index.yaml` fetched once); a warm read (the archive cached from an earlier
//! commit) and a read of the same bundles naming the chart by its archive URL are printed too.

#[path = "../tests/servers/mod.rs"]
mod servers;

use std::path::Path;
use std::time::{Duration, Instant};

use fleet_bundle::ReadOptions;
use fleet_bundle::read::read_bundles_with_charts;
use fleet_bundle::remote::ChartFetcher;
use fleet_bundle::tree::LocalTree;
use fleet_chart_source::{ChartSource, Credentials};
use servers::{ChartRepo, helm, index, repo_root, run};

const BUNDLES: usize = 50;
const ROUNDS: usize = 7;

/// A repository of `BUNDLES` bundles whose fleet.yaml `helm` section is `helm` (plus per-bundle values);
/// `vendored` copies the chart into every bundle directory.
fn repository(root: &Path, helm_section: &str, vendored: Option<&Path>) {
    for b in 0..BUNDLES {
        let dir = root.join(format!("apps/app-{b:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("fleet.yaml"),
            format!(
                "defaultNamespace: app-{b}\nhelm:\n{helm_section}  releaseName: app-{b}\n  values:\n    replicas: {}\n",
                1 + b % 3
            ),
        )
        .unwrap();
        if let Some(chart) = vendored {
            fleet_testing::copy_dir(chart, &dir.join("guestbook"));
        }
    }
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn read(root: &Path, fetcher: &dyn ChartFetcher) -> usize {
    let options = ReadOptions {
        repo_name: "fifty".into(),
        ..ReadOptions::default()
    };
    let bundles = read_bundles_with_charts(
        &LocalTree::new(root),
        &[],
        &options,
        fetcher,
        &mut |_, _| {},
    )
    .unwrap_or_else(|err| panic!("{}: {err}", root.display()));
    assert_eq!(bundles.len(), BUNDLES);
    bundles.len()
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn main() {
    let home = tempfile::tempdir().unwrap();
    let chart = repo_root().join("crates/fleet-chart-source/tests/fixtures/guestbook");
    let served = home.path().join("served");
    run(helm(home.path())
        .arg("package")
        .arg(&chart)
        .arg("-d")
        .arg(&served));
    index(home.path(), &served);
    let server = ChartRepo::start(&served);
    let credentials = Credentials {
        default: server.auth(),
        url_regex: regex_escape(&server.url()),
        ..Default::default()
    };

    let remote = home.path().join("remote");
    repository(
        &remote,
        &format!(
            "  repo: {}\n  chart: guestbook\n  version: 0.0.1\n",
            server.url()
        ),
        None,
    );
    let by_url = home.path().join("by-url");
    repository(
        &by_url,
        &format!("  chart: {}/guestbook-0.0.1.tgz\n", server.url()),
        None,
    );
    let vendored = home.path().join("vendored");
    repository(&vendored, "  chart: ./guestbook\n", Some(&chart));

    let offline = ChartSource::new();
    let mut vendored_times = Vec::new();
    let mut cold_times = Vec::new();
    let mut warm_times = Vec::new();
    let mut url_times = Vec::new();
    let mut url_downloads = Vec::new();
    let mut downloads = Vec::new();
    let mut indexes = Vec::new();
    for _ in 0..ROUNDS {
        let session = offline.session(Credentials::default());
        let start = Instant::now();
        read(&vendored, &session.for_path("apps"));
        vendored_times.push(start.elapsed());

        let source = ChartSource::new();
        let session = source.session(credentials.clone());
        let start = Instant::now();
        read(&remote, &session.for_path("apps"));
        cold_times.push(start.elapsed());
        downloads.push(source.stats().downloads);
        indexes.push(source.stats().indexes);

        let session = source.session(credentials.clone());
        let start = Instant::now();
        read(&remote, &session.for_path("apps"));
        warm_times.push(start.elapsed());

        let source = ChartSource::new();
        let session = source.session(credentials.clone());
        let start = Instant::now();
        read(&by_url, &session.for_path("apps"));
        url_times.push(start.elapsed());
        url_downloads.push(source.stats().downloads);
    }
    assert_eq!(
        offline.stats().downloads,
        0,
        "the vendored chart is read from the tree"
    );
    let (vendored_ms, cold_ms, warm_ms, url_ms) = (
        ms(median(vendored_times)),
        ms(median(cold_times)),
        ms(median(warm_times)),
        ms(median(url_times)),
    );
    println!("{BUNDLES} bundles using one chart, median of {ROUNDS} reads:");
    println!("  chart vendored in every bundle:       {vendored_ms:8.1} ms");
    println!(
        "  chart from a Helm repository (cold):  {cold_ms:8.1} ms  (downloads per read: {:?}, index fetches per read: {:?})",
        downloads, indexes
    );
    println!(
        "  chart from a Helm repository (warm):  {warm_ms:8.1} ms  (archive cached by digest)"
    );
    println!(
        "  chart by archive URL (cold):          {url_ms:8.1} ms  (downloads per read: {url_downloads:?})"
    );
    println!(
        "  ratio remote/vendored: cold {:.2}, warm {:.2}, URL {:.2} (target < 2)",
        cold_ms / vendored_ms,
        warm_ms / vendored_ms,
        url_ms / vendored_ms
    );
    assert!(
        downloads.iter().chain(&url_downloads).all(|&d| d == 1),
        "one download per chart however many bundles use it: {downloads:?} {url_downloads:?}"
    );
}

/// `text` as a regex that matches it literally.
fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if "\\.+*?()|[]{}^$".contains(c) {
                vec!['\\', c]
            } else {
                vec![c]
            }
        })
        .collect()
}
