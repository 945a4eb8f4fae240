//! `fleet apiserver` as a process, driven by the real `kubectl` through the kubeconfig it writes: over HTTPS
//! with the generated CA and admin token, and over `--plain-http` on loopback, where kubectl sends no token.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn kubectl() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/bin/kubectl");
    assert!(
        path.is_file(),
        "{} is missing: run scripts/install-tools.sh (make test does)",
        path.display()
    );
    path
}

/// Starts `fleet apiserver` with `extra` flags and waits for its kubeconfig.
fn start(dir: &Path, extra: &[&str]) -> (Child, PathBuf) {
    let kubeconfig = dir.join("kubeconfig");
    let server = Command::new(env!("CARGO_BIN_EXE_fleet"))
        .args(["apiserver", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.join("data"))
        .arg("--kubeconfig-out")
        .arg(&kubeconfig)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start fleet apiserver");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !kubeconfig.is_file() {
        assert!(Instant::now() < deadline, "no kubeconfig written");
        std::thread::sleep(Duration::from_millis(50));
    }
    (server, kubeconfig)
}

/// Runs kubectl against `kubeconfig` and returns its stdout, failing on a non-zero exit.
fn run_kubectl(kubeconfig: &Path, args: &[&str]) -> String {
    let output = Command::new(kubectl())
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .expect("run kubectl");
    assert!(
        output.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn kubectl_creates_and_reads(extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, kubeconfig) = start(dir.path(), extra);
    run_kubectl(
        &kubeconfig,
        &["create", "configmap", "probe", "--from-literal=k=v"],
    );
    let value = run_kubectl(
        &kubeconfig,
        &["get", "configmap", "probe", "-o", "jsonpath={.data.k}"],
    );
    server.kill().unwrap();
    server.wait().unwrap();
    assert_eq!(value, "v");
}

#[test]
fn kubectl_works_over_https() {
    kubectl_creates_and_reads(&[]);
}

#[test]
fn kubectl_works_over_plain_http_on_loopback() {
    kubectl_creates_and_reads(&["--plain-http"]);
}
