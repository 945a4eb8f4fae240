//! Commit-to-applied latency in dev mode (filled in below).

fn main() {}
