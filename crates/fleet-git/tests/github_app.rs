//! GitHub App credentials (`github_app_id`, `github_app_installation_id`, `github_app_private_key` in the
//! `clientSecretName` secret), end to end against a local HTTPS server: GitHub itself cannot be reached from a
//! test, so the server stands in for its installation-token endpoint (it verifies the app's JWT with the app's
//! public key through `openssl`, checks its issuer and lifetime, and hands out a token) and serves the
//! repository through the real `git http-backend`, which only answers basic auth `x-access-token:<token>`.
//! The app's RSA key is made by `openssl genrsa`, in the PKCS#1 PEM form GitHub issues.

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use fleet_bundle::tree::{FileTree, TreePath};
use fleet_git::github_app::{
    GITHUB_APP_ID_KEY, GITHUB_APP_INSTALLATION_ID_KEY, GITHUB_APP_PRIVATE_KEY_KEY,
};
use fleet_git::{GitAuth, GitCache, GitError, GitSource};
use support::http::{AppEndpoint, GitHttpServer};
use support::{Remote, fetch, new_cache};

const APP_ID: i64 = 123456;
const INSTALLATION_ID: i64 = 7890;
const TOKEN: &str = "ghs_installationtoken0123456789";

/// A new RSA key: (private key PEM, public key PEM file).
fn app_key(dir: &Path, name: &str) -> (String, std::path::PathBuf) {
    let private = dir.join(format!("{name}.pem"));
    let public = dir.join(format!("{name}.pub.pem"));
    let run = |args: &[&str]| {
        let out = std::process::Command::new("openssl")
            .args(args)
            .output()
            .expect("openssl runs");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[
        "genrsa",
        "-traditional",
        "-out",
        private.to_str().unwrap(),
        "2048",
    ]);
    run(&[
        "rsa",
        "-in",
        private.to_str().unwrap(),
        "-pubout",
        "-out",
        public.to_str().unwrap(),
    ]);
    let pem = std::fs::read_to_string(&private).unwrap();
    assert!(pem.starts_with("-----BEGIN RSA PRIVATE KEY-----"), "{pem}");
    (pem, public)
}

fn secret(app_id: &str, installation: &str, key: &str) -> BTreeMap<String, Vec<u8>> {
    [
        (GITHUB_APP_ID_KEY, app_id),
        (GITHUB_APP_INSTALLATION_ID_KEY, installation),
        (GITHUB_APP_PRIVATE_KEY_KEY, key),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
    .collect()
}

/// The source of `url` authenticating with the app secret `data`, its API at the test server.
fn source(server: &GitHttpServer, data: &BTreeMap<String, Vec<u8>>) -> GitSource {
    let mut auth = GitAuth::from_secret("Opaque", data).expect("a GitHub App secret");
    let GitAuth::GitHubApp(app) = &mut auth else {
        panic!("not read as a GitHub App: {auth:?}");
    };
    app.api_url = Some(server.base_url());
    let mut source = GitSource::new(server.url("private"));
    source.branch = Some("main".into());
    source.auth = auth;
    source.ca_bundle = server.certificate_pem.clone().map(String::into_bytes);
    source
}

/// The repository `private` with one commit, served by a GitHub App endpoint that knows the app's key.
struct AppServer {
    remote: Remote,
    /// Where the app's key pair (`app.pem`, `app.pub.pem`) lives; other keys may be made beside it. The
    /// endpoint reads the public key on every request: keep this as long as the server.
    keys: tempfile::TempDir,
    /// The app's private key (PEM).
    key: String,
    server: GitHttpServer,
}

fn app_server() -> AppServer {
    let remote = Remote::new("private");
    remote.write("app/config.yaml", "app: true\n");
    remote.commit("first");
    let keys = tempfile::tempdir().unwrap();
    let (key, public_key) = app_key(keys.path(), "app");
    let server = GitHttpServer::start_github_app(
        remote.root().to_path_buf(),
        AppEndpoint {
            app_id: APP_ID,
            installation_id: INSTALLATION_ID,
            public_key,
            token: TOKEN.into(),
        },
    );
    AppServer {
        remote,
        keys,
        key,
        server,
    }
}

#[test]
fn an_installation_token_fetches_the_repository() {
    let AppServer {
        remote,
        keys: _keys,
        key,
        server,
    } = app_server();
    let (_cache_dir, cache) = new_cache();
    let source = source(
        &server,
        &secret(&APP_ID.to_string(), &INSTALLATION_ID.to_string(), &key),
    );
    let commit = fetch(&cache, &source);
    assert_eq!(commit, remote.head());
    let tree = cache.tree(&source, &commit).unwrap();
    assert_eq!(
        tree.read_file(&TreePath::new("app/config.yaml").unwrap())
            .unwrap(),
        b"app: true\n"
    );
    assert!(!format!("{source:?}").contains("PRIVATE KEY"));
}

#[test]
fn a_key_of_another_app_is_refused_without_echoing_secrets() {
    let AppServer {
        remote: _remote,
        keys,
        server,
        ..
    } = app_server();
    let (other_key, _) = app_key(keys.path(), "other");
    let cache = GitCache::new(tempfile::tempdir().unwrap().path());

    // Signed by another key: the token endpoint refuses the JWT.
    let wrong_key = source(
        &server,
        &secret(
            &APP_ID.to_string(),
            &INSTALLATION_ID.to_string(),
            &other_key,
        ),
    );
    let err = cache.resolve(&wrong_key).unwrap_err();
    let message = format!("{err} {err:?}");
    assert!(matches!(err, GitError::GitHubApp { .. }), "{message}");
    assert!(message.contains("401"), "{message}");
    assert!(!message.contains("PRIVATE KEY"), "{message}");
    let key_body = other_key.lines().nth(1).unwrap();
    assert!(!message.contains(key_body), "{message}");

    // The right key but another app ID: the issuer does not match.
    let (key, _) = (
        std::fs::read_to_string(keys.path().join("app.pem")).unwrap(),
        (),
    );
    let wrong_app = source(&server, &secret("999", &INSTALLATION_ID.to_string(), &key));
    let err = cache.resolve(&wrong_app).unwrap_err();
    assert!(matches!(err, GitError::GitHubApp { .. }), "{err}");
    assert!(!err.to_string().contains(TOKEN), "{err}");

    // A non-numeric ID is a secret error naming the key.
    let err = GitAuth::from_secret("Opaque", &secret("app", "1", &key)).unwrap_err();
    assert!(err.to_string().contains(GITHUB_APP_ID_KEY), "{err}");
}
