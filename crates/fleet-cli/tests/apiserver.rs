//! `fleet apiserver` as a process, driven by the real `kubectl` through the kubeconfig it writes: over HTTPS
//! with the generated CA and admin token, and over `--plain-http` on loopback, where kubectl sends no token.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::start_apiserver;

fn kubectl() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/bin/kubectl");
    assert!(
        path.is_file(),
        "{} is missing: run scripts/install-tools.sh (make test does)",
        path.display()
    );
    path
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
    let data = dir.path().join("data");
    let mut flags = vec!["--data-dir", data.to_str().unwrap()];
    flags.extend_from_slice(extra);
    let (mut server, kubeconfig) = start_apiserver(dir.path(), &flags);
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
