//! The real kubectl against the server over HTTPS with the generated CA, a bearer token and the written
//! kubeconfig: apply (client- and server-side), get with printer columns, get -w, patch of every type,
//! label, delete, wait --for=condition, and applying the project's CRDs.
//!
//! kubectl comes from `scripts/install-tools.sh` (`.tools/bin/kubectl`) or `$KUBECTL`; these tests fail,
//! never skip, when it is missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use fleet_apiserver::tls::Certificates;
use fleet_apiserver::{ApiServer, Config};

fn kubectl_path() -> PathBuf {
    let path = std::env::var_os("KUBECTL")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/bin/kubectl"));
    assert!(
        path.exists(),
        "kubectl not found at {}: run scripts/install-tools.sh (or set KUBECTL) before these tests",
        path.display()
    );
    path
}

/// A TLS server on loopback in its own runtime, and a kubeconfig for it.
struct Cluster {
    _runtime: tokio::runtime::Runtime,
    dir: tempfile::TempDir,
    kubectl: PathBuf,
}

impl Cluster {
    fn start() -> Cluster {
        let kubectl = kubectl_path();
        let dir = tempfile::tempdir().unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let certs = Certificates::load_or_generate(Some(dir.path()), &[]).unwrap();
        let server = ApiServer::new(Config {
            require_auth: true,
            ca_pem: Some(certs.ca_pem.clone()),
            ..Config::default()
        })
        .unwrap();
        let url = runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = listener.local_addr().unwrap().port();
            let serving = server.clone();
            tokio::spawn(async move { serving.serve_tls(listener, &certs).await });
            format!("https://127.0.0.1:{port}")
        });
        std::fs::write(dir.path().join("kubeconfig"), server.kubeconfig(&url)).unwrap();
        Cluster {
            _runtime: runtime,
            dir,
            kubectl,
        }
    }

    fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut cmd = Command::new(&self.kubectl);
        cmd.arg("--kubeconfig")
            .arg(self.dir.path().join("kubeconfig"))
            .args(args);
        cmd.env("HOME", self.dir.path())
            .env("KUBECACHEDIR", self.dir.path().join("cache"));
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("run kubectl");
        {
            use std::io::Write;
            let mut input = child.stdin.take().unwrap();
            if let Some(text) = stdin {
                input.write_all(text.as_bytes()).unwrap();
            }
        }
        child.wait_with_output().unwrap()
    }

    /// Runs kubectl and returns stdout, failing the test with stderr when it fails.
    fn ok(&self, args: &[&str]) -> String {
        self.ok_with(args, None)
    }

    fn ok_with(&self, args: &[&str], stdin: Option<&str>) -> String {
        let out = self.run(args, stdin);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "kubectl {args:?} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    fn fails(&self, args: &[&str], stdin: Option<&str>) -> String {
        let out = self.run(args, stdin);
        assert!(!out.status.success(), "kubectl {args:?} should have failed");
        String::from_utf8_lossy(&out.stderr).into_owned()
    }
}

const MANIFESTS: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata:
  name: demo
  labels: {app: demo}
data:
  a: "1"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: c
        image: nginx:1
        env: [{name: A, value: "1"}]
"#;

#[test]
fn apply_get_patch_label_delete() {
    let c = Cluster::start();
    let out = c.ok_with(&["apply", "-f", "-"], Some(MANIFESTS));
    assert!(
        out.contains("configmap/demo created") && out.contains("deployment.apps/web created"),
        "{out}"
    );
    let out = c.ok_with(&["apply", "-f", "-"], Some(MANIFESTS));
    assert!(out.contains("configmap/demo unchanged"), "{out}");
    // A changed manifest goes through a strategic merge patch: the container's env survives an image change.
    let changed = MANIFESTS
        .replace("nginx:1", "nginx:2")
        .replace("a: \"1\"", "a: \"2\"");
    let out = c.ok_with(&["apply", "-f", "-"], Some(&changed));
    assert!(out.contains("configmap/demo configured"), "{out}");
    let containers = c.ok(&["get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].env[0].name}"]);
    assert_eq!(containers, "nginx:2 A");

    // Printer columns.
    let table = c.ok(&["get", "configmaps"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "DATA", "AGE"], "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("demo") && l.split_whitespace().nth(1) == Some("1")),
        "{table}"
    );
    // kube-apiserver's Deployment columns: READY as ready/desired.
    let table = c.ok(&["get", "deploy"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        "{table}"
    );
    assert!(
        table.lines().any(|l| l.starts_with("web")
            && l.split_whitespace()
                .nth(1)
                .is_some_and(|ready| ready.starts_with("0/"))),
        "{table}"
    );

    // Patches of every type, and label.
    c.ok(&["patch", "cm", "demo", "--type=json", "-p", r#"[{"op":"test","path":"/data/a","value":"2"},{"op":"replace","path":"/data/a","value":"3"}]"#]);
    let err = c.fails(
        &[
            "patch",
            "cm",
            "demo",
            "--type=json",
            "-p",
            r#"[{"op":"test","path":"/data/a","value":"nope"}]"#,
        ],
        None,
    );
    // kube-apiserver's generic 422, which kubectl prints as an invalid request.
    assert!(
        err.contains(
            "The request is invalid: the server rejected our request due to an error in our request"
        ),
        "{err}"
    );
    c.ok(&[
        "patch",
        "cm",
        "demo",
        "--type=merge",
        "-p",
        r#"{"data":{"b":"4"}}"#,
    ]);
    c.ok(&["patch", "cm", "demo", "-p", r#"{"data":{"c":"5"}}"#]);
    c.ok(&["label", "cm", "demo", "team=blue"]);
    let data = c.ok(&[
        "get",
        "cm",
        "-l",
        "team=blue",
        "-o",
        "jsonpath={.items[0].data}",
    ]);
    assert_eq!(data, r#"{"a":"3","b":"4","c":"5"}"#);

    // Server-side apply: a field owned by another manager conflicts unless forced.
    let ssa = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  a: \"9\"\n";
    let err = c.fails(
        &["apply", "--server-side", "--field-manager=other", "-f", "-"],
        Some(ssa),
    );
    assert!(err.contains("conflict"), "{err}");
    let out = c.ok_with(
        &[
            "apply",
            "--server-side",
            "--field-manager=other",
            "--force-conflicts",
            "-f",
            "-",
        ],
        Some(ssa),
    );
    assert!(out.contains("serverside-applied"), "{out}");
    assert_eq!(
        c.ok(&["get", "cm", "demo", "-o", "jsonpath={.data.a}"]),
        "9"
    );

    c.ok(&["delete", "cm", "demo"]);
    let err = c.fails(&["get", "cm", "demo"], None);
    assert!(
        err.contains("NotFound") && err.contains("configmaps \"demo\" not found"),
        "{err}"
    );
}

#[test]
fn fleet_crds_get_columns_and_wait() {
    let c = Cluster::start();
    let crds =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../charts/fleet-crd/templates/crds.yaml");
    let out = c.ok(&["apply", "-f", crds.to_str().unwrap()]);
    assert!(out.contains("gitrepos.fleet.cattle.io created"), "{out}");
    c.ok(&[
        "wait",
        "--for=condition=established",
        "crd/gitrepos.fleet.cattle.io",
        "--timeout=10s",
    ]);
    let gitrepo = "apiVersion: fleet.cattle.io/v1alpha1\nkind: GitRepo\nmetadata:\n  name: sample\nspec:\n  repo: https://example.invalid/repo\n  paths: [simple]\n";
    c.ok_with(&["apply", "-f", "-"], Some(gitrepo));
    // kubectl asks for strict field validation: a misspelt field is refused, not silently dropped.
    let typo = gitrepo
        .replace("name: sample", "name: typo")
        .replace("paths:", "pathz:");
    let err = c.fails(&["apply", "-f", "-"], Some(&typo));
    assert!(
        err.contains("strict decoding error: unknown field \"spec.pathz\""),
        "{err}"
    );
    let table = c.ok(&["get", "gitrepos"]);
    let header = table.lines().next().unwrap();
    assert!(
        header.starts_with("NAME") && header.contains("REPO") && header.contains("AGE"),
        "{table}"
    );
    assert!(table.contains("https://example.invalid/repo"), "{table}");
    c.ok(&[
        "patch",
        "gitrepo",
        "sample",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"conditions":[{"type":"Ready","status":"True"}]}}"#,
    ]);
    c.ok(&[
        "wait",
        "--for=condition=Ready",
        "gitrepo/sample",
        "--timeout=10s",
    ]);
    // Server-side apply of a custom resource.
    let out = c.ok_with(&["apply", "--server-side", "-f", "-"], Some(gitrepo));
    assert!(out.contains("serverside-applied"), "{out}");
    c.ok(&["delete", "gitrepo", "sample"]);
}

#[test]
fn get_watch_streams_changes() {
    let c = Cluster::start();
    c.ok_with(
        &["apply", "-f", "-"],
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: first\n"),
    );
    let mut cmd = Command::new(&c.kubectl);
    cmd.arg("--kubeconfig")
        .arg(c.dir.path().join("kubeconfig"))
        .args(["get", "cm", "-w", "--request-timeout=8s"]);
    cmd.env("HOME", c.dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    c.ok_with(
        &["apply", "-f", "-"],
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: second\n"),
    );
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.lines().any(|l| l.starts_with("first")), "{stdout}");
    assert!(
        stdout.lines().any(|l| l.starts_with("second")),
        "the watch saw the later change: {stdout}"
    );
}

#[test]
fn typed_commands_auth_can_i_and_create_token() {
    let c = Cluster::start();
    // kubectl's typed clients send protobuf bodies.
    c.ok(&["create", "configmap", "made", "--from-literal=a=1"]);
    assert_eq!(
        c.ok(&["get", "cm", "made", "-o", "jsonpath={.data.a}"]),
        "1"
    );
    c.ok(&["create", "secret", "generic", "s1", "--from-literal=k=v"]);
    assert_eq!(
        c.ok(&["get", "secret", "s1", "-o", "jsonpath={.data.k}"]),
        "dg=="
    );
    c.ok(&["create", "namespace", "team"]);
    c.ok(&["create", "serviceaccount", "robot", "-n", "team"]);

    assert_eq!(c.ok(&["auth", "can-i", "list", "pods"]).trim(), "yes");
    let out = c.run(
        &[
            "auth",
            "can-i",
            "list",
            "configmaps",
            "-n",
            "team",
            "--as=system:serviceaccount:team:robot",
        ],
        None,
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "no");

    let role = "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: cm-reader, namespace: team}\nrules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get, list]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: robot, namespace: team}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: cm-reader}\nsubjects:\n- {kind: ServiceAccount, name: robot, namespace: team}\n";
    c.ok_with(&["apply", "-f", "-"], Some(role));
    let token = c
        .ok(&["create", "token", "robot", "-n", "team"])
        .trim()
        .to_string();
    assert!(!token.is_empty());
    let as_robot = |args: &[&str]| {
        let mut full = vec!["--token", token.as_str()];
        full.extend_from_slice(args);
        c.run(&full, None)
    };
    let out = as_robot(&["auth", "can-i", "list", "configmaps", "-n", "team"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "yes");
    let out = as_robot(&["auth", "can-i", "list", "configmaps", "-n", "default"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "no");
    let out = as_robot(&["get", "cm", "-n", "default"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("configmaps is forbidden: User \"system:serviceaccount:team:robot\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""),
        "{err}"
    );
    let out = as_robot(&["auth", "whoami"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("system:serviceaccount:team:robot"));
}

#[test]
fn create_built_in_kinds_from_protobuf_bodies() {
    let c = Cluster::start();
    c.ok(&["create", "namespace", "apps"]);
    c.ok(&[
        "create",
        "deployment",
        "web",
        "-n",
        "apps",
        "--image=nginx:1",
        "--replicas=3",
        "--port=8080",
    ]);
    assert_eq!(
        c.ok(&[
            "get", "deploy", "web", "-n", "apps", "-o",
            "jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].ports[0].containerPort} {.spec.selector.matchLabels.app}",
        ]),
        "3 nginx:1 8080 web"
    );
    c.ok(&[
        "create",
        "deployment",
        "idle",
        "-n",
        "apps",
        "--image=busybox",
        "--replicas=0",
    ]);
    assert_eq!(
        c.ok(&[
            "get",
            "deploy",
            "idle",
            "-n",
            "apps",
            "-o",
            "jsonpath={.spec.replicas}"
        ]),
        "0"
    );
    c.ok(&[
        "create",
        "role",
        "reader",
        "-n",
        "apps",
        "--verb=get,list",
        "--resource=pods,deployments.apps",
    ]);
    assert_eq!(
        c.ok(&[
            "get",
            "role",
            "reader",
            "-n",
            "apps",
            "-o",
            "jsonpath={.rules[*].apiGroups}"
        ]),
        r#"[""] ["apps"]"#
    );
    c.ok(&[
        "create",
        "rolebinding",
        "reader",
        "-n",
        "apps",
        "--role=reader",
        "--serviceaccount=apps:bot",
    ]);
    assert_eq!(
        c.ok(&[
            "get",
            "rolebinding",
            "reader",
            "-n",
            "apps",
            "-o",
            "jsonpath={.roleRef.name} {.subjects[0].kind} {.subjects[0].name}"
        ]),
        "reader ServiceAccount bot"
    );
    c.ok(&[
        "create",
        "clusterrole",
        "node-reader",
        "--verb=get",
        "--resource=nodes",
    ]);
    c.ok(&[
        "create",
        "clusterrolebinding",
        "node-reader",
        "--clusterrole=node-reader",
        "--user=alice",
    ]);
    assert_eq!(
        c.ok(&[
            "get",
            "clusterrolebinding",
            "node-reader",
            "-o",
            "jsonpath={.subjects[0].name}"
        ]),
        "alice"
    );
    c.ok(&[
        "create",
        "job",
        "once",
        "-n",
        "apps",
        "--image=busybox",
        "--",
        "echo",
        "hi",
    ]);
    assert_eq!(
        c.ok(&[
            "get",
            "job",
            "once",
            "-n",
            "apps",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].command}"
        ]),
        r#"["echo","hi"]"#
    );
    c.ok(&[
        "create",
        "cronjob",
        "tick",
        "-n",
        "apps",
        "--image=busybox",
        "--schedule=*/5 * * * *",
    ]);
    assert_eq!(
        c.ok(&[
            "get",
            "cronjob",
            "tick",
            "-n",
            "apps",
            "-o",
            "jsonpath={.spec.schedule}"
        ]),
        "*/5 * * * *"
    );
    c.ok(&[
        "create",
        "secret",
        "docker-registry",
        "pull",
        "-n",
        "apps",
        "--docker-server=registry.test",
        "--docker-username=u",
        "--docker-password=p",
    ]);
    assert_eq!(
        c.ok(&[
            "get",
            "secret",
            "pull",
            "-n",
            "apps",
            "-o",
            "jsonpath={.type}"
        ]),
        "kubernetes.io/dockerconfigjson"
    );
    c.ok(&[
        "create",
        "service",
        "clusterip",
        "web",
        "-n",
        "apps",
        "--tcp=80:8080",
    ]);
    assert_eq!(
        c.ok(&[
            "get",
            "svc",
            "web",
            "-n",
            "apps",
            "-o",
            "jsonpath={.spec.ports[0].port} {.spec.ports[0].targetPort}"
        ]),
        "80 8080"
    );
    // A timestamp travels too: the created object reads back with the server's own creation time.
    let created = c.ok(&[
        "get",
        "deploy",
        "web",
        "-n",
        "apps",
        "-o",
        "jsonpath={.metadata.creationTimestamp}",
    ]);
    assert!(created.ends_with('Z') && created.len() == 20, "{created}");
}

#[test]
fn explain_and_apply_validation_of_built_in_kinds() {
    let c = Cluster::start();
    let explained = c.ok(&["explain", "deployment.spec.replicas"]);
    assert!(
        explained.contains("replicas") && explained.contains("<integer>"),
        "{explained}"
    );
    let explained = c.ok(&["explain", "pods.spec.containers"]);
    assert!(explained.contains("image\t<string>"), "{explained}");

    let typo = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports: [{port: 80, targetPrt: 8080}]\n";
    let err = c.fails(&["apply", "-f", "-"], Some(typo));
    assert!(
        err.contains("strict decoding error: unknown field \"spec.ports[0].targetPrt\""),
        "{err}"
    );
    let wrong_type = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: abc\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: nginx}]}\n";
    let err = c.fails(&["apply", "-f", "-"], Some(wrong_type));
    assert!(
        err.contains("cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),
        "{err}"
    );
    // --validate=false sends fieldValidation=Ignore: the unknown field is dropped.
    c.ok_with(&["apply", "--validate=false", "-f", "-"], Some(typo));
    assert_eq!(
        c.ok(&["get", "svc", "web", "-o", "jsonpath={.spec.ports[0].port}"]),
        "80"
    );
    // --validate=warn sends fieldValidation=Warn: the write succeeds and kubectl prints the server's warning.
    let out = c.run(&["apply", "--validate=warn", "-f", "-"], Some(typo));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("Warning: unknown field \"spec.ports[0].targetPrt\""),
        "{err}"
    );
}

#[test]
fn default_cluster_roles_answer_auth_can_i() {
    let c = Cluster::start();
    let roles = c.ok(&["get", "clusterroles", "-o", "name"]);
    for role in [
        "cluster-admin",
        "admin",
        "edit",
        "view",
        "system:basic-user",
        "system:discovery",
    ] {
        assert!(
            roles.contains(&format!("clusterrole.rbac.authorization.k8s.io/{role}\n")),
            "{roles}"
        );
    }
    c.ok(&["create", "namespace", "team"]);
    c.ok(&[
        "create",
        "rolebinding",
        "viewer",
        "-n",
        "team",
        "--clusterrole=view",
        "--user=alice",
    ]);
    c.ok(&[
        "create",
        "rolebinding",
        "editor",
        "-n",
        "team",
        "--clusterrole=edit",
        "--user=bob",
    ]);
    c.ok(&[
        "create",
        "rolebinding",
        "owner",
        "-n",
        "team",
        "--clusterrole=admin",
        "--user=carol",
    ]);
    let can = |user: &str, args: &[&str]| {
        let mut full = vec!["auth", "can-i"];
        full.extend_from_slice(args);
        let as_user = format!("--as={user}");
        full.extend_from_slice(&["-n", "team", as_user.as_str()]);
        String::from_utf8_lossy(&c.run(&full, None).stdout)
            .trim()
            .to_string()
    };
    assert_eq!(can("alice", &["list", "pods"]), "yes");
    assert_eq!(can("alice", &["get", "deployments.apps"]), "yes");
    assert_eq!(can("alice", &["get", "secrets"]), "no");
    assert_eq!(can("alice", &["create", "deployments.apps"]), "no");
    assert_eq!(can("bob", &["create", "deployments.apps"]), "yes");
    assert_eq!(can("bob", &["get", "secrets"]), "yes");
    assert_eq!(
        can("bob", &["create", "roles.rbac.authorization.k8s.io"]),
        "no"
    );
    assert_eq!(
        can(
            "carol",
            &["create", "rolebindings.rbac.authorization.k8s.io"]
        ),
        "yes"
    );
    assert_eq!(can("carol", &["list", "pods", "--all-namespaces"]), "no");
    // Any authenticated user may ask what it may do.
    assert_eq!(
        can(
            "dave",
            &["create", "selfsubjectaccessreviews.authorization.k8s.io"]
        ),
        "yes"
    );

    // A ClusterRole labelled for aggregation extends `view` (and so `edit` and `admin`) at once.
    let leases = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: lease-viewer\n  labels: {rbac.authorization.k8s.io/aggregate-to-view: \"true\"}\nrules:\n- apiGroups: [coordination.k8s.io]\n  resources: [leases]\n  verbs: [get, list]\n";
    assert_eq!(can("alice", &["list", "leases.coordination.k8s.io"]), "no");
    c.ok_with(&["apply", "-f", "-"], Some(leases));
    assert_eq!(can("alice", &["list", "leases.coordination.k8s.io"]), "yes");
    assert_eq!(can("alice", &["list", "nodes"]), "no");
}

#[test]
fn delete_namespace_waits_for_its_contents() {
    let c = Cluster::start();
    c.ok(&["create", "namespace", "doomed"]);
    c.ok(&["create", "configmap", "plain", "-n", "doomed"]);
    c.ok_with(
        &["apply", "-f", "-"],
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  namespace: doomed\n  finalizers: [example.com/hold]\n"),
    );
    // `--wait=false` returns at once: the namespace is Terminating, its held content marked.
    let out = c.ok(&["delete", "namespace", "doomed", "--wait=false"]);
    assert!(out.contains("namespace \"doomed\" deleted"), "{out}");
    assert_eq!(
        c.ok(&[
            "get",
            "namespace",
            "doomed",
            "-o",
            "jsonpath={.status.phase} {.spec.finalizers}"
        ]),
        r#"Terminating ["kubernetes"]"#
    );
    let err = c.fails(&["create", "configmap", "late", "-n", "doomed"], None);
    assert!(
        err.contains(
            "unable to create new content in namespace doomed because it is being terminated"
        ),
        "{err}"
    );
    // Releasing the held object lets the namespace go.
    c.ok(&[
        "patch",
        "configmap",
        "held",
        "-n",
        "doomed",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    c.ok(&["wait", "--for=delete", "namespace/doomed", "--timeout=20s"]);
    let err = c.fails(&["get", "namespace", "doomed"], None);
    assert!(err.contains("not found"), "{err}");

    // A namespace whose contents carry no finalizers: a plain `kubectl delete` returns once it is gone.
    c.ok(&["create", "namespace", "brief"]);
    c.ok(&["create", "configmap", "only", "-n", "brief"]);
    c.ok(&["delete", "namespace", "brief"]);
    let err = c.fails(&["get", "namespace", "brief"], None);
    assert!(err.contains("not found"), "{err}");
}

#[test]
fn required_fields_of_built_in_kinds() {
    let c = Cluster::start();
    let no_selector = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    metadata: {labels: {app: x}}\n    spec:\n      containers:\n      - image: nginx\n";
    // kubectl prints the Status's causes as a list.
    let err = c.fails(&["apply", "-f", "-"], Some(no_selector));
    assert!(
        err.contains("The Deployment \"x\" is invalid: \n* spec.selector: Required value\n* spec.template.spec.containers[0].name: Required value"),
        "{err}"
    );
    let err = c.fails(&["apply", "--server-side", "-f", "-"], Some(no_selector));
    assert!(err.contains("spec.selector: Required value"), "{err}");
    let err = c.fails(
        &["create", "--dry-run=server", "-f", "-"],
        Some(no_selector),
    );
    assert!(err.contains("spec.selector: Required value"), "{err}");
    // A valid Deployment, then a patch removing a required field.
    c.ok_with(&["apply", "-f", "-"], Some(MANIFESTS));
    let err = c.fails(
        &[
            "patch",
            "deploy",
            "web",
            "--type=json",
            "-p",
            r#"[{"op":"remove","path":"/spec/template/spec/containers/0/name"}]"#,
        ],
        None,
    );
    assert!(
        err.contains(r#"The Deployment "web" is invalid: spec.template.spec.containers[0].name: Required value"#),
        "{err}"
    );
}

#[test]
fn strategic_merge_patch_follows_the_schemas() {
    let c = Cluster::start();
    let deployment = r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}
  template:
    metadata: {labels: {app: web}}
    spec:
      volumes:
      - {name: data, emptyDir: {}}
      - {name: conf, configMap: {name: conf}}
      containers:
      - name: app
        image: app:1
        env: [{name: A, value: "1"}, {name: B, value: "2"}]
        ports: [{containerPort: 80}, {containerPort: 443}]
        volumeMounts: [{name: data, mountPath: /data}]
      - name: sidecar
        image: side:1
"#;
    c.ok_with(&["apply", "-f", "-"], Some(deployment));
    let get = |path: &str| c.ok(&["get", "deploy", "web", "-o", &format!("jsonpath={path}")]);
    let patch_web = |kind: &str, body: &str| {
        c.ok(&[
            "patch",
            "deploy",
            "web",
            &format!("--type={kind}"),
            "-p",
            body,
        ]);
    };
    // Merge by name: one container's image changes, one env var is added (first, as kube-apiserver puts
    // items the server did not have), the other container stays.
    patch_web(
        "strategic",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"app:2","env":[{"name":"C","value":"3"}]}]}}}}"#,
    );
    assert_eq!(
        get(
            "{.spec.template.spec.containers[*].name} {.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].env[*].name}"
        ),
        "app sidecar app:2 C A B"
    );
    // `$patch: delete` removes one item by its merge key; `$deleteFromPrimitiveList` a finalizer.
    patch_web(
        "strategic",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"},{"name":"app","ports":[{"containerPort":443,"$patch":"delete"}]}]}}}}"#,
    );
    assert_eq!(
        get(
            "{.spec.template.spec.containers[*].name} {.spec.template.spec.containers[0].ports[*].containerPort}"
        ),
        "app 80"
    );
    patch_web(
        "merge",
        r#"{"metadata":{"finalizers":["a.io/x","b.io/y"]}}"#,
    );
    patch_web(
        "strategic",
        r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":["a.io/x"]}}"#,
    );
    assert_eq!(get("{.metadata.finalizers}"), r#"["b.io/y"]"#);
    patch_web("merge", r#"{"metadata":{"finalizers":null}}"#);
    // `$setElementOrder` orders the merged list; `$retainKeys` clears the union's other members.
    patch_web(
        "strategic",
        r#"{"spec":{"template":{"spec":{"volumes":[{"name":"cache","emptyDir":{}}],"$setElementOrder/volumes":[{"name":"cache"},{"name":"conf"},{"name":"data"}]}}}}"#,
    );
    assert_eq!(
        get("{.spec.template.spec.volumes[*].name}"),
        "cache conf data"
    );
    patch_web(
        "strategic",
        r#"{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}"#,
    );
    assert_eq!(get("{.spec.strategy}"), r#"{"type":"Recreate"}"#);
    // A list without a patch strategy (tolerations) is replaced, not merged.
    patch_web(
        "strategic",
        r#"{"spec":{"template":{"spec":{"tolerations":[{"key":"a","operator":"Exists"}]}}}}"#,
    );
    patch_web(
        "strategic",
        r#"{"spec":{"template":{"spec":{"tolerations":[{"key":"b","operator":"Exists"}]}}}}"#,
    );
    assert_eq!(get("{.spec.template.spec.tolerations[*].key}"), "b");

    // Client-side apply computes a strategic patch (with `$setElementOrder`) from the last applied
    // configuration: dropping an env var and a volume mount from the manifest removes them.
    let applied = r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: site
spec:
  selector: {matchLabels: {app: site}}
  template:
    metadata: {labels: {app: site}}
    spec:
      containers:
      - name: app
        image: app:1
        env: [{name: A, value: "1"}, {name: B, value: "2"}]
        ports: [{containerPort: 80}]
        volumeMounts: [{name: data, mountPath: /data}, {name: tmp, mountPath: /tmp}]
      volumes: [{name: data, emptyDir: {}}, {name: tmp, emptyDir: {}}]
"#;
    c.ok_with(&["apply", "-f", "-"], Some(applied));
    let changed = applied
        .replace(r#", {name: B, value: "2"}"#, r#", {name: C, value: "3"}"#)
        .replace(", {name: tmp, mountPath: /tmp}", "")
        .replace(
            "[{containerPort: 80}]",
            "[{containerPort: 8080}, {containerPort: 80}]",
        );
    let out = c.ok_with(&["apply", "-f", "-"], Some(&changed));
    assert!(out.contains("deployment.apps/site configured"), "{out}");
    let got = c.ok(&[
        "get",
        "deploy",
        "site",
        "-o",
        "jsonpath={.spec.template.spec.containers[0].env[*].name} {.spec.template.spec.containers[0].volumeMounts[*].mountPath} {.spec.template.spec.containers[0].ports[*].containerPort}",
    ]);
    assert_eq!(got, "A C /data 8080 80");
}

/// `kubectl create deployment` sends protobuf, in which Go writes every non-pointer field, zeros included;
/// the stored object is the one a JSON create of the same Deployment stores.
#[test]
fn protobuf_creates_store_what_json_creates_store() {
    let c = Cluster::start();
    let args = ["--image=nginx:1", "--replicas=0", "--port=80"];
    c.ok(&[&["create", "deployment", "proto"][..], &args].concat());
    let client_json = c.ok(&[
        &["create", "deployment", "json"][..],
        &args,
        &["--dry-run=client", "-o", "json"],
    ]
    .concat());
    // `kubectl create -f` of a JSON file sends JSON.
    c.ok_with(&["create", "-f", "-"], Some(&client_json));
    let stored = |name: &str| {
        let text = c.ok(&["get", "deploy", name, "-o", "json", "--show-managed-fields"]);
        let mut object: serde_json::Value = serde_json::from_str(&text).unwrap();
        let meta = object["metadata"].as_object_mut().unwrap();
        for field in ["name", "uid", "resourceVersion", "creationTimestamp"] {
            meta.remove(field);
        }
        for entry in meta["managedFields"].as_array_mut().unwrap() {
            entry.as_object_mut().unwrap().remove("time");
        }
        serde_json::to_string_pretty(&object)
            .unwrap()
            .replace("\"json\"", "\"NAME\"")
            .replace("\"proto\"", "\"NAME\"")
    };
    let (proto, json) = (stored("proto"), stored("json"));
    assert_eq!(proto, json);
    assert!(proto.contains("\"replicas\": 0"), "{proto}");
    assert!(!proto.contains("\"stdin\""), "{proto}");
}

const SCALABLE: &str = r#"
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs}
spec:
  replicas: 1
  selector: {matchLabels: {app: rs}}
  template:
    metadata: {labels: {app: rs}}
    spec: {containers: [{name: c, image: nginx:1}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: sts}
spec:
  replicas: 1
  serviceName: sts
  selector:
    matchLabels: {app: sts}
    matchExpressions: [{key: tier, operator: In, values: [web, db]}]
  template:
    metadata: {labels: {app: sts, tier: web}}
    spec: {containers: [{name: c, image: nginx:1}]}
"#;

#[test]
fn kubectl_scale_uses_the_scale_subresource() {
    let cluster = Cluster::start();
    cluster.ok_with(&["apply", "-f", "-"], Some(MANIFESTS));
    cluster.ok_with(&["apply", "-f", "-"], Some(SCALABLE));
    let replicas = |what: &str| cluster.ok(&["get", what, "-o", "jsonpath={.spec.replicas}"]);

    let out = cluster.ok(&["scale", "deployment/web", "--replicas=5"]);
    assert!(out.contains("deployment.apps/web scaled"), "{out}");
    assert_eq!(replicas("deployment/web"), "5");
    // With --current-replicas kubectl reads the Scale and writes it back with its resourceVersion.
    cluster.ok(&[
        "scale",
        "deployment/web",
        "--current-replicas=5",
        "--replicas=3",
    ]);
    assert_eq!(replicas("deployment/web"), "3");
    let err = cluster.fails(
        &[
            "scale",
            "deployment/web",
            "--current-replicas=7",
            "--replicas=1",
        ],
        None,
    );
    assert!(err.contains("Expected replicas to be 7, was 3"), "{err}");
    assert_eq!(replicas("deployment/web"), "3");

    cluster.ok(&["scale", "replicaset/rs", "statefulset/sts", "--replicas=4"]);
    assert_eq!(replicas("replicaset/rs"), "4");
    assert_eq!(replicas("statefulset/sts"), "4");

    let scale: serde_json::Value = serde_json::from_str(&cluster.ok(&[
        "get",
        "--raw",
        "/apis/apps/v1/namespaces/default/statefulsets/sts/scale",
    ]))
    .unwrap();
    assert_eq!(
        (
            &scale["kind"],
            &scale["apiVersion"],
            &scale["spec"]["replicas"]
        ),
        (
            &serde_json::json!("Scale"),
            &serde_json::json!("autoscaling/v1"),
            &serde_json::json!(4)
        )
    );
    assert_eq!(scale["status"]["selector"], "app=sts,tier in (db,web)");
    // kubectl refuses a negative count itself; the server's own check, through a patch of the Scale.
    let err = cluster.fails(
        &[
            "patch",
            "deployment/web",
            "--subresource=scale",
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":-1}}"#,
        ],
        None,
    );
    assert!(
        err.contains("The Scale \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
        "{err}"
    );
    cluster.ok(&[
        "patch",
        "deployment/web",
        "--subresource=scale",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":2}}"#,
    ]);
    assert_eq!(replicas("deployment/web"), "2");
    // ConfigMaps have no scale subresource.
    let err = cluster.fails(&["scale", "configmap/demo", "--replicas=2"], None);
    assert!(!err.is_empty());
}
