//! `fleet controller` as a process: started against `fleet apiserver` with Fleet's CRDs, it stops cleanly
//! (exit 0, "controller stopped") right after SIGTERM, even when the signal comes before its watches have
//! listed anything. `--stop-timeout-seconds` and the runtime's grace for blocking tasks bound the wait.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::{fleet, start_apiserver};

/// Waits for `child` to exit, killing it and failing after `limit`.
fn wait_exit(child: &mut Child, what: &str, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what} did not stop within {limit:?} of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn terminate(child: &Child) {
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill -TERM");
    assert!(sent.success());
}

#[test]
fn sigterm_stops_the_controller() {
    let temp = tempfile::tempdir().unwrap();
    let (mut hub, kubeconfig) = start_apiserver(temp.path(), &["--plain-http"]);
    install_crds(&kubeconfig);
    let mut controller = fleet()
        .args(["controller", "--no-leader-election", "--no-bootstrap"])
        .args(["--stop-timeout-seconds", "2"])
        .args(["--metrics-addr", "127.0.0.1:0"])
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--git-cache")
        .arg(temp.path().join("git"))
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start fleet controller");
    // The first log line means the runtime (and the signal handlers, installed first) is up.
    let mut logs = BufReader::new(controller.stdout.take().unwrap()).lines();
    let first = logs.next().expect("a log line").unwrap();
    assert!(first.starts_with('{'), "JSON logs: {first}");
    terminate(&controller);
    // 2 s for reconciles plus 5 s for blocking tasks, with room for a loaded machine.
    let status = wait_exit(&mut controller, "fleet controller", Duration::from_secs(30));
    let rest: Vec<String> = logs.map_while(Result::ok).collect();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut controller.stderr.take().unwrap(), &mut stderr).unwrap();
    // Signalled right after start, before its watches' first lists: nothing is in flight, so it stops at
    // once and cleanly rather than waiting out the limit.
    assert!(status.success(), "{status}: {stderr}\n{rest:?}");
    assert!(
        rest.iter().any(|line| line.contains("controller stopped")),
        "{rest:?}"
    );
    terminate(&hub);
    wait_exit(&mut hub, "fleet apiserver", Duration::from_secs(30));
}

/// Creates Fleet's CRDs on the hub of `kubeconfig`.
fn install_crds(kubeconfig: &std::path::Path) {
    use kube::api::{Api, ApiResource, DynamicObject, PostParams};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let config = kube::config::Kubeconfig::read_from(kubeconfig).unwrap();
        let config = kube::Config::from_custom_kubeconfig(config, &Default::default())
            .await
            .unwrap();
        let client = kube::Client::try_from(config).unwrap();
        let resource = ApiResource {
            group: "apiextensions.k8s.io".into(),
            version: "v1".into(),
            api_version: "apiextensions.k8s.io/v1".into(),
            kind: "CustomResourceDefinition".into(),
            plural: "customresourcedefinitions".into(),
        };
        let api: Api<DynamicObject> = Api::all_with(client, &resource);
        for crd in fleet_api::crd::crds() {
            let object: DynamicObject =
                serde_json::from_value(serde_json::to_value(&crd).unwrap()).unwrap();
            api.create(&PostParams::default(), &object).await.unwrap();
        }
    });
}
