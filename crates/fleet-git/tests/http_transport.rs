//! Fetches over smart HTTP from a local server running the real `git http-backend`: basic auth right and
//! wrong (never echoing the password), https with a private CA (`caBundle`), `insecureSkipTLSVerify`, an
//! untrusted certificate, and an unreachable host.

mod support;

use fleet_bundle::tree::{FileTree, TreePath};
use fleet_git::{GitAuth, GitError, GitSource};
use support::http::GitHttpServer;
use support::{Remote, fetch, new_cache};

const PASSWORD: &str = "correct-horse-battery-staple";

fn remote() -> Remote {
    let remote = Remote::new("private");
    remote.write("app/config.yaml", "secret: false\n");
    remote.commit("first");
    remote
}

fn source(url: String, password: &str) -> GitSource {
    let mut source = GitSource::new(url);
    source.branch = Some("main".into());
    source.auth = GitAuth::Basic {
        username: "fleet".into(),
        password: password.into(),
    };
    source
}

/// `source` trusting the test server's certificate.
fn trusting(server: &GitHttpServer, mut source: GitSource) -> GitSource {
    source.ca_bundle = server.certificate_pem.clone().map(String::into_bytes);
    source
}

#[test]
fn right_credentials_fetch() {
    let remote = remote();
    let server = GitHttpServer::start_tls(remote.root().to_path_buf(), Some(("fleet", PASSWORD)));
    let (_cache_dir, cache) = new_cache();
    let source = trusting(&server, source(server.url("private"), PASSWORD));
    let commit = cache.resolve(&source).unwrap();
    assert_eq!(commit, remote.head());
    let stats = cache.fetch(&source, &commit).unwrap();
    assert!(stats.bytes > 0, "{stats:?}");
    let tree = cache.tree(&source, &commit).unwrap();
    assert_eq!(
        tree.read_file(&TreePath::new("app/config.yaml").unwrap())
            .unwrap(),
        b"secret: false\n"
    );

    // A second commit over http fetches only what is new.
    remote.write("app/config.yaml", "secret: true\n");
    let second = remote.commit("second");
    assert_eq!(cache.resolve(&source).unwrap(), second);
    let stats = cache.fetch(&source, &second).unwrap();
    assert_eq!(
        stats.objects, 4,
        "commit, two trees and one blob: {stats:?}"
    );
}

#[test]
fn wrong_credentials_are_authentication_failed_without_the_password() {
    let remote = remote();
    let server = GitHttpServer::start_tls(remote.root().to_path_buf(), Some(("fleet", PASSWORD)));
    let (_cache_dir, cache) = new_cache();
    let wrong = "wrong-password-42";
    let mut source = trusting(&server, source(server.url("private"), wrong));
    let err = cache.resolve(&source).unwrap_err();
    assert_eq!(
        err,
        GitError::AuthenticationFailed {
            url: server.url("private")
        }
    );
    let message = format!("{err} {err:?}");
    assert!(
        !message.contains(wrong) && !message.contains(PASSWORD),
        "{message}"
    );

    // Credentials in the URL are not echoed either.
    source.url = server
        .url("private")
        .replace("https://", &format!("https://fleet:{wrong}@"));
    source.auth = GitAuth::None;
    let err = cache.resolve(&source).unwrap_err();
    let message = format!("{err} {err:?}");
    assert!(
        matches!(err, GitError::AuthenticationFailed { .. }),
        "{message}"
    );
    assert!(!message.contains(wrong), "{message}");

    // No credentials at all.
    source.url = server.url("private");
    assert!(matches!(
        cache.resolve(&source),
        Err(GitError::AuthenticationFailed { .. })
    ));
}

#[test]
fn https_with_a_private_ca() {
    let remote = remote();
    let server = GitHttpServer::start_tls(remote.root().to_path_buf(), Some(("fleet", PASSWORD)));
    let (_cache_dir, cache) = new_cache();
    let mut source = source(server.url("private"), PASSWORD);

    let err = cache.resolve(&source).unwrap_err();
    assert!(
        matches!(err, GitError::Tls { .. }),
        "an untrusted certificate is refused: {err:?}"
    );
    assert!(err.to_string().contains("caBundle"), "{err}");

    source.ca_bundle = server.certificate_pem.clone().map(String::into_bytes);
    assert_eq!(fetch(&cache, &source), remote.head());

    source.ca_bundle = None;
    source.insecure_skip_tls_verify = true;
    assert_eq!(cache.resolve(&source).unwrap(), remote.head());
}

/// What resolving `scheme://127.0.0.1:<a closed port>/repo.git` with credentials fails with.
fn resolve_at_a_closed_port(scheme: &str) -> GitError {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let (_cache_dir, cache) = new_cache();
    let source = source(format!("{scheme}://127.0.0.1:{port}/repo.git"), PASSWORD);
    cache.resolve(&source).unwrap_err()
}

#[test]
fn a_closed_port_is_unreachable() {
    let err = resolve_at_a_closed_port("https");
    assert!(matches!(err, GitError::Unreachable { .. }), "{err:?}");
    assert!(!format!("{err:?}").contains(PASSWORD));
}

#[test]
fn credentials_are_never_offered_over_plain_http() {
    // Nothing listens on the port: the refusal comes before any connection, not from the server's answer.
    let err = resolve_at_a_closed_port("HTTP");
    assert!(
        matches!(err, GitError::InsecureCredentials { .. }),
        "{err:?}"
    );
    assert!(!format!("{err:?} {err}").contains(PASSWORD));
}
