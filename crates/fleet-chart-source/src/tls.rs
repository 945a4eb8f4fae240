//! The rustls client configuration for chart sources: the system roots plus the credentials' CA bundle, or,
//! with `insecureSkipTLSVerify`, a verifier that accepts any certificate but still checks handshake signatures.

use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::error::SourceError;

pub(crate) fn client_config(
    ca_bundle: Option<&[u8]>,
    insecure_skip_verify: bool,
) -> Result<ClientConfig, SourceError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|err| SourceError::Tls(err.to_string()))?;
    if insecure_skip_verify {
        return Ok(builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate {
                algorithms: provider.signature_verification_algorithms,
            }))
            .with_no_client_auth());
    }
    let mut roots = system_roots().clone();
    if let Some(bundle) = ca_bundle.filter(|b| !b.is_empty()) {
        let certs = CertificateDer::pem_slice_iter(bundle)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|err| SourceError::Tls(format!("the CA bundle is not valid PEM: {err}")))?;
        if certs.is_empty() {
            return Err(SourceError::Tls(
                "the CA bundle holds no PEM certificate".to_string(),
            ));
        }
        for cert in certs {
            roots
                .add(cert)
                .map_err(|err| SourceError::Tls(format!("CA certificate rejected: {err}")))?;
        }
    }
    Ok(builder.with_root_certificates(roots).with_no_client_auth())
}

fn system_roots() -> &'static RootCertStore {
    static ROOTS: OnceLock<RootCertStore> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut roots = RootCertStore::empty();
        let loaded = rustls_native_certs::load_native_certs();
        roots.add_parsable_certificates(loaded.certs);
        roots
    })
}

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
