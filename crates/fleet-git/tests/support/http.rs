//! A smart-HTTP git server for tests: axum in front of the real `git http-backend` (run as CGI), with
//! optional basic auth and optional TLS (a self-signed certificate made with rcgen).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use base64::Engine;
use tokio::io::AsyncWriteExt;
use tower::ServiceExt;

const HTTP_BACKEND: &str = "/usr/lib/git-core/git-http-backend";

struct Config {
    project_root: PathBuf,
    credentials: Option<(String, String)>,
    app: Option<AppEndpoint>,
}

/// GitHub's installation-token endpoint for one app (see [`GitHttpServer::start_github_app`]).
#[derive(Clone)]
pub struct AppEndpoint {
    pub app_id: i64,
    pub installation_id: i64,
    /// PEM file of the app's public key, which the app's JWTs must verify against (checked by `openssl`).
    pub public_key: PathBuf,
    /// The installation token it hands out; git requests must then carry `x-access-token:<token>`.
    pub token: String,
}

/// A running server; stopped when dropped.
pub struct GitHttpServer {
    runtime: tokio::runtime::Runtime,
    addr: SocketAddr,
    tls: bool,
    /// PEM of the self-signed certificate when serving TLS.
    pub certificate_pem: Option<String>,
}

impl GitHttpServer {
    /// Serves the bare repositories under `project_root` over plain http; with `credentials`, every request
    /// must carry them as basic auth.
    pub fn start(project_root: PathBuf, credentials: Option<(&str, &str)>) -> Self {
        Self::start_inner(project_root, credentials, false)
    }

    /// The same over https with a certificate for `localhost` and `127.0.0.1` signed by nobody.
    pub fn start_tls(project_root: PathBuf, credentials: Option<(&str, &str)>) -> Self {
        Self::start_inner(project_root, credentials, true)
    }

    /// Over https, a stand-in for GitHub with a GitHub App installed: `POST
    /// /app/installations/<id>/access_tokens` answers the app's token when the request's bearer JWT is
    /// signed by the app's key (verified with `openssl` against `app.public_key`), names the app in `iss`
    /// and is valid now; git requests must authenticate as `x-access-token` with that token.
    pub fn start_github_app(project_root: PathBuf, app: AppEndpoint) -> Self {
        let token = app.token.clone();
        Self::start_with(
            project_root,
            Some(("x-access-token", token.as_str())),
            true,
            Some(app),
        )
    }

    fn start_inner(project_root: PathBuf, credentials: Option<(&str, &str)>, tls: bool) -> Self {
        Self::start_with(project_root, credentials, tls, None)
    }

    fn start_with(
        project_root: PathBuf,
        credentials: Option<(&str, &str)>,
        tls: bool,
        app: Option<AppEndpoint>,
    ) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let config = Arc::new(Config {
            project_root,
            credentials: credentials.map(|(u, p)| (u.to_string(), p.to_string())),
            app,
        });
        let router = axum::Router::new().fallback(handle).with_state(config);
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let mut certificate_pem = None;
        if tls {
            let cert = rcgen::generate_simple_self_signed(vec![
                "localhost".to_string(),
                "127.0.0.1".to_string(),
            ])
            .unwrap();
            certificate_pem = Some(cert.cert.pem());
            let key =
                rustls::pki_types::PrivateKeyDer::Pkcs8(cert.signing_key.serialize_der().into());
            let config = rustls::ServerConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert.cert.der().clone()], key)
            .unwrap();
            let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
            runtime.spawn(async move {
                loop {
                    let Ok((tcp, _)) = listener.accept().await else {
                        break;
                    };
                    let acceptor = acceptor.clone();
                    let router = router.clone();
                    tokio::spawn(async move {
                        let Ok(stream) = acceptor.accept(tcp).await else {
                            return;
                        };
                        let service = hyper::service::service_fn(
                            move |req: hyper::Request<hyper::body::Incoming>| {
                                router.clone().oneshot(req.map(Body::new))
                            },
                        );
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                            .await;
                    });
                }
            });
        } else {
            runtime.spawn(async move { axum::serve(listener, router).await });
        }
        Self {
            runtime,
            addr,
            tls,
            certificate_pem,
        }
    }

    /// The URL of repository `name.git`.
    pub fn url(&self, name: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://localhost:{}/{name}.git", self.addr.port())
    }

    /// The server's base URL (`https://localhost:<port>`).
    pub fn base_url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://localhost:{}", self.addr.port())
    }

    /// Keeps the runtime field used (it owns the server tasks).
    pub fn runtime(&self) -> &tokio::runtime::Runtime {
        &self.runtime
    }
}

async fn handle(State(config): State<Arc<Config>>, request: Request) -> Response {
    if let Some(app) = &config.app
        && request.uri().path()
            == format!("/app/installations/{}/access_tokens", app.installation_id)
    {
        let answer = |status: StatusCode, body: serde_json::Value| {
            Response::builder()
                .status(status)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body.to_string()))
                .unwrap()
        };
        if request.method() != axum::http::Method::POST {
            return answer(
                StatusCode::NOT_FOUND,
                serde_json::json!({"message": "Not Found"}),
            );
        }
        let jwt = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("")
            .to_string();
        return match verify_app_jwt(app, &jwt).await {
            Ok(()) => answer(
                StatusCode::CREATED,
                serde_json::json!({"token": app.token, "expires_at": "2099-01-01T00:00:00Z"}),
            ),
            Err(reason) => answer(
                StatusCode::UNAUTHORIZED,
                serde_json::json!({"message": reason}),
            ),
        };
    }
    if let Some((username, password)) = &config.credentials {
        let expected = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"))
        );
        if request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            != Some(expected.as_str())
        {
            return Response::builder()
                .status(StatusCode::UNAUTHORIZED)
                .header(header::WWW_AUTHENTICATE, "Basic realm=\"git\"")
                .body(Body::from("authentication required"))
                .unwrap();
        }
    }
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    run_cgi(&config, &parts.method, &parts.uri, &parts.headers, body)
        .await
        .unwrap_or_else(|err| {
            Response::builder()
                .status(StatusCode::INTERNAL_SERVER_ERROR)
                .body(Body::from(err))
                .unwrap()
        })
}

async fn run_cgi(
    config: &Config,
    method: &axum::http::Method,
    uri: &axum::http::Uri,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<Response, String> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    let mut child = tokio::process::Command::new(HTTP_BACKEND)
        .env_clear()
        .env("GIT_PROJECT_ROOT", &config.project_root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("REQUEST_METHOD", method.as_str())
        .env("PATH_INFO", uri.path())
        .env("QUERY_STRING", uri.query().unwrap_or(""))
        .env("CONTENT_TYPE", header("content-type"))
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("GIT_PROTOCOL", header("git-protocol"))
        .env("REMOTE_USER", "fleet")
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| err.to_string())?;
    let mut stdin = child.stdin.take().unwrap();
    let writer = tokio::spawn(async move {
        let _ = stdin.write_all(&body).await;
    });
    let output = child
        .wait_with_output()
        .await
        .map_err(|err| err.to_string())?;
    let _ = writer.await;
    let split = output
        .stdout
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| (at, 4))
        .or_else(|| {
            output
                .stdout
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|at| (at, 2))
        })
        .ok_or_else(|| {
            format!(
                "no CGI headers: {}",
                String::from_utf8_lossy(&output.stderr)
            )
        })?;
    let head = String::from_utf8_lossy(&output.stdout[..split.0]).into_owned();
    let mut response = Response::builder().status(StatusCode::OK);
    for line in head.lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("status") {
            let code: u16 = value
                .split_whitespace()
                .next()
                .and_then(|c| c.parse().ok())
                .unwrap_or(500);
            response = response.status(code);
        } else {
            response = response.header(
                name.trim(),
                HeaderValue::from_str(value).map_err(|e| e.to_string())?,
            );
        }
    }
    response
        .body(Body::from(output.stdout[split.0 + split.1..].to_vec()))
        .map_err(|err| err.to_string())
}

/// Checks a GitHub App JWT as GitHub does: RS256 signature by the app's key (verified by `openssl dgst`
/// with the public key), `iss` the app ID, issued in the past and not yet expired, at most ten minutes long.
async fn verify_app_jwt(app: &AppEndpoint, jwt: &str) -> Result<(), String> {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let parts: Vec<&str> = jwt.split('.').collect();
    let [header, claims, signature] = parts[..] else {
        return Err("A JSON web token could not be decoded".into());
    };
    let decode = |part: &str| URL_SAFE_NO_PAD.decode(part).map_err(|e| e.to_string());
    let header: serde_json::Value =
        serde_json::from_slice(&decode(header)?).map_err(|e| e.to_string())?;
    if header["alg"] != "RS256" {
        return Err(format!("unexpected alg {}", header["alg"]));
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let input = dir.path().join("input");
    let sig = dir.path().join("sig");
    std::fs::write(&input, format!("{}.{}", parts[0], parts[1])).map_err(|e| e.to_string())?;
    std::fs::write(&sig, decode(signature)?).map_err(|e| e.to_string())?;
    let output = tokio::process::Command::new("openssl")
        .args(["dgst", "-sha256", "-verify"])
        .arg(&app.public_key)
        .arg("-signature")
        .arg(&sig)
        .arg(&input)
        .output()
        .await
        .map_err(|e| format!("running openssl: {e}"))?;
    if !output.status.success() {
        return Err(
            "'Issuer' claim ('iss') must be an Integer or a signature verification failed".into(),
        );
    }
    let claims: serde_json::Value =
        serde_json::from_slice(&decode(claims)?).map_err(|e| e.to_string())?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let (iat, exp) = (
        claims["iat"].as_i64().unwrap_or(i64::MAX),
        claims["exp"].as_i64().unwrap_or(0),
    );
    if claims["iss"].as_str() != Some(app.app_id.to_string().as_str()) {
        return Err(format!("wrong issuer {}", claims["iss"]));
    }
    if iat > now || exp <= now || exp - iat > 660 {
        return Err("'Expiration time' claim ('exp') is too far in the future".into());
    }
    Ok(())
}
