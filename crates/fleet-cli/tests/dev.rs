//! The real `fleet` binary in dev mode on the README's example: `fleet dev --clusters 3 --repo
//! examples/gitrepos/multi-cluster --exit-when-ready` must exit 0 with the example Ready on every cluster,
//! print the kubectl commands, and leave kubeconfigs in the data dir; a foreign data dir is refused.

use std::path::Path;
use std::process::Command;

fn fleet() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fleet"))
}

fn example() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/gitrepos/multi-cluster")
}

#[test]
fn dev_mode_deploys_the_readme_example_to_every_cluster() {
    let temp = tempfile::tempdir().unwrap();
    let data_dir = temp.path().join("state");
    let output = fleet()
        .args(["dev", "--clusters", "3", "--repo"])
        .arg(example())
        .arg("--data-dir")
        .arg(&data_dir)
        .arg("--exit-when-ready=150s")
        .output()
        .expect("run fleet dev");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stdout.contains("every GitRepo is Ready on every cluster it targets"),
        "{stdout}"
    );
    let hub = data_dir.canonicalize().unwrap().join("hub.kubeconfig");
    assert!(
        stdout.contains(&format!(
            "kubectl --kubeconfig {} get gitrepos,bundles,clusters -A",
            hub.display()
        )),
        "{stdout}"
    );
    for n in 1..=3 {
        assert!(data_dir.join(format!("cluster-{n}.kubeconfig")).is_file());
    }
    // Not a terminal: one line per change, ending with the GitRepo Ready on its three clusters.
    assert!(
        stdout.lines().any(|l| l
            .starts_with("gitrepo fleet-default/multi-cluster: 3/3 clusters ready")
            && l.ends_with("Ready")),
        "{stdout}"
    );
}

#[test]
fn a_data_dir_not_made_by_dev_mode_is_refused() {
    let temp = tempfile::tempdir().unwrap();
    std::fs::write(temp.path().join("notes.txt"), "mine").unwrap();
    let output = fleet()
        .args(["dev", "--clusters", "1", "--data-dir"])
        .arg(temp.path())
        .arg("--exit-when-ready=5s")
        .output()
        .expect("run fleet dev");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("was not made by fleet dev"), "{stderr}");
    assert!(temp.path().join("notes.txt").is_file());
}

#[test]
fn ctrl_c_stops_dev_mode_cleanly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let temp = tempfile::tempdir().unwrap();
    let mut child = fleet()
        .args(["dev", "--clusters", "1", "--data-dir"])
        .arg(temp.path().join("state"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start fleet dev");
    // Wait until the view shows the registered cluster, then interrupt as Ctrl-C does.
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut seen = Vec::new();
    for line in stdout.lines() {
        let line = line.unwrap();
        let done =
            line.starts_with("cluster fleet-default/cluster-1 ") && line.ends_with("agent seen");
        seen.push(line);
        if done {
            break;
        }
    }
    assert!(
        seen.last().is_some_and(|l| l.ends_with("agent seen")),
        "{seen:?}"
    );
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(interrupted.success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("fleet dev did not stop within 60 s of SIGINT");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("stopping agents, controller and servers"),
        "{stderr}"
    );
}
