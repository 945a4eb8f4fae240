//! TLS for the network listener: a CA and a serving certificate (localhost, loopback addresses and the
//! listen address) generated with rcgen on first start and kept in the data dir, and an axum listener that
//! performs rustls handshakes off the accept loop so that a slow client cannot stall others.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// Failure to set up TLS.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read or write {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("certificate generation failed: {0}")]
    Generate(#[from] rcgen::Error),
    #[error("invalid certificate or key in {path}")]
    Invalid { path: String },
    #[error("TLS configuration failed: {0}")]
    Rustls(#[from] rustls::Error),
}

/// The CA and serving certificate, as PEM.
#[derive(Clone)]
pub struct Certificates {
    pub ca_pem: String,
    pub cert_pem: String,
    pub key_pem: String,
}

const FILES: [&str; 3] = ["ca.crt", "apiserver.crt", "apiserver.key"];

impl Certificates {
    /// Loads the certificates from `dir`, generating and saving them on first start (or in memory when `dir`
    /// is `None`). `hosts` are extra names or IPs the serving certificate must cover.
    pub fn load_or_generate(
        dir: Option<&Path>,
        hosts: &[String],
    ) -> Result<Certificates, TlsError> {
        if let Some(dir) = dir {
            let read = |name: &str| std::fs::read_to_string(dir.join(name));
            if let (Ok(ca_pem), Ok(cert_pem), Ok(key_pem)) =
                (read(FILES[0]), read(FILES[1]), read(FILES[2]))
            {
                return Ok(Certificates {
                    ca_pem,
                    cert_pem,
                    key_pem,
                });
            }
        }
        let certs = generate(hosts)?;
        if let Some(dir) = dir {
            for (name, content) in
                FILES
                    .iter()
                    .zip([&certs.ca_pem, &certs.cert_pem, &certs.key_pem])
            {
                let path = dir.join(name);
                std::fs::create_dir_all(dir)
                    .and_then(|_| std::fs::write(&path, content))
                    .map_err(|source| TlsError::Io {
                        path: path.display().to_string(),
                        source,
                    })?;
            }
        }
        Ok(certs)
    }

    /// A rustls server configuration serving this certificate.
    pub fn server_config(&self) -> Result<rustls::ServerConfig, TlsError> {
        let cert = pem_body(&self.cert_pem).ok_or(TlsError::Invalid {
            path: FILES[1].into(),
        })?;
        let key = KeyPair::from_pem(&self.key_pem).map_err(|_| TlsError::Invalid {
            path: FILES[2].into(),
        })?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(
                vec![CertificateDer::from(cert)],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            )?;
        Ok(config)
    }
}

fn generate(hosts: &[String]) -> Result<Certificates, TlsError> {
    let ca_key = KeyPair::generate()?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "fleet-apiserver-ca");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    ca_params.not_after = rcgen::date_time_ymd(2100, 1, 1);
    let ca_cert = ca_params.self_signed(&ca_key)?;

    let mut names = vec![
        "localhost".to_string(),
        "127.0.0.1".into(),
        "::1".into(),
        "kubernetes.default.svc".into(),
    ];
    for host in hosts {
        if !names.contains(host) && !host.is_empty() && host != "0.0.0.0" && host != "::" {
            names.push(host.clone());
        }
    }
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(names)?;
    params
        .distinguished_name
        .push(DnType::CommonName, "fleet-apiserver");
    params.not_after = rcgen::date_time_ymd(2100, 1, 1);
    let issuer = Issuer::from_params(&ca_params, &ca_key);
    let cert = params.signed_by(&key, &issuer)?;
    Ok(Certificates {
        ca_pem: ca_cert.pem(),
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

/// The DER bytes of the first PEM block.
fn pem_body(pem: &str) -> Option<Vec<u8>> {
    let body: String = pem
        .lines()
        .skip_while(|l| !l.starts_with("-----BEGIN"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .collect();
    base64::engine::general_purpose::STANDARD.decode(body).ok()
}

/// An axum listener yielding TLS streams; handshakes run in their own tasks with a timeout.
pub struct TlsListener {
    incoming: mpsc::Receiver<(TlsStream<tokio::net::TcpStream>, SocketAddr)>,
    local: SocketAddr,
}

impl TlsListener {
    pub fn new(
        listener: TcpListener,
        config: rustls::ServerConfig,
    ) -> std::io::Result<TlsListener> {
        let local = listener.local_addr()?;
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let (tx, incoming) = mpsc::channel(64);
        tokio::spawn(async move {
            loop {
                let Ok((tcp, addr)) = listener.accept().await else {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                // Small responses go out at once, as kube-apiserver's (Go sets TCP_NODELAY by default).
                let _ = tcp.set_nodelay(true);
                if tx.is_closed() {
                    break;
                }
                let acceptor = acceptor.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    if let Ok(Ok(stream)) =
                        tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await
                    {
                        let _ = tx.send((stream, addr)).await;
                    }
                });
            }
        });
        Ok(TlsListener { incoming, local })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<tokio::net::TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.incoming.recv().await {
            Some(conn) => conn,
            // The accept task ended (cannot happen while the listener lives): wait forever.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        Ok(self.local)
    }
}
