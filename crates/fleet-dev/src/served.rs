//! One embedded API server served on a free loopback port over HTTPS (a CA generated for it; kubectl
//! sends bearer tokens only over TLS), requiring a bearer token (the admin token is in its kubeconfig),
//! as the hub or as a simulated downstream cluster.

use std::net::SocketAddr;
use std::sync::Arc;

use fleet_apiserver::tls::Certificates;
use fleet_apiserver::{ApiServer, Config};

use crate::error::{Error, Result};
use crate::task::Task;

/// An API server and the task serving it; dropping it stops serving.
#[derive(Clone)]
pub struct ServedApi {
    pub server: ApiServer,
    pub addr: SocketAddr,
    /// PEM of the CA that signed the serving certificate.
    pub ca_pem: String,
    _serving: Arc<Task>,
}

impl ServedApi {
    /// An in-memory server requiring authentication, listening on `https://127.0.0.1:<free port>`.
    pub async fn start() -> Result<Self> {
        let certs = Certificates::load_or_generate(None, &["127.0.0.1".to_string()])
            .map_err(|e| Error::Tls(e.to_string()))?;
        let server = ApiServer::new(Config {
            require_auth: true,
            ca_pem: Some(certs.ca_pem.clone()),
            ..Config::default()
        })?;
        let (listener, addr) = crate::served::bind_loopback().await?;
        let ca_pem = certs.ca_pem.clone();
        let serving = server.clone();
        let task = Task::spawn(async move {
            if let Err(err) = serving.serve_tls(listener, &certs).await {
                tracing::error!(%addr, error = %err, "API server stopped serving");
            }
        });
        Ok(ServedApi {
            server,
            addr,
            ca_pem,
            _serving: Arc::new(task),
        })
    }

    /// `https://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// An admin client talking to the server in-process.
    pub fn client(&self) -> kube::Client {
        self.server.client()
    }

    /// A kubeconfig with the admin token and the CA, for kubectl.
    pub fn kubeconfig(&self) -> String {
        self.server.kubeconfig(&self.url())
    }
}

/// A listener on a free loopback port, and its address.
pub(crate) async fn bind_loopback() -> Result<(tokio::net::TcpListener, SocketAddr)> {
    let any_port = "127.0.0.1:0";
    let listener = tokio::net::TcpListener::bind(any_port)
        .await
        .map_err(|e| Error::io(any_port, e))?;
    let addr = listener.local_addr().map_err(|e| Error::io(any_port, e))?;
    Ok((listener, addr))
}
