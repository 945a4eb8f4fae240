//! Running the server as a process: HTTPS with generated certificates and bearer authentication with the admin
//! token (or plain HTTP on loopback, where requests without a token act as the admin), a kubeconfig written for
//! clients, and shutdown on SIGINT/SIGTERM.
//! Used by `fleet apiserver`.

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::server::tls::{Certificates, TlsError};
use crate::server::{ApiServer, Config, StartError};

/// How to run a standalone server.
#[derive(Debug, Clone)]
pub struct Options {
    pub listen: SocketAddr,
    pub data_dir: Option<PathBuf>,
    pub kubeconfig_out: Option<PathBuf>,
    pub plain_http: bool,
    pub watch_history: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("--plain-http is only allowed on a loopback address (got {0})")]
    PlainHttpNotLoopback(SocketAddr),
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error(transparent)]
    Start(#[from] StartError),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot write the kubeconfig {path}: {source}")]
    Kubeconfig {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("serving failed: {0}")]
    Serve(std::io::Error),
}

/// Runs until SIGINT or SIGTERM. Prints the URL on stderr once it accepts connections.
pub async fn run(options: Options) -> Result<(), ServeError> {
    if options.plain_http && !options.listen.ip().is_loopback() {
        return Err(ServeError::PlainHttpNotLoopback(options.listen));
    }
    let certs = if options.plain_http {
        None
    } else {
        Some(Certificates::load_or_generate(
            options.data_dir.as_deref(),
            &[options.listen.ip().to_string()],
        )?)
    };
    let config = Config {
        data_dir: options.data_dir.clone(),
        watch_history: options.watch_history,
        // kubectl (client-go) sends no bearer token over plain HTTP, so the loopback-only plain-HTTP server
        // treats requests without a token as the admin, as kube-apiserver's former localhost insecure port did;
        // tokens that are sent (ServiceAccounts) still get their own identity and RBAC.
        require_auth: !options.plain_http,
        ca_pem: certs.as_ref().map(|c| c.ca_pem.clone()),
        ..Config::default()
    };
    let server = ApiServer::new(config)?;
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(|source| ServeError::Listen {
            addr: options.listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(ServeError::Serve)?;
    let host = match addr.ip() {
        ip if ip.is_unspecified() => "127.0.0.1".to_string(),
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
        ip => ip.to_string(),
    };
    let scheme = if certs.is_some() { "https" } else { "http" };
    let url = format!("{scheme}://{host}:{}", addr.port());
    if let Some(path) = &options.kubeconfig_out {
        write_private(path, &server.kubeconfig(&url)).map_err(|source| ServeError::Kubeconfig {
            path: path.clone(),
            source,
        })?;
    }
    eprintln!("fleet apiserver listening on {url}");
    let serving = async {
        match &certs {
            Some(certs) => server.clone().serve_tls(listener, certs).await,
            None => server.clone().serve(listener).await,
        }
    };
    tokio::select! {
        result = serving => result.map_err(ServeError::Serve)?,
        _ = shutdown_signal() => eprintln!("fleet apiserver: shutting down"),
    }
    Ok(())
}

/// Writes a file only its owner can read (it holds the admin token), whole or not at all: the contents go to a
/// fresh file beside it, which is then renamed over it, so a client waiting for the kubeconfig to appear (a test, a
/// script about to run kubectl) never reads it half-written. fleet-dev writes its kubeconfigs with it too.
pub fn write_private(path: &std::path::Path, content: &str) -> std::io::Result<()> {
    use std::io::Write;
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    let _ = std::fs::remove_file(&tmp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(0o600);
    let written = options
        .open(&tmp)
        .and_then(|mut file| file.write_all(content.as_bytes()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {},
                    _ = term.recv() => {},
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kubeconfig_replaces_an_older_file_whole_and_only_its_owner_can_read_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubeconfig");
        std::fs::write(&path, "an older, longer kubeconfig\n".repeat(10)).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        write_private(&path, "apiVersion: v1\nkind: Config\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "apiVersion: v1\nkind: Config\n"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
    }
}
