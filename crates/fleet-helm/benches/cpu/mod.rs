//! CPU time from the kernel's accounting of this process (`/proc/self/stat`), for the benches: 10 ms ticks, so
//! only sums over many runs mean anything.

use std::time::Duration;

/// Two adjacent tick counters of `/proc/self/stat`, counted after the command name, added up.
fn ticks(first: usize) -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 =
        fields.get(first)?.parse::<u64>().ok()? + fields.get(first + 1)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// This process's CPU time so far, all threads (`utime + stime`).
pub fn own() -> Option<Duration> {
    ticks(11)
}

/// CPU time of this process's waited-for children so far (`cutime + cstime`).
pub fn children() -> Option<Duration> {
    ticks(13)
}
