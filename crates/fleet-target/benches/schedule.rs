//! Placeholder until the scheduler lands: prints nothing useful yet.
fn main() {}
