//! Log output of the long-running commands (`fleet controller`, `fleet agent`): tracing events filtered by
//! `RUST_LOG` (default `info`), written to stdout as JSON lines (`--log-format json`, the default) or as
//! human-readable text (`--log-format text`).

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One JSON object per line (timestamp, level, target, fields).
    Json,
    /// Human-readable lines.
    Text,
}

/// Installs the process's tracing subscriber.
pub fn init(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.init(),
    }
}
