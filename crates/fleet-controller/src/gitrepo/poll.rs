//! When to look at a GitRepo's remote again: its `pollingInterval` (a Go duration, default 15 s, `0` meaning
//! the default as in Fleet), 10% jitter so that many GitRepos do not poll in step, and whether a poll is due
//! now given the last one.

use std::time::Duration;

use fleet_api::GitRepo;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use rand::Rng;

/// The GitRepo's polling interval, or `default` when unset, zero or unreadable.
pub fn interval(repo: &GitRepo, default: Duration) -> Duration {
    repo.spec
        .polling_interval
        .as_deref()
        .and_then(parse_go_duration)
        .filter(|d| !d.is_zero())
        .unwrap_or(default)
}

/// `interval` plus up to 10% random extra.
pub fn jittered(interval: Duration) -> Duration {
    let extra = interval.as_secs_f64() * 0.1 * rand::rng().random::<f64>();
    interval + Duration::from_secs_f64(extra)
}

/// How long after the last poll the next one is due: the backoff delay ([`crate::retry::backoff_delay`])
/// while the remote keeps failing (`failures` in a row, also with polling disabled), otherwise `interval`,
/// or never when polling is disabled.
pub fn cadence(failures: u32, interval: Duration, disable_polling: bool) -> Option<Duration> {
    if failures > 0 {
        Some(crate::retry::backoff_delay(failures))
    } else {
        (!disable_polling).then_some(interval)
    }
}

/// Whether `interval` has passed since `last` (never polled: due).
pub fn is_due(last: Option<&Time>, interval: Duration, now: Timestamp) -> bool {
    match last {
        None => true,
        Some(Time(last)) => {
            let elapsed_ms = now.as_millisecond() - last.as_millisecond();
            elapsed_ms < 0 || elapsed_ms as u128 >= interval.as_millis()
        }
    }
}

/// Time left until the next poll is due.
pub fn remaining(last: Option<&Time>, interval: Duration, now: Timestamp) -> Duration {
    match last {
        None => Duration::ZERO,
        Some(Time(last)) => {
            let elapsed_ms = (now.as_millisecond() - last.as_millisecond()).max(0) as u64;
            interval.saturating_sub(Duration::from_millis(elapsed_ms))
        }
    }
}

/// Parses a Go duration (`300ms`, `1.5h`, `2h45m`, `0`, surrounding spaces ignored); `None` when it is not one
/// or it is negative.
pub fn parse_go_duration(text: &str) -> Option<Duration> {
    let nanos = fleet_yaml::goduration::parse_nanos(text.trim())?;
    u64::try_from(nanos).ok().map(Duration::from_nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_remote_is_polled_with_backoff_instead_of_the_interval() {
        let interval = Duration::from_secs(15);
        assert_eq!(cadence(0, interval, false), Some(interval));
        assert_eq!(cadence(0, interval, true), None);
        assert_eq!(cadence(1, interval, false), Some(Duration::from_secs(1)));
        assert_eq!(cadence(5, interval, true), Some(Duration::from_secs(16)));
        assert_eq!(
            cadence(30, interval, false),
            Some(crate::retry::BACKOFF_MAX)
        );
    }

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("15s"), Some(Duration::from_secs(15)));
        assert_eq!(parse_go_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_go_duration("1.5m"), Some(Duration::from_secs(90)));
        assert_eq!(parse_go_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_go_duration("0"), Some(Duration::ZERO));
        for bad in ["", "15", "s", "1d", "-1s", "1h x"] {
            assert_eq!(parse_go_duration(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn interval_defaults_and_due() {
        let mut repo = GitRepo::new("r", Default::default());
        let default = Duration::from_secs(15);
        assert_eq!(interval(&repo, default), default);
        repo.spec.polling_interval = Some("0".into());
        assert_eq!(interval(&repo, default), default);
        repo.spec.polling_interval = Some("1m".into());
        assert_eq!(interval(&repo, default), Duration::from_secs(60));
        let j = jittered(Duration::from_secs(60));
        assert!(j >= Duration::from_secs(60) && j <= Duration::from_secs(66));
        let now = Timestamp::from_second(1_000).unwrap();
        let last = Time(Timestamp::from_second(950).unwrap());
        assert!(!is_due(Some(&last), Duration::from_secs(60), now));
        assert_eq!(
            remaining(Some(&last), Duration::from_secs(60), now),
            Duration::from_secs(10)
        );
        assert!(is_due(Some(&last), Duration::from_secs(50), now));
        assert!(is_due(None, Duration::from_secs(50), now));
    }
}
