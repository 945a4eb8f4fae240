//! How to run a server: [`Config`].

use std::path::PathBuf;

/// How to run a server.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the journal lives; `None` keeps everything in memory.
    pub data_dir: Option<PathBuf>,
    /// How many watch events are kept for resuming watches (older resourceVersions get 410 Expired).
    pub watch_history: usize,
    /// Require a bearer token on every request (otherwise anonymous requests act as the admin).
    pub require_auth: bool,
    /// The admin bearer token; generated when `None` and authentication is required.
    pub admin_token: Option<String>,
    /// How often watches with `allowWatchBookmarks` get a BOOKMARK when idle.
    pub bookmark_interval: std::time::Duration,
    /// PEM of the CA clients trust (put into ServiceAccount token Secrets as `ca.crt`).
    pub ca_pem: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            data_dir: None,
            watch_history: 10_000,
            require_auth: false,
            admin_token: None,
            bookmark_interval: std::time::Duration::from_secs(10),
            ca_pem: None,
        }
    }
}
