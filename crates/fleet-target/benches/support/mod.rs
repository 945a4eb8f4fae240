//! Helpers shared by the benchmarks.

/// CPU time of this thread in nanoseconds (Linux), so figures stay meaningful on a busy machine.
pub fn cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
