//! Install, register and uninstall exactly as a user does on real clusters, with the real `helm` and
//! `kubectl` (`.tools/bin`, from `scripts/install-tools.sh`) against two `fleet apiserver` processes, a hub
//! and a downstream cluster, with RBAC enforced:
//!
//! 1. `helm install` of charts/fleet-crd and charts/fleet into the hub (admin credentials end here);
//! 2. the controller and the local agent run as `fleet` processes with the arguments of the charts'
//!    Deployments and only the tokens of the charts' ServiceAccounts (`kubectl create token`); this test plays
//!    the kubelet: it starts and stops those processes as the Deployments say;
//! 3. a ClusterRegistrationToken's values Secret installs charts/fleet-agent into the downstream server with
//!    `helm install -f values.yaml`; the downstream agent registers from it;
//! 4. a GitRepo of a local git repository is deployed downstream; both clusters stay Healthy over several
//!    check-in intervals (the charts' `agentCheckinInterval`, shortened by configuration);
//! 5. `helm uninstall` of all charts (the fleet chart's pre-delete Job run as the kubelet would) leaves
//!    nothing Terminating.
//!
//! Any 401 or 403 in a component's log fails the test.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::Value;

const SYSTEM_NS: &str = "cattle-fleet-system";
const LOCAL_AGENT_NS: &str = "cattle-fleet-local-system";
/// The check-in interval both charts get; the controller's heartbeat timeout is three of them.
const CHECKIN: &str = "2s";
const CHECKIN_SECONDS: u64 = 2;
const LIMIT: Duration = Duration::from_secs(120);

fn tool(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../.tools/bin")
        .join(name);
    assert!(
        path.is_file(),
        "{} not found: run scripts/install-tools.sh (make tools)",
        path.display()
    );
    path
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(command: &mut Command, what: &str) -> String {
    let Output {
        status,
        stdout,
        stderr,
    } = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        status.success(),
        "{what} failed ({status}):\n{}\n{}",
        String::from_utf8_lossy(&stdout),
        String::from_utf8_lossy(&stderr)
    );
    String::from_utf8_lossy(&stdout).into_owned()
}

/// One cluster: a `fleet apiserver` process and its admin kubeconfig.
struct Server {
    process: Child,
    admin: PathBuf,
    url: String,
    ca_pem: String,
}

impl Server {
    fn start(dir: &Path) -> Server {
        std::fs::create_dir_all(dir).unwrap();
        let (process, admin) = support::start_apiserver(dir, &[]);
        let view = |path: &str| {
            run(
                Command::new(tool("kubectl"))
                    .args(["config", "view", "--raw", "--minify", "-o"])
                    .arg(format!("jsonpath={{.clusters[0].cluster.{path}}}"))
                    .arg("--kubeconfig")
                    .arg(&admin),
                "kubectl config view",
            )
        };
        let url = view("server");
        let ca = view("certificate-authority-data");
        let ca_pem = String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(ca)
                .unwrap(),
        )
        .unwrap();
        assert!(url.starts_with("https://"), "the hub serves HTTPS: {url}");
        Server {
            process,
            admin,
            url,
            ca_pem,
        }
    }

    fn kubectl(&self, args: &[&str]) -> String {
        run(
            Command::new(tool("kubectl"))
                .arg("--kubeconfig")
                .arg(&self.admin)
                .args(args),
            &format!("kubectl {}", args.join(" ")),
        )
    }

    fn kubectl_ok(&self, args: &[&str]) -> Option<String> {
        let out = Command::new(tool("kubectl"))
            .arg("--kubeconfig")
            .arg(&self.admin)
            .args(args)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn json(&self, args: &[&str]) -> Option<Value> {
        let mut all = args.to_vec();
        all.extend(["-o", "json"]);
        self.kubectl_ok(&all)
            .and_then(|text| serde_json::from_str(&text).ok())
    }

    fn helm(&self, args: &[&str]) -> String {
        run(
            Command::new(tool("helm"))
                .arg("--kubeconfig")
                .arg(&self.admin)
                .args(args),
            &format!("helm {}", args.join(" ")),
        )
    }

    /// A kubeconfig holding only a fresh token of the ServiceAccount `namespace/name`.
    fn service_account_kubeconfig(&self, dir: &Path, namespace: &str, name: &str) -> PathBuf {
        let token = self.kubectl(&["create", "token", name, "-n", namespace, "--duration=2h"]);
        let path = dir.join(format!("{namespace}-{name}.kubeconfig"));
        let ca = base64::engine::general_purpose::STANDARD.encode(&self.ca_pem);
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority-data: {ca}\nusers:\n- name: u\n  user:\n    token: {}\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n    namespace: {namespace}\ncurrent-context: c\n",
                self.url,
                token.trim()
            ),
        )
        .unwrap();
        path
    }

    /// The container args of a Deployment, as the kubelet would pass them (env references resolved, ports on
    /// free loopback ports, volumes in `dir`).
    fn deployment_args(&self, namespace: &str, name: &str, dir: &Path) -> Vec<String> {
        let deployment = self
            .json(&["get", "deployment", name, "-n", namespace])
            .unwrap_or_else(|| panic!("deployment {namespace}/{name} not found"));
        container_args(&deployment["spec"]["template"]["spec"], namespace, dir)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

fn container_args(pod_spec: &Value, namespace: &str, dir: &Path) -> Vec<String> {
    let args = pod_spec["containers"][0]["args"]
        .as_array()
        .expect("container args");
    args.iter()
        .map(|arg| {
            let arg = arg.as_str().unwrap().replace("$(NAMESPACE)", namespace);
            let arg = arg.replace("/var/cache/fleet", &dir.join("cache").display().to_string());
            match arg.split_once("=0.0.0.0:") {
                Some((flag, _)) => format!("{flag}=127.0.0.1:0"),
                None => arg,
            }
        })
        .collect()
}

/// A `fleet` process with its log in a file.
struct Component {
    name: String,
    process: Option<Child>,
    log: PathBuf,
}

impl Component {
    fn start(name: &str, dir: &Path, args: &[String], extra: &[&str]) -> Component {
        let log = dir.join(format!("{name}.log"));
        let file = std::fs::File::create(&log).unwrap();
        let process = support::fleet()
            .args(args)
            .args(extra)
            .env("RUST_LOG", "info")
            .env("HOSTNAME", name)
            .stdout(Stdio::from(file.try_clone().unwrap()))
            .stderr(Stdio::from(file))
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name}: {e}"));
        Component {
            name: name.to_string(),
            process: Some(process),
            log,
        }
    }

    fn alive(&mut self) -> bool {
        match &mut self.process {
            Some(process) => process.try_wait().unwrap().is_none(),
            None => false,
        }
    }

    fn stop(&mut self) {
        if let Some(mut process) = self.process.take() {
            let _ = Command::new("kill").arg(process.id().to_string()).status();
            let deadline = Instant::now() + Duration::from_secs(30);
            while process.try_wait().unwrap().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = process.kill();
            let _ = process.wait();
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Component {
    fn drop(&mut self) {
        if let Some(mut process) = self.process.take() {
            let _ = process.kill();
            let _ = process.wait();
        }
    }
}

/// Polls `check` until it returns `Some`, failing with `what` and the components' logs after [`LIMIT`].
fn wait_for<T>(
    what: &str,
    components: &mut [&mut Component],
    mut check: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + LIMIT;
    loop {
        if let Some(value) = check() {
            return value;
        }
        for component in components.iter_mut() {
            assert!(
                component.alive(),
                "{} exited while waiting for {what}:\n{}",
                component.name,
                component.log()
            );
        }
        if Instant::now() > deadline {
            let logs: Vec<String> = components
                .iter()
                .map(|c| format!("--- {}\n{}", c.name, c.log()))
                .collect();
            panic!("timed out waiting for {what}\n{}", logs.join("\n"));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn condition(object: &Value, kind: &str) -> Option<(String, String)> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
        .map(|c| {
            (
                c["status"].as_str().unwrap_or_default().to_string(),
                c["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
}

fn healthy(server: &Server, namespace: &str, name: &str) -> Option<Value> {
    let cluster = server.json(&["get", "clusters.fleet.cattle.io", name, "-n", namespace])?;
    (condition(&cluster, "Healthy").map(|c| c.0) == Some("True".into())
        && condition(&cluster, "Joined").map(|c| c.0) == Some("True".into()))
    .then_some(cluster)
}

/// No log line of a component reports a 401 or 403.
fn assert_no_auth_errors(components: &[&Component]) {
    for component in components {
        for line in component.log().lines() {
            let refused = [
                "code: 401",
                "code: 403",
                "\"code\":401",
                "\"code\":403",
                "Forbidden",
                "Unauthorized",
            ]
            .iter()
            .any(|word| line.contains(word));
            assert!(
                !refused,
                "{} logged an authorization failure: {line}",
                component.name
            );
        }
    }
}

/// Plays the kubelet and the Job controller for the fleet chart's pre-delete Job: stops the controller
/// once its Deployment is scaled to zero, runs the Job's container with its ServiceAccount's token, and
/// marks the Job complete.
fn run_uninstall_job(hub: &Server, dir: &Path, controller: &mut Component) -> Component {
    let job = wait_for("the pre-delete Job fleet-uninstall", &mut [], || {
        hub.json(&["get", "job", "fleet-uninstall", "-n", SYSTEM_NS])
    });
    let pod = &job["spec"]["template"]["spec"];
    let account = pod["serviceAccountName"].as_str().unwrap().to_string();
    let kubeconfig = hub.service_account_kubeconfig(dir, SYSTEM_NS, &account);
    let mut args = container_args(pod, SYSTEM_NS, dir);
    args.push(format!("--kubeconfig={}", kubeconfig.display()));
    let mut hook = Component::start("uninstall-job", dir, &args, &[]);
    wait_for("the controller Deployment scaled to zero", &mut [], || {
        let replicas = hub.json(&["get", "deployment", "fleet-controller", "-n", SYSTEM_NS])?["spec"]["replicas"].as_i64();
        (replicas == Some(0)).then_some(())
    });
    controller.stop();
    let process = hook.process.as_mut().unwrap();
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = process.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the uninstall Job did not finish:\n{}",
            hook.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    hook.process = None;
    assert!(
        status.success(),
        "the uninstall Job failed:\n{}",
        hook.log()
    );
    let now = "2026-01-01T00:00:00Z";
    let patch = serde_json::json!({"status": {
        "startTime": now, "completionTime": now, "succeeded": 1,
        "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": now},
            {"type": "Complete", "status": "True", "lastTransitionTime": now},
        ],
    }});
    hub.kubectl(&[
        "patch",
        "job",
        "fleet-uninstall",
        "-n",
        SYSTEM_NS,
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch.to_string(),
    ]);
    hook
}

/// `GET path` on the address a component logged for its metrics server; the status code and body.
fn http_get(component: &Component, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let log = component.log();
    let line = log
        .lines()
        .find(|l| l.contains("serving /metrics"))
        .unwrap_or_else(|| panic!("{} logged no metrics address:\n{log}", component.name));
    let start = line.find("\"addr\":\"").expect("an addr field") + 8;
    let addr = &line[start..start + line[start..].find('"').unwrap()];
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let code = answer
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, answer)
}

fn assert_nothing_terminating(server: &Server, what: &str) {
    wait_for(
        &format!("nothing Terminating on the {what}"),
        &mut [],
        || {
            let namespaces = server.json(&["get", "namespaces"])?;
            let stuck: Vec<String> = namespaces["items"]
                .as_array()?
                .iter()
                .filter(|ns| ns["metadata"]["deletionTimestamp"].is_string())
                .map(|ns| {
                    ns["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string()
                })
                .collect();
            let crds = server.json(&["get", "crd"])?;
            let fleet_crds = crds["items"].as_array()?.iter().filter(|c| {
                c["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .ends_with(".fleet.cattle.io")
            });
            (stuck.is_empty() && fleet_crds.count() == 0).then_some(())
        },
    );
}

#[test]
fn a_user_installs_the_hub_joins_a_cluster_deploys_and_uninstalls_with_helm() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let hub = Server::start(&dir.join("hub"));
    let downstream = Server::start(&dir.join("downstream"));
    let charts = root().join("charts");

    // 1. Install the hub as the README says.
    hub.helm(&[
        "install",
        "fleet-crd",
        charts.join("fleet-crd").to_str().unwrap(),
        "-n",
        SYSTEM_NS,
        "--create-namespace",
    ]);
    let ca_file = dir.join("hub-ca.pem");
    std::fs::write(&ca_file, &hub.ca_pem).unwrap();
    hub.helm(&[
        "install",
        "fleet",
        charts.join("fleet").to_str().unwrap(),
        "-n",
        SYSTEM_NS,
        "--create-namespace",
        "--set",
        &format!("apiServerURL={}", hub.url),
        "--set-file",
        &format!("apiServerCA={}", ca_file.display()),
        "--set",
        &format!("agentCheckinInterval={CHECKIN}"),
    ]);

    // 2. The controller and the local agent, with the charts' arguments and ServiceAccounts only.
    let controller_config = hub.service_account_kubeconfig(dir, SYSTEM_NS, "fleet-controller");
    let mut controller_args = hub.deployment_args(SYSTEM_NS, "fleet-controller", dir);
    controller_args.push(format!("--kubeconfig={}", controller_config.display()));
    let mut controller = Component::start("controller", dir, &controller_args, &[]);
    let agent_config = hub.service_account_kubeconfig(dir, LOCAL_AGENT_NS, "fleet-agent");
    let mut local_args = hub.deployment_args(LOCAL_AGENT_NS, "fleet-agent", dir);
    // The pod reaches the hub in-cluster; here the same identity reaches it through the loopback URL.
    for arg in &mut local_args {
        if arg.starts_with("--hub-kubeconfig=") {
            *arg = format!("--hub-kubeconfig={}", agent_config.display());
        }
    }
    local_args.push(format!("--kubeconfig={}", agent_config.display()));
    let mut local_agent = Component::start("local-agent", dir, &local_args, &[]);
    wait_for(
        "Cluster fleet-local/local Joined and Healthy",
        &mut [&mut controller, &mut local_agent],
        || healthy(&hub, "fleet-local", "local"),
    );
    wait_for("workspace fleet-default", &mut [&mut controller], || {
        hub.json(&["get", "namespace", "fleet-default"])
    });

    // 3. Join the downstream cluster with a ClusterRegistrationToken and the fleet-agent chart.
    let token = "apiVersion: fleet.cattle.io/v1alpha1\nkind: ClusterRegistrationToken\nmetadata:\n  name: new-token\n  namespace: fleet-default\nspec:\n  ttl: 1h\n";
    let token_file = dir.join("token.yaml");
    std::fs::write(&token_file, token).unwrap();
    hub.kubectl(&["apply", "-f", token_file.to_str().unwrap()]);
    let values = wait_for("the token's values Secret", &mut [&mut controller], || {
        hub.kubectl_ok(&[
            "-n",
            "fleet-default",
            "get",
            "secret",
            "new-token",
            "-o",
            "jsonpath={.data.values}",
        ])
        .filter(|v| !v.is_empty())
    });
    let values = String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(values.trim())
            .unwrap(),
    )
    .unwrap();
    let parsed: Value = serde_json::from_str(&values).expect("the values are JSON");
    assert_eq!(
        parsed["apiServerURL"],
        hub.url.as_str(),
        "values: apiServerURL"
    );
    assert_eq!(
        parsed["apiServerCA"],
        hub.ca_pem.as_str(),
        "values: apiServerCA"
    );
    let values_file = dir.join("values.yaml");
    std::fs::write(&values_file, &values).unwrap();
    downstream.helm(&[
        "install",
        "fleet-agent",
        charts.join("fleet-agent").to_str().unwrap(),
        "-n",
        SYSTEM_NS,
        "--create-namespace",
        "-f",
        values_file.to_str().unwrap(),
        "--set",
        &format!("agentCheckinInterval={CHECKIN}"),
    ]);
    let downstream_config = downstream.service_account_kubeconfig(dir, SYSTEM_NS, "fleet-agent");
    let mut agent_args = downstream.deployment_args(SYSTEM_NS, "fleet-agent", dir);
    agent_args.push(format!("--kubeconfig={}", downstream_config.display()));
    let mut agent = Component::start("downstream-agent", dir, &agent_args, &[]);
    let joined = wait_for(
        "the downstream Cluster Joined and Healthy",
        &mut [&mut controller, &mut agent],
        || {
            let clusters = hub.json(&["get", "clusters.fleet.cattle.io", "-n", "fleet-default"])?;
            let name = clusters["items"].as_array()?.first()?["metadata"]["name"]
                .as_str()?
                .to_string();
            healthy(&hub, "fleet-default", &name)
        },
    );
    let cluster_name = joined["metadata"]["name"].as_str().unwrap().to_string();

    // 4. A GitRepo of a local git repository, deployed downstream.
    let repo = dir.join("repo");
    std::fs::create_dir_all(repo.join("app")).unwrap();
    std::fs::write(
        repo.join("app/configmap.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\ndata:\n  greeting: hello from the hub\n",
    )
    .unwrap();
    std::fs::write(repo.join("app/fleet.yaml"), "defaultNamespace: demo\n").unwrap();
    let git = |args: &[&str]| {
        run(
            Command::new("git")
                .arg("-C")
                .arg(&repo)
                .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
                .args(args),
            &format!("git {}", args.join(" ")),
        )
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "app"]);
    let gitrepo = format!(
        "apiVersion: fleet.cattle.io/v1alpha1\nkind: GitRepo\nmetadata:\n  name: demo\n  namespace: fleet-default\nspec:\n  repo: file://{}\n  branch: main\n  paths: [app]\n  targets:\n    - clusterSelector: {{}}\n",
        repo.display()
    );
    let gitrepo_file = dir.join("gitrepo.yaml");
    std::fs::write(&gitrepo_file, gitrepo).unwrap();
    hub.kubectl(&["apply", "-f", gitrepo_file.to_str().unwrap()]);
    let deployed = wait_for(
        "ConfigMap demo/hello downstream",
        &mut [&mut controller, &mut agent],
        || {
            downstream
                .kubectl_ok(&[
                    "get",
                    "configmap",
                    "hello",
                    "-n",
                    "demo",
                    "-o",
                    "jsonpath={.data.greeting}",
                ])
                .filter(|v| !v.is_empty())
        },
    );
    assert_eq!(deployed, "hello from the hub");

    // Several check-in intervals (and more than the heartbeat timeout) later, both clusters are still
    // Healthy and untainted: the agents' interval and the controller's timeout agree.
    let since = Instant::now();
    while since.elapsed() < Duration::from_secs(CHECKIN_SECONDS * 6) {
        std::thread::sleep(Duration::from_millis(500));
    }
    for (namespace, name) in [
        ("fleet-local", "local"),
        ("fleet-default", cluster_name.as_str()),
    ] {
        let cluster = healthy(&hub, namespace, name).unwrap_or_else(|| {
            panic!(
                "Cluster {namespace}/{name} is no longer Healthy:\n{}",
                controller.log()
            )
        });
        let taints = cluster["spec"]["taints"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(
            !taints
                .iter()
                .any(|t| t["key"] == "fleet.cattle.io/unreachable"),
            "Cluster {namespace}/{name} is tainted unreachable: {taints:?}"
        );
    }
    // The controller took its timeout from the chart's agentCheckinInterval.
    let expected = format!("\"heartbeat_timeout\":\"{}s\"", CHECKIN_SECONDS * 3);
    assert!(
        controller.log().contains(&expected),
        "no {expected} in:\n{}",
        controller.log()
    );

    // The agents are operable: JSON logs, probes and metrics of what they did.
    for component in [&agent, &local_agent] {
        assert!(
            component
                .log()
                .lines()
                .any(|l| l.starts_with('{') && l.contains("agent starting")),
            "{} wrote no JSON log line:\n{}",
            component.name,
            component.log()
        );
        assert_eq!(http_get(component, "/healthz").0, 200);
        assert_eq!(http_get(component, "/readyz").0, 200);
    }
    let (code, metrics) = http_get(&agent, "/metrics");
    assert_eq!(code, 200);
    for expected in [
        "fleet_agent_api_requests_total{client=\"hub\",verb=\"patch\",code=\"200\"}",
        "fleet_agent_api_requests_total{client=\"downstream\",verb=\"patch\",code=\"200\"}",
        "fleet_agent_check_ins_total{result=\"ok\"}",
        "fleet_agent_bundle_deployment_applies_total{result=\"ok\"}",
    ] {
        assert!(
            metrics.contains(expected),
            "no {expected} in the agent's metrics:\n{metrics}"
        );
    }

    // 5. Uninstall everything, as the README says.
    agent.stop();
    downstream.helm(&["uninstall", "fleet-agent", "-n", SYSTEM_NS]);
    let uninstall = {
        let admin = hub.admin.clone();
        std::thread::spawn(move || {
            run(
                Command::new(tool("helm"))
                    .arg("--kubeconfig")
                    .arg(&admin)
                    .args(["uninstall", "fleet", "-n", SYSTEM_NS, "--timeout", "2m"]),
                "helm uninstall fleet",
            )
        })
    };
    let hook = run_uninstall_job(&hub, dir, &mut controller);
    uninstall.join().expect("helm uninstall fleet");
    local_agent.stop();
    hub.helm(&["uninstall", "fleet-crd", "-n", SYSTEM_NS]);
    assert_nothing_terminating(&hub, "hub");
    assert_nothing_terminating(&downstream, "downstream cluster");

    assert_no_auth_errors(&[&controller, &local_agent, &agent, &hook]);
}
