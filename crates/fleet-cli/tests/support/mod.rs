//! Shared pieces of the tests that run the real `fleet` binary as processes: starting `fleet apiserver` and
//! waiting for the kubeconfig it writes.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The `fleet` binary built for these tests.
pub fn fleet() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fleet"))
}

/// Starts `fleet apiserver` on a free loopback port with `extra` flags, writing its kubeconfig into `dir`, and
/// returns the process and the kubeconfig's path once it is written.
pub fn start_apiserver(dir: &Path, extra: &[&str]) -> (Child, PathBuf) {
    let kubeconfig = dir.join("kubeconfig");
    let server = fleet()
        .args(["apiserver", "--listen", "127.0.0.1:0", "--kubeconfig-out"])
        .arg(&kubeconfig)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start fleet apiserver");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !kubeconfig.is_file() {
        assert!(
            Instant::now() < deadline,
            "fleet apiserver wrote no kubeconfig"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (server, kubeconfig)
}
