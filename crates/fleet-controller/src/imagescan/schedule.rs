//! When an ImageScan is scanned, decided from the object alone: never while `spec.suspend` is true; at once when
//! it has no tag yet or its spec changed since the last scan (`status.observedGeneration`); otherwise once
//! `spec.interval` (a Go duration, 15m when unset or `0`, as Fleet's `DefaultImageInterval`) has passed since
//! `status.lastScanTime`, which Fleet's `shouldScan` also checks, so a restarted controller does not scan again
//! what was scanned within the interval.

use std::time::Duration;

use fleet_api::ImageScan;
use k8s_openapi::jiff::Timestamp;
use kube::Resource;

use crate::gitrepo::poll::{is_due, parse_go_duration, remaining};

/// Fleet's default for both a scan's `interval` and a GitRepo's `imageScanInterval`.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(15 * 60);

/// A Go duration field; unset, `0` or unreadable is the default.
pub fn interval(text: Option<&str>) -> Duration {
    text.and_then(parse_go_duration)
        .filter(|d| !d.is_zero())
        .unwrap_or(DEFAULT_INTERVAL)
}

/// The scan's interval.
pub fn scan_interval(scan: &ImageScan) -> Duration {
    interval(Some(scan.spec.interval.as_str()))
}

/// What to do with an ImageScan now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Suspended: no scan until its spec changes.
    Suspended,
    /// Scan it now.
    Now,
    /// Its next scan is due after this long.
    After(Duration),
}

/// When `scan` is scanned next, at `now`.
pub fn next_scan(scan: &ImageScan, now: Timestamp) -> Next {
    if scan.spec.suspend {
        return Next::Suspended;
    }
    let Some(status) = &scan.status else {
        return Next::Now;
    };
    let generation = scan.meta().generation.unwrap_or_default();
    if status.latest_tag.is_empty() || status.observed_generation != generation {
        return Next::Now;
    }
    let every = scan_interval(scan);
    let last = status.last_scan_time.as_ref();
    if is_due(last, every, now) {
        Next::Now
    } else {
        Next::After(remaining(last, every, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_api::{ImageScanSpec, ImageScanStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn scanned(interval: &str, generation: i64, at: i64, observed: i64) -> ImageScan {
        let mut scan = ImageScan::new(
            "app",
            ImageScanSpec {
                interval: interval.into(),
                ..Default::default()
            },
        );
        scan.metadata.generation = Some(generation);
        scan.status = Some(ImageScanStatus {
            latest_tag: "1.0.0".into(),
            observed_generation: observed,
            last_scan_time: Some(Time(Timestamp::from_second(at).unwrap())),
            ..Default::default()
        });
        scan
    }

    #[test]
    fn intervals_default_to_fifteen_minutes() {
        assert_eq!(interval(None), DEFAULT_INTERVAL);
        assert_eq!(interval(Some("")), DEFAULT_INTERVAL);
        assert_eq!(interval(Some("0s")), DEFAULT_INTERVAL);
        assert_eq!(interval(Some("every minute")), DEFAULT_INTERVAL);
        assert_eq!(interval(Some("90s")), Duration::from_secs(90));
    }

    #[test]
    fn a_scan_waits_for_its_interval_unless_new_or_changed() {
        let now = Timestamp::from_second(10_000).unwrap();
        // Scanned 100 s ago, every 5 minutes: 200 s to go.
        let scan = scanned("5m", 1, 9_900, 1);
        assert_eq!(next_scan(&scan, now), Next::After(Duration::from_secs(200)));
        // Due once the interval has passed.
        assert_eq!(next_scan(&scanned("1m", 1, 9_900, 1), now), Next::Now);
        // The default interval when unset.
        assert_eq!(
            next_scan(&scanned("0s", 1, 9_900, 1), now),
            Next::After(DEFAULT_INTERVAL - Duration::from_secs(100))
        );
        // A changed spec, a scan that never found a tag, one never scanned: now.
        assert_eq!(next_scan(&scanned("5m", 2, 9_900, 1), now), Next::Now);
        let mut failed = scan.clone();
        failed.status.as_mut().unwrap().latest_tag.clear();
        assert_eq!(next_scan(&failed, now), Next::Now);
        let mut new = scan.clone();
        new.status = None;
        assert_eq!(next_scan(&new, now), Next::Now);
        // Suspended: never, whatever its status.
        for mut suspended in [scan, failed, new] {
            suspended.spec.suspend = true;
            assert_eq!(next_scan(&suspended, now), Next::Suspended);
        }
    }
}
