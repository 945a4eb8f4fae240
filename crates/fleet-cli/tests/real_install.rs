//! Install, register and uninstall exactly as a user does on real clusters, with the real `helm` and
//! `kubectl` (`.tools/bin`, from `scripts/install-tools.sh`) against three `fleet apiserver` processes, a hub
//! and two downstream clusters, with RBAC enforced:
//!
//! 1. `helm install` of charts/fleet-crd and charts/fleet into the hub (admin credentials end here);
//! 2. the controller and the local agent run as `fleet` processes with the arguments of the charts'
//!    Deployments and only the tokens of the charts' ServiceAccounts (`kubectl create token`); this test plays
//!    the kubelet: it starts and stops those processes as the Deployments say;
//! 3. one downstream cluster joins agent-initiated: a ClusterRegistrationToken's values Secret installs
//!    charts/fleet-agent with `helm install -f values.yaml`, and the agent registers from it;
//! 4. the other joins manager-initiated: a Cluster with `spec.kubeConfigSecret`; the controller installs the
//!    agent there itself, and the test runs the Deployment it wrote;
//! 5. a GitRepo of a local git repository is deployed to both, updated by a commit, a removed file is pruned,
//!    drift made behind the agents' backs is reported in BundleDeployment and GitRepo status and corrected
//!    with `correctDrift`; every cluster stays Healthy over several check-in intervals (the charts'
//!    `agentCheckinInterval`, shortened by configuration);
//! 6. the manager-initiated Cluster is deleted: its agent and everything deployed are gone downstream, and
//!    nothing of it stays on the hub;
//! 7. `helm uninstall` of all charts (the fleet chart's pre-delete Job run as the kubelet would) leaves
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
/// The `agentNamespace` of the manager-initiated Cluster: its agent runs there, scoped by it.
const IMPORTED_AGENT_NS: &str = "edge-agent";
/// Holds the simulated agent pod of the imported cluster until the test has stopped the agent process.
const RUNNING_POD_FINALIZER: &str = "test.fleet.cattle.io/process-running";
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
        Component::start_with_env(name, dir, args, extra, &[])
    }

    /// Starts a component with the environment variables of its container.
    fn start_with_env(
        name: &str,
        dir: &Path,
        args: &[String],
        extra: &[&str],
        env: &[(String, String)],
    ) -> Component {
        let log = dir.join(format!("{name}.log"));
        let file = std::fs::File::create(&log).unwrap();
        let process = support::fleet()
            .args(args)
            .args(extra)
            .envs(env.iter().map(|(k, v)| (k, v)))
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

    /// Whether the process ended on its own (a component this test stopped has not).
    fn exited(&mut self) -> bool {
        match &mut self.process {
            Some(process) => process.try_wait().unwrap().is_some(),
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
                !component.exited(),
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

/// The environment of a pod's container as the kubelet sets it: plain values, and the pod's namespace for
/// `fieldRef: metadata.namespace`.
fn container_env(pod_spec: &Value, namespace: &str) -> Vec<(String, String)> {
    let env = pod_spec["containers"][0]["env"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    env.iter()
        .filter_map(|var| {
            let name = var["name"].as_str()?.to_string();
            if let Some(value) = var["value"].as_str() {
                return Some((name, value.to_string()));
            }
            (var["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace")
                .then(|| (name, namespace.to_string()))
        })
        .collect()
}

fn decode(text: &str) -> String {
    String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .unwrap(),
    )
    .unwrap()
}

/// The names of a list's items (`kubectl get KIND ...`) that pass `keep`.
fn names_where(server: &Server, args: &[&str], keep: impl Fn(&Value) -> bool) -> Vec<String> {
    let mut all = vec!["get"];
    all.extend(args);
    let list = server.json(&all).expect("a list");
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| keep(item))
        .map(|item| {
            format!(
                "{}/{}",
                item["metadata"]["namespace"].as_str().unwrap_or(""),
                item["metadata"]["name"].as_str().unwrap_or("")
            )
        })
        .collect()
}

/// Polls `leftovers` until it finds none, failing with what is left after [`LIMIT`].
fn settle(what: &str, mut leftovers: impl FnMut() -> Vec<String>) {
    let deadline = Instant::now() + LIMIT;
    loop {
        let left = leftovers();
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: still there: {left:?}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// A downstream cluster that joined, and the agent running there.
struct Joined {
    cluster: String,
    agent: Component,
}

/// Step 1: Install the hub as the README says.
fn install_hub(hub: &Server, dir: &Path) {
    let charts = root().join("charts");
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
}

/// Step 2: The controller and the local agent, with the charts' arguments and ServiceAccounts only.
fn start_hub_components(hub: &Server, dir: &Path) -> (Component, Component) {
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
        || healthy(hub, "fleet-local", "local"),
    );
    wait_for("workspace fleet-default", &mut [&mut controller], || {
        hub.json(&["get", "namespace", "fleet-default"])
    });
    (controller, local_agent)
}

/// Step 3: Agent-initiated: a ClusterRegistrationToken's values install the fleet-agent chart downstream.
fn join_with_token(
    hub: &Server,
    downstream: &Server,
    dir: &Path,
    controller: &mut Component,
) -> Joined {
    let token = "apiVersion: fleet.cattle.io/v1alpha1\nkind: ClusterRegistrationToken\nmetadata:\n  name: new-token\n  namespace: fleet-default\nspec:\n  ttl: 1h\n";
    let token_file = dir.join("token.yaml");
    std::fs::write(&token_file, token).unwrap();
    hub.kubectl(&["apply", "-f", token_file.to_str().unwrap()]);
    let values = wait_for("the token's values Secret", &mut [controller], || {
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
    let values = decode(&values);
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
    // agentTLSMode system-store (the chart's default): this cluster's trust store holds the hub's CA
    // (`SSL_CERT_FILE` of the agent's process), so the agent trusts it there and never uses a CA in the
    // values that no longer verifies the hub (here: another cluster's).
    let mut stale = parsed.clone();
    stale["apiServerCA"] = Value::String(downstream.ca_pem.clone());
    let values_file = dir.join("values.yaml");
    std::fs::write(&values_file, stale.to_string()).unwrap();
    downstream.helm(&[
        "install",
        "fleet-agent",
        root().join("charts/fleet-agent").to_str().unwrap(),
        "-n",
        SYSTEM_NS,
        "--create-namespace",
        "-f",
        values_file.to_str().unwrap(),
        "--set",
        &format!("agentCheckinInterval={CHECKIN}"),
        "--set-json",
        r#"labels={"env":"by-token"}"#,
    ]);
    let downstream_config = downstream.service_account_kubeconfig(dir, SYSTEM_NS, "fleet-agent");
    let mut agent_args = downstream.deployment_args(SYSTEM_NS, "fleet-agent", dir);
    agent_args.push(format!("--kubeconfig={}", downstream_config.display()));
    let trust_store = vec![(
        "SSL_CERT_FILE".to_string(),
        dir.join("hub-ca.pem").display().to_string(),
    )];
    let mut agent = Component::start_with_env("token-agent", dir, &agent_args, &[], &trust_store);
    let joined = wait_for(
        "the Cluster of the token's agent Joined and Healthy",
        &mut [controller, &mut agent],
        || {
            let clusters = hub.json(&[
                "get",
                "clusters.fleet.cattle.io",
                "-n",
                "fleet-default",
                "-l",
                "env=by-token",
            ])?;
            let name = clusters["items"].as_array()?.first()?["metadata"]["name"]
                .as_str()?
                .to_string();
            healthy(hub, "fleet-default", &name)
        },
    );
    assert!(
        agent
            .log()
            .contains("the system trust store verifies the hub"),
        "agentTLSMode system-store: the agent used the system trust store:\n{}",
        agent.log()
    );
    Joined {
        cluster: joined["metadata"]["name"].as_str().unwrap().to_string(),
        agent,
    }
}

/// Step 4: Manager-initiated: a Cluster with `spec.kubeConfigSecret`; the controller installs the agent, which
/// this test then runs as the kubelet would run the Deployment the controller wrote.
fn join_with_kubeconfig(
    hub: &Server,
    downstream: &Server,
    dir: &Path,
    controller: &mut Component,
) -> Joined {
    hub.kubectl(&[
        "create",
        "secret",
        "generic",
        "imported-kubeconfig",
        "-n",
        "fleet-default",
        &format!("--from-file=value={}", downstream.admin.display()),
    ]);
    let cluster = format!(
        "apiVersion: fleet.cattle.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: imported\n  namespace: fleet-default\n  labels:\n    env: imported\nspec:\n  kubeConfigSecret: imported-kubeconfig\n  agentNamespace: {IMPORTED_AGENT_NS}\n  agentSchedulingCustomization:\n    priorityClass:\n      value: 1000\n    podDisruptionBudget:\n      maxUnavailable: \"1\"\n"
    );
    let cluster_file = dir.join("cluster.yaml");
    std::fs::write(&cluster_file, cluster).unwrap();
    hub.kubectl(&["apply", "-f", cluster_file.to_str().unwrap()]);
    let deployment = wait_for(
        "the agent Deployment the controller installs",
        &mut [controller],
        || downstream.json(&["get", "deployment", "fleet-agent", "-n", IMPORTED_AGENT_NS]),
    );
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], "fleet-agent");
    assert_eq!(pod["priorityClassName"], "fleet-agent-priority-class");
    for object in [
        vec!["priorityclass", "fleet-agent-priority-class"],
        vec![
            "poddisruptionbudget",
            "fleet-agent-pod-disruption-budget",
            "-n",
            IMPORTED_AGENT_NS,
        ],
        vec![
            "networkpolicy",
            "default-allow-all",
            "-n",
            IMPORTED_AGENT_NS,
        ],
    ] {
        let mut args = vec!["get"];
        args.extend(object.iter().copied());
        assert!(
            downstream.json(&args).is_some(),
            "the controller installs {object:?} with the agent"
        );
    }
    let env = container_env(pod, IMPORTED_AGENT_NS);
    assert!(
        env.contains(&("CHECKIN_INTERVAL".to_string(), CHECKIN.to_string())),
        "the controller passes the chart's agentCheckinInterval on: {env:?}"
    );
    let config = downstream.service_account_kubeconfig(dir, IMPORTED_AGENT_NS, "fleet-agent");
    let mut args = container_args(pod, IMPORTED_AGENT_NS, dir);
    args.push(format!("--kubeconfig={}", config.display()));
    // Every pod has its own network namespace; here the agents share the loopback interface.
    args.push("--metrics-addr=127.0.0.1:0".to_string());
    let mut agent = Component::start_with_env("imported-agent", dir, &args, &[], &env);
    // What a kubelet would show while it runs the agent: its pod, which stays (terminating) until the process
    // has stopped. The controller must not revoke the agent's credentials before.
    let pod = dir.join("imported-agent-pod.yaml");
    std::fs::write(
        &pod,
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: fleet-agent-0\n  namespace: {IMPORTED_AGENT_NS}\n  \
             labels: {{app: fleet-agent}}\n  finalizers: [{RUNNING_POD_FINALIZER}]\nspec:\n  containers:\n  \
             - {{name: fleet-agent, image: fleet-agent}}\n"
        ),
    )
    .unwrap();
    downstream.kubectl(&["apply", "-f", pod.to_str().unwrap()]);
    wait_for(
        "Cluster fleet-default/imported Joined and Healthy",
        &mut [controller, &mut agent],
        || healthy(hub, "fleet-default", "imported"),
    );
    Joined {
        cluster: "imported".to_string(),
        agent,
    }
}

/// The local git repository a GitRepo follows.
struct Repository {
    path: PathBuf,
}

impl Repository {
    fn git(&self, args: &[&str]) -> String {
        run(
            Command::new("git")
                .arg("-C")
                .arg(&self.path)
                .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
                .args(args),
            &format!("git {}", args.join(" ")),
        )
    }

    fn write(&self, file: &str, text: &str) {
        let path = self.path.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }
}

fn configmap(name: &str, greeting: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  greeting: {greeting}\n"
    )
}

/// The greeting of ConfigMap `demo/<name>` on a cluster, `None` when it does not exist.
fn greeting(server: &Server, name: &str) -> Option<String> {
    let map = server.json(&["get", "configmap", name, "-n", "demo"])?;
    Some(
        map["data"]["greeting"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

/// Waits until `check` holds on every downstream cluster.
fn on_all(
    what: &str,
    clusters: &[&Server],
    components: &mut [&mut Component],
    check: impl Fn(&Server) -> bool,
) {
    wait_for(what, components, || {
        clusters.iter().all(|c| check(c)).then_some(())
    });
}

/// Step 5: A GitRepo deployed to both clusters, updated, pruned, drifted and corrected.
fn deploy_update_prune_and_correct_drift(
    hub: &Server,
    clusters: &[&Server],
    dir: &Path,
    components: &mut [&mut Component],
) {
    let repo = Repository {
        path: dir.join("repo"),
    };
    repo.write("app/fleet.yaml", "defaultNamespace: demo\n");
    repo.write("app/hello.yaml", &configmap("hello", "hello from the hub"));
    repo.write("app/extra.yaml", &configmap("extra", "one more"));
    repo.git(&["init", "-q", "-b", "main"]);
    repo.commit("app");
    let gitrepo = format!(
        "apiVersion: fleet.cattle.io/v1alpha1\nkind: GitRepo\nmetadata:\n  name: demo\n  namespace: fleet-default\nspec:\n  repo: file://{}\n  branch: main\n  pollingInterval: 1s\n  paths: [app]\n  targets:\n    - clusterSelector: {{}}\n",
        repo.path.display()
    );
    let gitrepo_file = dir.join("gitrepo.yaml");
    std::fs::write(&gitrepo_file, gitrepo).unwrap();
    hub.kubectl(&["apply", "-f", gitrepo_file.to_str().unwrap()]);
    on_all(
        "the GitRepo deployed downstream",
        clusters,
        components,
        |c| {
            greeting(c, "hello").as_deref() == Some("hello from the hub")
                && greeting(c, "extra").is_some()
        },
    );
    // The manager-initiated agent deploys under the scope AGENT_SCOPE gives it: its agentNamespace.
    let scope = clusters[1].kubectl(&[
        "get",
        "configmap",
        "hello",
        "-n",
        "demo",
        "-o",
        "jsonpath={.metadata.labels.fleet\\.cattle\\.io/agent-scope}",
    ]);
    assert_eq!(
        scope, IMPORTED_AGENT_NS,
        "the agent scope of the imported cluster's objects"
    );

    repo.write("app/hello.yaml", &configmap("hello", "hello again"));
    repo.commit("update");
    on_all(
        "the commit deployed downstream",
        clusters,
        components,
        |c| greeting(c, "hello").as_deref() == Some("hello again"),
    );

    std::fs::remove_file(repo.path.join("app/extra.yaml")).unwrap();
    repo.commit("remove extra");
    on_all(
        "the removed file pruned downstream",
        clusters,
        components,
        |c| greeting(c, "extra").is_none(),
    );

    // Drift: the ConfigMap changed behind the agents' backs is reported, not corrected...
    for cluster in clusters {
        cluster.kubectl(&[
            "patch",
            "configmap",
            "hello",
            "-n",
            "demo",
            "--type=merge",
            "-p",
            r#"{"data":{"greeting":"changed downstream"}}"#,
        ]);
    }
    let drifted = |bd: &Value| {
        bd["metadata"]["name"] == "demo-app"
            && bd["status"]["modifiedStatus"]
                .as_array()
                .is_some_and(|m| m.iter().any(|o| o["name"] == "hello"))
    };
    wait_for(
        "the drift reported in BundleDeployment and GitRepo status",
        components,
        || {
            let reported = names_where(hub, &["bundledeployments.fleet.cattle.io", "-A"], drifted);
            let gitrepo = hub.json(&["get", "gitrepo", "demo", "-n", "fleet-default"])?;
            let modified = gitrepo["status"]["summary"]["modified"].as_i64();
            (reported.len() == clusters.len() && modified == Some(clusters.len() as i64))
                .then_some(())
        },
    );
    for cluster in clusters {
        assert_eq!(
            greeting(cluster, "hello").as_deref(),
            Some("changed downstream"),
            "without correctDrift the agent leaves drift in place"
        );
    }
    // ... until the GitRepo asks for it to be corrected.
    hub.kubectl(&[
        "patch",
        "gitrepo",
        "demo",
        "-n",
        "fleet-default",
        "--type=merge",
        "-p",
        r#"{"spec":{"correctDrift":{"enabled":true}}}"#,
    ]);
    on_all(
        "the drift corrected downstream",
        clusters,
        components,
        |c| greeting(c, "hello").as_deref() == Some("hello again"),
    );
    wait_for("no drift reported any more", components, || {
        let reported = names_where(hub, &["bundledeployments.fleet.cattle.io", "-A"], drifted);
        let gitrepo = hub.json(&["get", "gitrepo", "demo", "-n", "fleet-default"])?;
        let modified = gitrepo["status"]["summary"]["modified"]
            .as_i64()
            .unwrap_or(0);
        (reported.is_empty() && modified == 0).then_some(())
    });
}

/// Several check-in intervals (and more than the heartbeat timeout) later, every cluster is still Healthy
/// and untainted: the agents' interval and the controller's timeout agree.
fn still_healthy_after_several_check_ins(
    hub: &Server,
    clusters: &[(&str, &str)],
    controller: &Component,
) {
    let since = Instant::now();
    while since.elapsed() < Duration::from_secs(CHECKIN_SECONDS * 6) {
        std::thread::sleep(Duration::from_millis(500));
    }
    for (namespace, name) in clusters {
        let cluster = healthy(hub, namespace, name).unwrap_or_else(|| {
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
}

/// The agents are operable: JSON logs, probes and metrics of what they did.
fn agents_are_operable(agents: &[&Component], downstream_agent: &Component) {
    for component in agents {
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
    let (code, metrics) = http_get(downstream_agent, "/metrics");
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
}

/// Step 6: The manager-initiated Cluster is deleted: what it deployed and its agent are removed downstream, and
/// its namespace, registrations, ServiceAccounts, bindings and Secrets on the hub.
fn delete_imported_cluster(
    hub: &Server,
    downstream: &Server,
    imported: &mut Joined,
    controller: &mut Component,
) {
    let name = imported.cluster.clone();
    let cluster = hub
        .json(&[
            "get",
            "clusters.fleet.cattle.io",
            &name,
            "-n",
            "fleet-default",
        ])
        .unwrap();
    let cluster_ns = cluster["status"]["namespace"].as_str().unwrap().to_string();
    assert!(!cluster_ns.is_empty());
    hub.kubectl(&[
        "delete",
        "clusters.fleet.cattle.io",
        &name,
        "-n",
        "fleet-default",
        "--wait=false",
    ]);
    // The kubelet stops the agent's pod once the controller deleted its Deployment.
    wait_for(
        "the agent's Deployment removed downstream",
        &mut [controller, &mut imported.agent],
        || {
            downstream
                .kubectl_ok(&["get", "deployment", "fleet-agent", "-n", IMPORTED_AGENT_NS])
                .is_none()
                .then_some(())
        },
    );
    imported.agent.stop();
    // The process is gone: the pod's termination ends, as the kubelet would end it.
    downstream.kubectl_ok(&[
        "patch",
        "pod",
        "fleet-agent-0",
        "-n",
        IMPORTED_AGENT_NS,
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    downstream.kubectl_ok(&[
        "delete",
        "pod",
        "fleet-agent-0",
        "-n",
        IMPORTED_AGENT_NS,
        "--wait=false",
    ]);
    wait_for("the Cluster gone", &mut [controller], || {
        hub.kubectl_ok(&[
            "get",
            "clusters.fleet.cattle.io",
            &name,
            "-n",
            "fleet-default",
        ])
        .is_none()
        .then_some(())
    });

    settle("the deleted Cluster's objects downstream", || {
        let mut left = names_where(downstream, &["configmaps", "-A"], |map| {
            map["metadata"]["namespace"] == "demo"
                && ["hello", "extra"].contains(&map["metadata"]["name"].as_str().unwrap_or(""))
                || map["metadata"]["labels"]["fleet.cattle.io/bundle-deployment"].is_string()
        });
        left.extend(names_where(downstream, &["namespaces"], |ns| {
            ns["metadata"]["name"] == IMPORTED_AGENT_NS
        }));
        left.extend(names_where(
            downstream,
            &["clusterroles,clusterrolebindings,priorityclasses"],
            |o| {
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .contains("fleet-agent")
            },
        ));
        left
    });

    let token_prefix = format!("import-token-{name}");
    let mentions_cluster_ns = |o: &Value| {
        o["subjects"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s["namespace"] == cluster_ns.as_str()))
    };
    settle("the deleted Cluster's objects on the hub", || {
        let mut left = names_where(hub, &["namespaces"], |ns| {
            ns["metadata"]["name"] == cluster_ns.as_str()
        });
        left.extend(names_where(
            hub,
            &["clusterrolebindings,rolebindings", "-A"],
            mentions_cluster_ns,
        ));
        left.extend(names_where(
            hub,
            &["secrets", "-n", "cattle-fleet-clusters-system"],
            |secret| {
                secret["data"]["clusterName"]
                    .as_str()
                    .is_some_and(|n| decode(n) == name)
            },
        ));
        left.extend(names_where(
            hub,
            &[
                "clusterregistrations.fleet.cattle.io",
                "-n",
                "fleet-default",
            ],
            |r| r["status"]["clusterName"] == name.as_str(),
        ));
        left.extend(names_where(
            hub,
            &["roles,rolebindings", "-n", "cattle-fleet-clusters-system"],
            |o| {
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with(&token_prefix)
            },
        ));
        left.extend(names_where(
            hub,
            &[
                "clusterregistrationtokens.fleet.cattle.io,secrets,serviceaccounts,roles,rolebindings",
                "-n",
                "fleet-default",
            ],
            |o| {
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with(&token_prefix)
            },
        ));
        left
    });
}

/// Step 7: Uninstall everything, as the README says.
fn uninstall(
    hub: &Server,
    by_token: &Server,
    dir: &Path,
    token_agent: &mut Component,
    controller: &mut Component,
    local_agent: &mut Component,
) -> Component {
    token_agent.stop();
    by_token.helm(&["uninstall", "fleet-agent", "-n", SYSTEM_NS]);
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
    let hook = run_uninstall_job(hub, dir, controller);
    uninstall.join().expect("helm uninstall fleet");
    local_agent.stop();
    hub.helm(&["uninstall", "fleet-crd", "-n", SYSTEM_NS]);
    hook
}

#[test]
fn a_user_installs_the_hub_joins_clusters_both_ways_deploys_and_uninstalls_with_helm() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let hub = Server::start(&dir.join("hub"));
    let by_token = Server::start(&dir.join("by-token"));
    let by_kubeconfig = Server::start(&dir.join("by-kubeconfig"));

    install_hub(&hub, dir);
    let (mut controller, mut local_agent) = start_hub_components(&hub, dir);
    let mut token = join_with_token(&hub, &by_token, dir, &mut controller);
    let mut imported = join_with_kubeconfig(&hub, &by_kubeconfig, dir, &mut controller);

    deploy_update_prune_and_correct_drift(
        &hub,
        &[&by_token, &by_kubeconfig],
        dir,
        &mut [&mut controller, &mut token.agent, &mut imported.agent],
    );
    still_healthy_after_several_check_ins(
        &hub,
        &[
            ("fleet-local", "local"),
            ("fleet-default", &token.cluster),
            ("fleet-default", &imported.cluster),
        ],
        &controller,
    );
    agents_are_operable(&[&token.agent, &imported.agent, &local_agent], &token.agent);

    delete_imported_cluster(&hub, &by_kubeconfig, &mut imported, &mut controller);
    let hook = uninstall(
        &hub,
        &by_token,
        dir,
        &mut token.agent,
        &mut controller,
        &mut local_agent,
    );
    assert_nothing_terminating(&hub, "hub");
    assert_nothing_terminating(&by_token, "cluster joined by token");
    assert_nothing_terminating(&by_kubeconfig, "cluster joined by kubeconfig");

    assert_no_auth_errors(&[
        &controller,
        &local_agent,
        &token.agent,
        &imported.agent,
        &hook,
    ]);
}
