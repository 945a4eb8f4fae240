//! The rustls client configuration for outbound HTTPS (git remotes, Helm repositories, chart URLs, OCI
//! registries): the operating system's roots plus a PEM CA bundle, or, with Fleet's `insecureSkipTLSVerify`, a
//! verifier that accepts any certificate but still checks the handshake signatures. Crypto is `ring`, the
//! workspace's provider.

use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

/// Why a client configuration could not be built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TlsError {
    #[error("the CA bundle is not valid PEM: {0}")]
    InvalidPem(String),
    #[error("the CA bundle holds no PEM certificate")]
    NoCertificate,
    #[error("a certificate of the CA bundle was rejected: {0}")]
    CertificateRejected(String),
    #[error("no TLS protocol version available: {0}")]
    Protocol(String),
}

/// Builds the client configuration: `ca_bundle` (PEM, empty = none) is trusted besides the system roots;
/// `insecure_skip_verify` accepts any certificate chain and name.
pub fn client_config(
    ca_bundle: Option<&[u8]>,
    insecure_skip_verify: bool,
) -> Result<ClientConfig, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|err| TlsError::Protocol(err.to_string()))?;
    if insecure_skip_verify {
        return Ok(builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate {
                algorithms: provider.signature_verification_algorithms,
            }))
            .with_no_client_auth());
    }
    let mut roots = system_roots().clone();
    if let Some(bundle) = ca_bundle.filter(|bundle| !bundle.is_empty()) {
        let certs = CertificateDer::pem_slice_iter(bundle)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|err| TlsError::InvalidPem(err.to_string()))?;
        if certs.is_empty() {
            return Err(TlsError::NoCertificate);
        }
        for cert in certs {
            roots
                .add(cert)
                .map_err(|err| TlsError::CertificateRejected(err.to_string()))?;
        }
    }
    Ok(builder.with_root_certificates(roots).with_no_client_auth())
}

/// The operating system's trusted roots, loaded once.
fn system_roots() -> &'static RootCertStore {
    static ROOTS: OnceLock<RootCertStore> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut roots = RootCertStore::empty();
        let loaded = rustls_native_certs::load_native_certs();
        for err in &loaded.errors {
            tracing::warn!(error = %err, "could not load some system root certificates");
        }
        roots.add_parsable_certificates(loaded.certs);
        roots
    })
}

/// `insecureSkipTLSVerify`: any certificate chain and name is accepted.
#[derive(Debug)]
struct AcceptAnyCertificate {
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_without_certificates_is_refused() {
        let err = client_config(Some(b"not a certificate"), false).unwrap_err();
        assert_eq!(err, TlsError::NoCertificate);
    }

    #[test]
    fn a_broken_pem_block_is_refused() {
        let broken = b"-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n";
        assert!(matches!(
            client_config(Some(broken), false),
            Err(TlsError::InvalidPem(_))
        ));
    }

    #[test]
    fn a_valid_bundle_an_empty_one_and_insecure_mode_are_accepted() {
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        assert!(client_config(Some(cert.cert.pem().as_bytes()), false).is_ok());
        assert!(client_config(Some(b""), false).is_ok());
        assert!(client_config(None, true).is_ok());
    }
}
