//! Private repositories as Fleet's "Adding a GitRepo" page (gitrepo-add.md) describes them, end to end in dev
//! mode against real servers (the docs fixtures cannot start servers, so this is their part of the page):
//! - the git repository is served over HTTPS by the real `git http-backend` with basic auth and a certificate
//!   of its own (a private CA): the GitRepo reads it with `clientSecretName` (a `kubernetes.io/basic-auth`
//!   Secret) and `caBundle` (or `insecureSkipTLSVerify`); a Secret with the wrong password is an authentication error; the same
//!   repository is read over ssh from the real OpenSSH server with a `kubernetes.io/ssh-auth` Secret (key and
//!   `known_hosts`);
//! - Helm credentials per bundle path (`helmSecretNameForPaths`, a Secret whose `secrets-path.yaml` maps bundle
//!   paths to credentials): the chart of `private-chart` comes from an HTTPS chart repository that wants basic
//!   auth, the chart of `open-chart` from one that wants none, and `unmapped-chart` uses the first repository
//!   with only its CA and no credentials, so its download is refused (401) while the others deploy;
//! - `helmSecretName` (basic auth and `cacerts`) sends its credentials only to chart URLs matching
//!   `helmRepoURLRegex`: with the regex the chart deploys, without one the download is refused (401);
//! - no password appears in any GitRepo, Bundle, BundleDeployment or Event, nor in the logs.
//!
//! Refused host keys and client keys are covered in fleet-git's `sshd` tests, GitHub App credentials in its
//! `github_app` tests (the API host is derived from the repository's, so a local stand-in cannot be reached
//! through the controller).

mod support;

#[path = "../../fleet-chart-source/tests/servers/mod.rs"]
mod servers;

#[allow(dead_code)] // the GitHub App endpoint is for fleet-git's tests
#[path = "../../fleet-git/tests/support/http.rs"]
mod git_http;

#[path = "../../fleet-git/tests/support/sshd.rs"]
mod sshd;

use std::io::Write;
use std::sync::{Arc, Mutex};

use base64::Engine;
use fleet_api::{Bundle, BundleDeployment, GitRepo};
use fleet_dev::Dev;
use fleet_testing::{GitFixture, run_git};
use git_http::GitHttpServer;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, PostParams};
use serde_json::{Value, json};
use servers::{ChartRepo, PASSWORD, USER, serve_versions};
use support::*;

const GIT_USER: &str = "fleet-reader";
const GIT_PASSWORD: &str = "git-Pa55-w0rd-7c1d";

/// Everything written to the log by this test binary.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

fn fleet_yaml(release: &str, repo: &str, chart: &str) -> String {
    format!(
        "defaultNamespace: charts\nhelm:\n  releaseName: {release}\n  repo: {repo}\n  chart: {chart}\n  version: 1.0.0\n"
    )
}

async fn create_gitrepo(dev: &Dev, name: &str, spec: Value) {
    let repo: GitRepo = serde_json::from_value(json!({
        "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "GitRepo",
        "metadata": {"name": name, "namespace": WORKSPACE},
        "spec": spec,
    }))
    .unwrap();
    Api::<GitRepo>::namespaced(dev.hub_client(), WORKSPACE)
        .create(&PostParams::default(), &repo)
        .await
        .unwrap();
}

/// Waits until the ConfigMap `namespace/name` is on cluster-1.
async fn on_cluster_1(dev: &Dev, namespace: &str, name: &str, what: &str) {
    eventually(what, || async {
        configmap(dev, "cluster-1", namespace, name)
            .await
            .map(|_| ())
    })
    .await;
}

/// Waits until the status of the GitRepo `repo` names `needle`; that status as JSON text.
async fn status_naming(dev: &Dev, repo: &str, needle: &str, what: &str) -> String {
    eventually(what, || async {
        let repo = get_gitrepo(dev, repo).await;
        let text = serde_json::to_string(&repo.status?).ok()?;
        text.contains(needle).then_some(text)
    })
    .await
}

async fn get_gitrepo(dev: &Dev, name: &str) -> GitRepo {
    Api::<GitRepo>::namespaced(dev.hub_client(), WORKSPACE)
        .get(name)
        .await
        .unwrap()
}

fn condition_message(repo: &GitRepo, type_: &str) -> Option<(String, String)> {
    let status = serde_json::to_value(repo.status.as_ref()?).ok()?;
    status["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
        .map(|c| {
            (
                c["status"].as_str().unwrap_or("").to_string(),
                c["message"].as_str().unwrap_or("").to_string(),
            )
        })
}

/// The GitRepos, Bundles, BundleDeployments and Events on the hub, as JSON texts.
async fn hub_texts(dev: &Dev) -> Vec<String> {
    let client = dev.hub_client();
    let mut texts = Vec::new();
    let all = ListParams::default();
    for repo in Api::<GitRepo>::all(client.clone())
        .list(&all)
        .await
        .unwrap()
    {
        texts.push(serde_json::to_string(&repo).unwrap());
    }
    for bundle in Api::<Bundle>::all(client.clone()).list(&all).await.unwrap() {
        texts.push(serde_json::to_string(&bundle).unwrap());
    }
    for bd in Api::<BundleDeployment>::all(client.clone())
        .list(&all)
        .await
        .unwrap()
    {
        texts.push(serde_json::to_string(&bd).unwrap());
    }
    for event in Api::<Event>::all(client).list(&all).await.unwrap() {
        texts.push(serde_json::to_string(&event).unwrap());
    }
    texts
}

#[test]
fn private_git_and_helm_repositories() {
    let logs = Logs::default();
    let writer = logs.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .init();

    // Two HTTPS chart repositories with private CAs: one wants basic auth, the other nothing.
    let home = tempfile::tempdir().unwrap();
    let (private_dir, open_dir) = (home.path().join("private"), home.path().join("open"));
    serve_versions(home.path(), "app", &["1.0.0"], &private_dir);
    serve_versions(home.path(), "open", &["1.0.0"], &open_dir);
    let private_charts = ChartRepo::start(&private_dir);
    let open_charts = ChartRepo::start_public(&open_dir);

    // The git repository, pushed to a bare repository served over HTTPS with basic auth.
    let root = tempfile::tempdir().unwrap();
    run_git(
        root.path(),
        &["init", "-q", "--bare", "-b", "main", "private.git"],
    );
    let work = GitFixture::new();
    work.write(
        "private-chart/fleet.yaml",
        &fleet_yaml("private", &private_charts.url(), "app"),
    )
    .write(
        "open-chart/fleet.yaml",
        &fleet_yaml("open", &open_charts.url(), "open"),
    )
    .write(
        "unmapped-chart/fleet.yaml",
        &fleet_yaml("unmapped", &private_charts.url(), "app"),
    );
    work.commit("charts");
    let bare = root.path().join("private.git");
    work.git(&["push", "-q", bare.to_str().unwrap(), "main"]);
    let git = GitHttpServer::start_tls(root.path().to_path_buf(), Some((GIT_USER, GIT_PASSWORD)));
    let keys = tempfile::tempdir().unwrap();
    let (ssh_key, ssh_public) = sshd::keygen(keys.path(), "client");
    let ssh_server = sshd::Sshd::start(&ssh_public);
    let git_ca = git.certificate_pem.clone().unwrap();

    let b64 = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
    let secrets_path = format!(
        "private-chart:\n  username: {USER}\n  password: {PASSWORD}\n  caBundle: {}\n\
         open-chart:\n  caBundle: {}\n\
         unmapped-chart:\n  caBundle: {}\n",
        b64(&private_charts.pki.ca),
        b64(&open_charts.pki.ca),
        b64(&private_charts.pki.ca),
    );

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let state = tempfile::tempdir().unwrap();
        let dev = dev_mode(1, Vec::new(), state.path()).await;
        create_secret(
            &dev,
            "git-auth",
            Some("kubernetes.io/basic-auth"),
            json!({"username": GIT_USER, "password": GIT_PASSWORD}),
        )
        .await;
        create_secret(
            &dev,
            "git-auth-wrong",
            Some("kubernetes.io/basic-auth"),
            json!({"username": GIT_USER, "password": "not-the-Pa55-word"}),
        )
        .await;
        create_secret(
            &dev,
            "chart-paths",
            None,
            json!({"secrets-path.yaml": secrets_path}),
        )
        .await;
        create_secret(
            &dev,
            "chart-auth",
            None,
            json!({"username": USER, "password": PASSWORD, "cacerts": private_charts.pki.ca}),
        )
        .await;
        create_secret(
            &dev,
            "ssh-key",
            Some("kubernetes.io/ssh-auth"),
            json!({"ssh-privatekey": ssh_key, "known_hosts": ssh_server.known_hosts()}),
        )
        .await;
        let all = json!([{"clusterSelector": {}}]);
        // insecureSkipTLSVerify instead of caBundle: the git server's certificate is accepted unverified.
        create_gitrepo(
            &dev,
            "insecure",
            json!({
                "repo": git.url("private"),
                "branch": "main",
                "paths": ["private-chart"],
                "clientSecretName": "git-auth",
                "insecureSkipTLSVerify": true,
                "helmSecretNameForPaths": "chart-paths",
                "targetNamespace": "insecure",
                "targets": all,
            }),
        )
        .await;
        create_gitrepo(
            &dev,
            "over-ssh",
            json!({
                "repo": ssh_server.url(&bare),
                "branch": "main",
                "paths": ["open-chart"],
                "clientSecretName": "ssh-key",
                "helmSecretNameForPaths": "chart-paths",
                "targetNamespace": "over-ssh",
                "targets": all,
            }),
        )
        .await;
        // helmSecretName: its credentials go only to chart URLs that helmRepoURLRegex matches (none without a
        // regex, as in Fleet); its CA is trusted either way. Each GitRepo deploys into its own namespace.
        let regex = private_charts.url().replace('.', "\\.");
        for (name, regex) in [("by-regex", regex.as_str()), ("no-regex", "")] {
            create_gitrepo(
                &dev,
                name,
                json!({
                    "repo": git.url("private"),
                    "branch": "main",
                    "paths": ["private-chart"],
                    "clientSecretName": "git-auth",
                    "caBundle": b64(&git_ca),
                    "helmSecretName": "chart-auth",
                    "helmRepoURLRegex": regex,
                    "targetNamespace": name,
                    "targets": all,
                }),
            )
            .await;
        }
        create_gitrepo(
            &dev,
            "private",
            json!({
                "repo": git.url("private"),
                "branch": "main",
                "clientSecretName": "git-auth",
                "caBundle": b64(&git_ca),
                "helmSecretNameForPaths": "chart-paths",
                "targets": all,
            }),
        )
        .await;
        create_gitrepo(
            &dev,
            "wrong-password",
            json!({
                "repo": git.url("private"),
                "branch": "main",
                "clientSecretName": "git-auth-wrong",
                "caBundle": b64(&git_ca),
                "targets": all,
            }),
        )
        .await;

        // The charts with credentials and without deploy; the one without the credentials it needs does not.
        for name in ["private-app", "open-open"] {
            on_cluster_1(&dev, "charts", name, &format!("{name} deployed")).await;
        }
        let message = status_naming(
            &dev,
            "private",
            "unmapped-chart",
            "the unmapped chart's error on the GitRepo",
        )
        .await;
        assert!(message.contains("401"), "{message}");
        assert!(
            configmap(&dev, "cluster-1", "charts", "unmapped-app")
                .await
                .is_none()
        );

        on_cluster_1(
            &dev,
            "insecure",
            "private-app",
            "the repository read without verifying certificates",
        )
        .await;
        on_cluster_1(
            &dev,
            "over-ssh",
            "open-open",
            "the repository read over ssh",
        )
        .await;
        on_cluster_1(
            &dev,
            "by-regex",
            "private-app",
            "the chart behind the regex deployed",
        )
        .await;
        let message = status_naming(
            &dev,
            "no-regex",
            "private-chart",
            "no credentials without a regex",
        )
        .await;
        assert!(message.contains("401"), "{message}");

        // The wrong password is an authentication error, and nothing is read.
        let (status, message) = eventually("wrong password reported", || async {
            condition_message(&get_gitrepo(&dev, "wrong-password").await, "GitPolling")
                .filter(|(status, _)| status == "False")
        })
        .await;
        assert_eq!(status, "False");
        assert!(
            message.starts_with(&format!("authentication to {} failed", git.url("private"))),
            "{message}"
        );

        let texts = hub_texts(&dev).await;
        assert!(texts.len() > 4, "{texts:?}");
        let logged = logs.text();
        assert!(!logged.is_empty(), "nothing was logged");
        let key_line = ssh_key.lines().nth(1).unwrap();
        for secret in [GIT_PASSWORD, PASSWORD, "not-the-Pa55-word", key_line] {
            for text in texts.iter().chain([&logged]) {
                assert!(!text.contains(secret), "{secret} shows: {text}");
            }
        }
        drop(dev);
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    drop(git);
    drop(ssh_server);
}
