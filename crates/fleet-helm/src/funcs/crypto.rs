//! Sprig's key, certificate and password functions: `genPrivateKey`, `genCA`, `genCAWithKey`, `genSelfSignedCert`,
//! `genSelfSignedCertWithKey`, `genSignedCert`, `genSignedCertWithKey`, `buildCustomCert`, `derivePassword`,
//! `encryptAES`/`decryptAES`, `bcrypt`, `htpasswd` and `randBytes`, with Sprig's output shapes: the same PEM block
//! types (`RSA PRIVATE KEY` PKCS#1, `EC PRIVATE KEY` SEC1, `PRIVATE KEY` PKCS#8 for Ed25519), the same certificate
//! fields (128-bit random serial, CN-only subject, validity from now for N days, key usages, server and client
//! auth, basic constraints, SANs, key identifiers as Go's `x509.CreateCertificate` writes them) and the same error
//! texts. Keys come from RustCrypto (`rsa`, `p256`), certificates are written by `rcgen`. All randomness is drawn
//! from the executor's [`Rng`], so a seeded render is reproducible (signatures by ECDSA issuers aside).

use std::net::IpAddr;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use minijinja::value::{Object, ObjectRepr};
use rcgen::{
    CertificateParams, CustomExtension, DistinguishedName, DnType, DnValue, Issuer, KeyPair,
    SerialNumber,
};
use rsa::pkcs1::{DecodeRsaPrivateKey, EncodeRsaPrivateKey};
use rsa::pkcs8::{DecodePrivateKey, EncodePrivateKey};
use sha2::Digest;

use super::{FuncResult, Rng, Table, arity, err, str_arg, to_i64};
use crate::value::{Value, as_list, is_nil};

/// Sprig's `certificate` struct: templates read `.Cert` and `.Key` (both PEM text).
#[derive(Debug, Clone)]
pub struct Certificate {
    pub cert: String,
    pub key: String,
}

impl Object for Certificate {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }
    fn call_method(
        self: &Arc<Self>,
        _state: &mut minijinja::State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, minijinja::Error> {
        let field = match method {
            "Cert" => &self.cert,
            "Key" => &self.key,
            _ => return Err(minijinja::Error::from(minijinja::ErrorKind::UnknownMethod)),
        };
        if !args.is_empty() {
            return Err(minijinja::Error::new(
                minijinja::ErrorKind::InvalidOperation,
                format!("{method} is not a method but has arguments"),
            ));
        }
        Ok(Value::from(field.as_str()))
    }
    /// Go's `%v` of a struct: `{CERT KEY}`.
    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{{{} {}}}", self.cert, self.key)
    }
}

/// Why a key, certificate or cipher function failed; worded as Sprig and Go's crypto packages word it, since
/// templates may show it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CryptoError {
    #[error(transparent)]
    KeyGen(#[from] super::primes::KeyGenError),
    #[error("DSA keys are not supported by fleet's Helm engine")]
    DsaUnsupported,
    #[error("unsupported key type {0}")]
    UnsupportedKeyType(String),
    #[error("invalid private key type {0}")]
    InvalidKeyType(String),
    #[error("no PEM data in input")]
    NoPem,
    #[error("no private key data in PEM block of type {0}")]
    NotAPrivateKey(String),
    #[error("decoding PEM as PKCS#8: {0}")]
    Pkcs8(Box<CryptoError>),
    #[error("x509: unsupported private key type (RSA, P-256 and Ed25519 are supported)")]
    UnsupportedPkcs8,
    #[error("parsing RSA private key from PEM: {0}")]
    BadRsaKey(String),
    #[error("parsing EC private key from PEM: {0} (only P-256 keys are supported)")]
    BadEcKey(String),
    /// A key given as an argument does not parse.
    #[error("parsing private key: {0}")]
    KeyArg(Box<CryptoError>),
    /// A CA's (or `buildCustomCert`'s) key does not parse.
    #[error("error parsing private key: {0}")]
    CaKey(Box<CryptoError>),
    #[error("error generating rsa key: {0}")]
    GenerateRsa(Box<CryptoError>),
    #[error("unable to decode base64 {0}")]
    NotBase64(&'static str),
    #[error("error parsing ip: {0} is not a string")]
    IpNotString(String),
    #[error("error parsing ip: {0}")]
    BadIp(String),
    #[error("error processing alternate dns name: {0} is not a string")]
    DnsNotString(String),
    #[error("x509: {0:?} cannot be encoded as an IA5String")]
    NotIa5(String),
    #[error("error creating certificate: {0}")]
    Create(Box<CryptoError>),
    #[error("unable to decode certificate")]
    UndecodableCert,
    #[error("error parsing certificate: decodedSignerCert.Bytes: {0}")]
    SignerCert(String),
    #[error("error parsing certificate: {0}")]
    ParseCert(String),
    #[error("illegal base64 data: {0}")]
    Base64(String),
    #[error("crypto/cipher: input not full blocks")]
    NotFullBlocks,
    #[error("runtime error: slice bounds out of range")]
    BadPadding,
    /// An encoding, signing or clock library refused (its message).
    #[error("{0}")]
    Library(String),
}

fn lib(e: impl std::fmt::Display) -> CryptoError {
    CryptoError::Library(e.to_string())
}

fn create(e: CryptoError) -> CryptoError {
    CryptoError::Create(Box::new(e))
}

/// A private key of one of the kinds Sprig generates and parses (DSA is not supported).
enum PrivateKey {
    Rsa(Box<rsa::RsaPrivateKey>),
    Ec(p256::SecretKey),
    Ed25519([u8; 32]),
}

/// The PKCS#8 prefix of an Ed25519 private key (RFC 8410): the 32-byte seed follows.
const ED25519_PKCS8_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

impl PrivateKey {
    fn generate_rsa(bits: usize, rng: &mut Rng) -> Result<Self, CryptoError> {
        Ok(PrivateKey::Rsa(Box::new(super::primes::generate_rsa_key(
            bits, rng,
        )?)))
    }

    fn generate(kind: &str, rng: &mut Rng) -> Result<Self, CryptoError> {
        match kind {
            "" | "rsa" => Self::generate_rsa(4096, rng),
            "ecdsa" => Ok(PrivateKey::Ec(p256::SecretKey::random(rng))),
            "ed25519" => {
                let mut seed = [0u8; 32];
                rsa::rand_core::RngCore::fill_bytes(rng, &mut seed);
                Ok(PrivateKey::Ed25519(seed))
            }
            "dsa" => Err(CryptoError::DsaUnsupported),
            _ => Err(CryptoError::UnsupportedKeyType(kind.to_string())),
        }
    }

    /// The PEM block Sprig's `pemBlockForKey` writes.
    fn to_pem(&self) -> Result<String, CryptoError> {
        let (label, der) = match self {
            PrivateKey::Rsa(k) => (
                "RSA PRIVATE KEY",
                k.to_pkcs1_der().map_err(lib)?.as_bytes().to_vec(),
            ),
            PrivateKey::Ec(k) => ("EC PRIVATE KEY", k.to_sec1_der().map_err(lib)?.to_vec()),
            PrivateKey::Ed25519(_) => ("PRIVATE KEY", self.to_pkcs8()?),
        };
        Ok(pem_encode(label, &der))
    }

    fn to_pkcs8(&self) -> Result<Vec<u8>, CryptoError> {
        Ok(match self {
            PrivateKey::Rsa(k) => k.to_pkcs8_der().map_err(lib)?.as_bytes().to_vec(),
            PrivateKey::Ec(k) => k.to_pkcs8_der().map_err(lib)?.as_bytes().to_vec(),
            PrivateKey::Ed25519(seed) => [&ED25519_PKCS8_PREFIX[..], seed].concat(),
        })
    }

    /// The key as rcgen's signer, with the signature algorithm Go picks for the key type.
    fn key_pair(&self) -> Result<KeyPair, CryptoError> {
        let alg = match self {
            PrivateKey::Rsa(_) => &rcgen::PKCS_RSA_SHA256,
            PrivateKey::Ec(_) => &rcgen::PKCS_ECDSA_P256_SHA256,
            PrivateKey::Ed25519(_) => &rcgen::PKCS_ED25519,
        };
        let der = self.to_pkcs8()?;
        KeyPair::from_pkcs8_der_and_sign_algo(&der.as_slice().into(), alg).map_err(lib)
    }

    /// Sprig's `parsePrivateKeyPEM`.
    fn parse_pem(text: &str) -> Result<Self, CryptoError> {
        let (label, der) = pem_decode(text).ok_or(CryptoError::NoPem)?;
        if label == "PRIVATE KEY" {
            return Self::from_pkcs8(&der).map_err(|e| CryptoError::Pkcs8(Box::new(e)));
        }
        let Some(kind) = label.strip_suffix(" PRIVATE KEY") else {
            return Err(CryptoError::NotAPrivateKey(label));
        };
        match kind {
            "RSA" => rsa::RsaPrivateKey::from_pkcs1_der(&der)
                .map(|k| PrivateKey::Rsa(Box::new(k)))
                .map_err(|e| CryptoError::BadRsaKey(e.to_string())),
            "EC" => p256::SecretKey::from_sec1_der(&der)
                .map(PrivateKey::Ec)
                .map_err(|e| CryptoError::BadEcKey(e.to_string())),
            "DSA" => Err(CryptoError::DsaUnsupported),
            _ => Err(CryptoError::InvalidKeyType(label)),
        }
    }

    fn from_pkcs8(der: &[u8]) -> Result<Self, CryptoError> {
        if der.len() == 48 && der[..16] == ED25519_PKCS8_PREFIX {
            let mut seed = [0u8; 32];
            seed.copy_from_slice(&der[16..]);
            return Ok(PrivateKey::Ed25519(seed));
        }
        if let Ok(k) = rsa::RsaPrivateKey::from_pkcs8_der(der) {
            return Ok(PrivateKey::Rsa(Box::new(k)));
        }
        p256::SecretKey::from_pkcs8_der(der)
            .map(PrivateKey::Ec)
            .map_err(|_| CryptoError::UnsupportedPkcs8)
    }
}

/// Go's `pem.Encode`: base64 in 64-column lines.
fn pem_encode(label: &str, der: &[u8]) -> String {
    let b64 = B64.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// The first PEM block in `text`: its label and decoded bytes (headers such as `Proc-Type:` are skipped).
fn pem_decode(text: &str) -> Option<(String, Vec<u8>)> {
    let start = text.find("-----BEGIN ")?;
    let rest = &text[start + 11..];
    let label_end = rest.find("-----")?;
    let label = &rest[..label_end];
    let body = &rest[label_end + 5..];
    let end = body.find(&format!("-----END {label}-----"))?;
    let b64: String = body[..end]
        .lines()
        .filter(|l| !l.contains(':'))
        .flat_map(|l| l.chars())
        .filter(|c| !c.is_whitespace())
        .collect();
    Some((label.to_string(), B64.decode(b64).ok()?))
}

/// What Sprig's `getBaseCertTemplate` fills in, plus the CA flag.
struct CertTemplate {
    cn: String,
    ips: Vec<IpAddr>,
    dns: Vec<String>,
    days: i64,
    is_ca: bool,
}

impl CertTemplate {
    fn new(
        cn: &Value,
        ips: Option<&Value>,
        dns: Option<&Value>,
        days: &Value,
    ) -> Result<Self, CryptoError> {
        Ok(CertTemplate {
            cn: str_arg(cn),
            ips: ips.map(net_ips).transpose()?.unwrap_or_default(),
            dns: dns.map(dns_names).transpose()?.unwrap_or_default(),
            days: to_i64(days),
            is_ca: false,
        })
    }

    /// The certificate fields. Extensions are written as Go's `x509.CreateCertificate` writes them, in its order:
    /// key usage (critical), extended key usage, basic constraints (critical), subject key identifier (CAs only:
    /// the truncated SHA-256 of the public key, Go 1.25's method), authority key identifier (when the issuer is
    /// another certificate with a key identifier), subject alternative names (DNS names, then IPs).
    fn params(
        &self,
        rng: &mut Rng,
        public_key: &[u8],
        issuer_key_id: Option<&[u8]>,
    ) -> Result<CertificateParams, CryptoError> {
        let mut p = CertificateParams::default();
        let mut serial = [0u8; 16];
        rsa::rand_core::RngCore::fill_bytes(rng, &mut serial);
        let first = serial.iter().position(|b| *b != 0).unwrap_or(15);
        p.serial_number = Some(SerialNumber::from_slice(&serial[first..]));
        let now = time::OffsetDateTime::now_utc()
            .replace_nanosecond(0)
            .map_err(lib)?;
        p.not_before = now;
        p.not_after = now + time::Duration::days(self.days);
        let mut dn = DistinguishedName::new();
        if !self.cn.is_empty() {
            // Go writes a PrintableString when the name fits that alphabet, else a UTF8String.
            let value = match rcgen::string::PrintableString::try_from(self.cn.as_str()) {
                Ok(s) => DnValue::PrintableString(s),
                Err(_) => DnValue::Utf8String(self.cn.clone()),
            };
            dn.push(DnType::CommonName, value);
        }
        p.distinguished_name = dn;
        let ext = |oid: &[u64], critical: bool, content: Vec<u8>| {
            let mut e = CustomExtension::from_oid_content(oid, content);
            e.set_criticality(critical);
            e
        };
        // digitalSignature | keyEncipherment (| keyCertSign), as a minimal DER BIT STRING.
        let key_usage = if self.is_ca {
            [0x02, 0xa4]
        } else {
            [0x05, 0xa0]
        };
        p.custom_extensions
            .push(ext(&[2, 5, 29, 15], true, der(0x03, &key_usage)));
        let server_auth = der(0x06, &[0x2b, 6, 1, 5, 5, 7, 3, 1]);
        let client_auth = der(0x06, &[0x2b, 6, 1, 5, 5, 7, 3, 2]);
        p.custom_extensions.push(ext(
            &[2, 5, 29, 37],
            false,
            der(0x30, &[server_auth, client_auth].concat()),
        ));
        let constraints = if self.is_ca {
            der(0x01, &[0xff])
        } else {
            Vec::new()
        };
        p.custom_extensions
            .push(ext(&[2, 5, 29, 19], true, der(0x30, &constraints)));
        if self.is_ca {
            let id = sha2::Sha256::digest(public_key);
            p.custom_extensions
                .push(ext(&[2, 5, 29, 14], false, der(0x04, &id[..20])));
        }
        if let Some(id) = issuer_key_id {
            p.custom_extensions
                .push(ext(&[2, 5, 29, 35], false, der(0x30, &der(0x80, id))));
        }
        let mut names = Vec::new();
        for name in &self.dns {
            if !name.is_ascii() {
                return Err(create(CryptoError::NotIa5(name.clone())));
            }
            names.extend(der(0x82, name.as_bytes()));
        }
        for ip in &self.ips {
            match ip {
                IpAddr::V4(v4) => names.extend(der(0x87, &v4.octets())),
                IpAddr::V6(v6) => names.extend(der(0x87, &v6.octets())),
            }
        }
        if !names.is_empty() {
            p.custom_extensions
                .push(ext(&[2, 5, 29, 17], false, der(0x30, &names)));
        }
        Ok(p)
    }
}

/// One DER element: tag, definite length, content.
fn der(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes: Vec<u8> = len
            .to_be_bytes()
            .into_iter()
            .skip_while(|b| *b == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
    out.extend_from_slice(content);
    out
}

/// Sprig's `getNetIPs`.
fn net_ips(v: &Value) -> Result<Vec<IpAddr>, CryptoError> {
    list_items(v)
        .into_iter()
        .map(|ip| {
            let Some(s) = ip.as_str() else {
                return Err(CryptoError::IpNotString(crate::gofmt::to_go_string(&ip)));
            };
            s.parse::<IpAddr>()
                .map(|ip| ip.to_canonical())
                .map_err(|_| CryptoError::BadIp(s.to_string()))
        })
        .collect()
}

/// Sprig's `getAlternateDNSStrs`.
fn dns_names(v: &Value) -> Result<Vec<String>, CryptoError> {
    list_items(v)
        .into_iter()
        .map(|d| match d.as_str() {
            Some(s) => Ok(s.to_string()),
            None => Err(CryptoError::DnsNotString(crate::gofmt::to_go_string(&d))),
        })
        .collect()
}

fn list_items(v: &Value) -> Vec<Value> {
    if is_nil(v) {
        Vec::new()
    } else {
        as_list(v).unwrap_or_default()
    }
}

/// Sprig's `getCertAndKey`: the certificate for `subject_key`, self-signed or signed by `issuer` (CA PEM and key).
fn issue(
    tpl: &CertTemplate,
    subject_key: &PrivateKey,
    issuer: Option<(&str, &PrivateKey)>,
    rng: &mut Rng,
) -> Result<Certificate, CryptoError> {
    let subject_pair = subject_key.key_pair().map_err(create)?;
    let cert = match issuer {
        None => tpl
            .params(rng, subject_pair.public_key_raw(), None)?
            .self_signed(&subject_pair),
        Some((ca_pem, ca_key)) => {
            let ca_pair = ca_key.key_pair().map_err(create)?;
            let (_, ca_der) = pem_decode(ca_pem).ok_or(CryptoError::UndecodableCert)?;
            let (_, ca) = x509_parser::parse_x509_certificate(&ca_der)
                .map_err(|e| CryptoError::SignerCert(e.to_string()))?;
            // Go names the issuer's key when the issuer is another certificate with a key identifier.
            let ca_key_id = ca
                .extensions()
                .iter()
                .find_map(|e| match e.parsed_extension() {
                    x509_parser::extensions::ParsedExtension::SubjectKeyIdentifier(id) => {
                        Some(id.0.to_vec())
                    }
                    _ => None,
                });
            let other_subject = ca.subject().to_string() != format!("CN={}", tpl.cn);
            let aki = ca_key_id.as_deref().filter(|_| other_subject);
            let params = tpl.params(rng, subject_pair.public_key_raw(), aki)?;
            let issuer = Issuer::from_ca_cert_der(&ca_der.as_slice().into(), ca_pair)
                .map_err(|e| CryptoError::ParseCert(e.to_string()))?;
            params.signed_by(&subject_pair, &issuer)
        }
    }
    .map_err(|e| create(lib(e)))?;
    let der = cert.der();
    Ok(Certificate {
        cert: pem_encode("CERTIFICATE", der),
        key: subject_key.to_pem()?,
    })
}

fn cert_value(r: Result<Certificate, CryptoError>) -> FuncResult {
    match r {
        Ok(c) => Ok(Value::from_object(c)),
        Err(e) => Err(super::FuncError::msg(e)),
    }
}

fn cert_arg(v: &Value, name: &str) -> Result<Certificate, super::FuncError> {
    match v.downcast_object_ref::<Certificate>() {
        Some(c) => Ok(c.clone()),
        None => err(format!(
            "wrong type for value in {name}; expected sprig.certificate; got {}",
            crate::value::type_name(v)
        )),
    }
}

fn parse_key_arg(v: &Value) -> Result<PrivateKey, CryptoError> {
    PrivateKey::parse_pem(&str_arg(v)).map_err(|e| CryptoError::KeyArg(Box::new(e)))
}

/// Signs a leaf with the CA's certificate and key (Sprig's `generateSignedCertificateWithKeyInternal`).
fn signed_by_ca(
    tpl: &CertTemplate,
    key: &PrivateKey,
    ca: &Certificate,
    rng: &mut Rng,
) -> Result<Certificate, CryptoError> {
    let (label, _) = pem_decode(&ca.cert).ok_or(CryptoError::UndecodableCert)?;
    if label != "CERTIFICATE" {
        return Err(CryptoError::UndecodableCert);
    }
    let ca_key = PrivateKey::parse_pem(&ca.key).map_err(|e| CryptoError::CaKey(Box::new(e)))?;
    issue(tpl, key, Some((&ca.cert, &ca_key)), rng)
}

/// The masterpassword algorithm Sprig's `derivePassword` implements.
pub(crate) fn derive_password(
    counter: u32,
    kind: &str,
    password: &str,
    user: &str,
    site: &str,
) -> String {
    use hmac::{KeyInit, Mac};
    const SEED: &str = "com.lyndir.masterpassword";
    let templates: &[&str] = match kind {
        "maximum" => &["anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"],
        "long" => &[
            "CvcvnoCvcvCvcv",
            "CvcvCvcvnoCvcv",
            "CvcvCvcvCvcvno",
            "CvccnoCvcvCvcv",
            "CvccCvcvnoCvcv",
            "CvccCvcvCvcvno",
            "CvcvnoCvccCvcv",
            "CvcvCvccnoCvcv",
            "CvcvCvccCvcvno",
            "CvcvnoCvcvCvcc",
            "CvcvCvcvnoCvcc",
            "CvcvCvcvCvccno",
            "CvccnoCvccCvcv",
            "CvccCvccnoCvcv",
            "CvccCvccCvcvno",
            "CvcvnoCvccCvcc",
            "CvcvCvccnoCvcc",
            "CvcvCvccCvccno",
            "CvccnoCvcvCvcc",
            "CvccCvcvnoCvcc",
            "CvccCvcvCvccno",
        ],
        "medium" => &["CvcnoCvc", "CvcCvcno"],
        "short" => &["Cvcn"],
        "basic" => &["aaanaaan", "aannaaan", "aaannaaa"],
        "pin" => &["nnnn"],
        _ => return format!("cannot find password template {kind}"),
    };
    let mut salt = SEED.as_bytes().to_vec();
    salt.extend_from_slice(&(user.len() as u32).to_be_bytes());
    salt.extend_from_slice(user.as_bytes());
    let mut key = [0u8; 64];
    let derived = scrypt::Params::new(15, 8, 2, 64)
        .map_err(lib)
        .and_then(|p| scrypt::scrypt(password.as_bytes(), &salt, &p, &mut key).map_err(lib));
    if let Err(e) = derived {
        return format!("failed to derive password: {e}");
    }
    let mut msg = SEED.as_bytes().to_vec();
    msg.extend_from_slice(&(site.len() as u32).to_be_bytes());
    msg.extend_from_slice(site.as_bytes());
    msg.extend_from_slice(&counter.to_be_bytes());
    let Ok(mut mac) = hmac::Hmac::<sha2::Sha256>::new_from_slice(&key) else {
        return "failed to derive password: bad key".into();
    };
    mac.update(&msg);
    let seed = mac.finalize().into_bytes();
    let template = templates[seed[0] as usize % templates.len()];
    template
        .bytes()
        .enumerate()
        .map(|(i, class)| {
            let chars: &[u8] = match class {
                b'V' => b"AEIOU",
                b'C' => b"BCDFGHJKLMNPQRSTVWXYZ",
                b'v' => b"aeiou",
                b'c' => b"bcdfghjklmnpqrstvwxyz",
                b'A' => b"AEIOUBCDFGHJKLMNPQRSTVWXYZ",
                b'a' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz",
                b'n' => b"0123456789",
                b'o' => b"@&%?,=[]_:-+*$#!'^~;()/.",
                _ => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()",
            };
            chars[seed[i + 1] as usize % chars.len()] as char
        })
        .collect()
}

/// Sprig's `bcrypt`: cost 10, `$2a$`, failures returned as text (as Sprig does).
fn bcrypt_hash(password: &str, rng: &mut Rng) -> String {
    let mut salt = [0u8; 16];
    rsa::rand_core::RngCore::fill_bytes(rng, &mut salt);
    match bcrypt::non_truncating_hash_with_salt(password, 10, salt) {
        Ok(h) => h.format_for_version(bcrypt::Version::TwoA),
        Err(bcrypt::BcryptError::Truncation(_)) => {
            "failed to encrypt string with bcrypt: bcrypt: password length exceeds 72 bytes".into()
        }
        Err(e) => format!("failed to encrypt string with bcrypt: {e}"),
    }
}

/// Sprig's AES key: the password's bytes, zero-padded or cut to 32.
fn aes_key(password: &str) -> [u8; 32] {
    let mut key = [0u8; 32];
    let n = password.len().min(32);
    key[..n].copy_from_slice(&password.as_bytes()[..n]);
    key
}

/// Sprig's `encryptAES`: AES-256-CBC, PKCS#7 padding, random IV in front, base64.
pub(crate) fn encrypt_aes(password: &str, plaintext: &str, rng: &mut Rng) -> String {
    use cbc::cipher::{BlockEncryptMut, KeyIvInit, block_padding::Pkcs7};
    if plaintext.is_empty() {
        return String::new();
    }
    let mut iv = [0u8; 16];
    rsa::rand_core::RngCore::fill_bytes(rng, &mut iv);
    let enc = cbc::Encryptor::<aes::Aes256>::new(&aes_key(password).into(), &iv.into());
    let ct = enc.encrypt_padded_vec_mut::<Pkcs7>(plaintext.as_bytes());
    B64.encode([&iv[..], &ct].concat())
}

/// Sprig's `decryptAES`.
pub(crate) fn decrypt_aes(password: &str, encoded: &str) -> Result<String, CryptoError> {
    use cbc::cipher::{BlockDecryptMut, KeyIvInit, block_padding::NoPadding};
    if encoded.is_empty() {
        return Ok(String::new());
    }
    let data = B64
        .decode(encoded)
        .map_err(|e| CryptoError::Base64(e.to_string()))?;
    if data.len() < 32 || data.len() % 16 != 0 {
        return Err(CryptoError::NotFullBlocks);
    }
    let (iv, ct) = data.split_at(16);
    let dec = cbc::Decryptor::<aes::Aes256>::new(&aes_key(password).into(), iv.into());
    let plain = dec.decrypt_padded_vec_mut::<NoPadding>(ct).map_err(lib)?;
    // Sprig strips as many bytes as the last byte says, without checking the padding.
    let pad = plain[plain.len() - 1] as usize;
    let keep = plain
        .len()
        .checked_sub(pad)
        .ok_or(CryptoError::BadPadding)?;
    Ok(String::from_utf8_lossy(&plain[..keep]).into_owned())
}

pub(super) fn register(t: &mut Table) {
    t.insert("genPrivateKey", |ex, a| {
        arity("genPrivateKey", a, 1)?;
        let kind = str_arg(&a[0]);
        if !matches!(kind.as_str(), "" | "rsa" | "ecdsa" | "ed25519" | "dsa") {
            return Ok(Value::from(format!("Unknown type {kind}")));
        }
        let key = PrivateKey::generate(&kind, ex.rng).and_then(|k| k.to_pem());
        Ok(Value::from(key.unwrap_or_else(|e| {
            format!("failed to generate private key: {e}")
        })))
    });
    t.insert("genCA", |ex, a| {
        arity("genCA", a, 2)?;
        let mut tpl = CertTemplate::new(&a[0], None, None, &a[1]).map_err(super::FuncError::msg)?;
        tpl.is_ca = true;
        let r = PrivateKey::generate_rsa(2048, ex.rng)
            .map_err(|e| CryptoError::GenerateRsa(Box::new(e)))
            .and_then(|k| issue(&tpl, &k, None, ex.rng));
        cert_value(r)
    });
    t.insert("genCAWithKey", |ex, a| {
        arity("genCAWithKey", a, 3)?;
        let mut tpl = CertTemplate::new(&a[0], None, None, &a[1]).map_err(super::FuncError::msg)?;
        tpl.is_ca = true;
        cert_value(parse_key_arg(&a[2]).and_then(|k| issue(&tpl, &k, None, ex.rng)))
    });
    t.insert("genSelfSignedCert", |ex, a| {
        arity("genSelfSignedCert", a, 4)?;
        let r = CertTemplate::new(&a[0], Some(&a[1]), Some(&a[2]), &a[3]).and_then(|tpl| {
            let key = PrivateKey::generate_rsa(2048, ex.rng)
                .map_err(|e| CryptoError::GenerateRsa(Box::new(e)))?;
            issue(&tpl, &key, None, ex.rng)
        });
        cert_value(r)
    });
    t.insert("genSelfSignedCertWithKey", |ex, a| {
        arity("genSelfSignedCertWithKey", a, 5)?;
        let r = CertTemplate::new(&a[0], Some(&a[1]), Some(&a[2]), &a[3]).and_then(|tpl| {
            let key = parse_key_arg(&a[4])?;
            issue(&tpl, &key, None, ex.rng)
        });
        cert_value(r)
    });
    t.insert("genSignedCert", |ex, a| {
        arity("genSignedCert", a, 5)?;
        let ca = cert_arg(&a[4], "genSignedCert")?;
        let r = CertTemplate::new(&a[0], Some(&a[1]), Some(&a[2]), &a[3]).and_then(|tpl| {
            let key = PrivateKey::generate_rsa(2048, ex.rng)
                .map_err(|e| CryptoError::GenerateRsa(Box::new(e)))?;
            signed_by_ca(&tpl, &key, &ca, ex.rng)
        });
        cert_value(r)
    });
    t.insert("genSignedCertWithKey", |ex, a| {
        arity("genSignedCertWithKey", a, 6)?;
        let ca = cert_arg(&a[4], "genSignedCertWithKey")?;
        let r = CertTemplate::new(&a[0], Some(&a[1]), Some(&a[2]), &a[3]).and_then(|tpl| {
            let key = parse_key_arg(&a[5])?;
            signed_by_ca(&tpl, &key, &ca, ex.rng)
        });
        cert_value(r)
    });
    t.insert("buildCustomCert", |_, a| {
        arity("buildCustomCert", a, 2)?;
        let decode = |v: &Value, what: &'static str| {
            B64.decode(str_arg(v))
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .map_err(|_| CryptoError::NotBase64(what))
        };
        let r = (|| {
            let cert = decode(&a[0], "certificate")?;
            let key = decode(&a[1], "private key")?;
            match pem_decode(&cert) {
                Some((label, _)) if label == "CERTIFICATE" => {}
                _ => return Err(CryptoError::UndecodableCert),
            }
            PrivateKey::parse_pem(&key).map_err(|e| CryptoError::CaKey(Box::new(e)))?;
            Ok(Certificate { cert, key })
        })();
        cert_value(r)
    });
    t.insert("derivePassword", |_, a| {
        arity("derivePassword", a, 5)?;
        let counter = u32::try_from(to_i64(&a[0])).unwrap_or(0);
        let [kind, password, user, site] = [&a[1], &a[2], &a[3], &a[4]].map(str_arg);
        Ok(Value::from(derive_password(
            counter, &kind, &password, &user, &site,
        )))
    });
    t.insert("encryptAES", |ex, a| {
        arity("encryptAES", a, 2)?;
        Ok(Value::from(encrypt_aes(
            &str_arg(&a[0]),
            &str_arg(&a[1]),
            ex.rng,
        )))
    });
    t.insert("decryptAES", |_, a| {
        arity("decryptAES", a, 2)?;
        match decrypt_aes(&str_arg(&a[0]), &str_arg(&a[1])) {
            Ok(s) => Ok(Value::from(s)),
            Err(e) => Err(super::FuncError::msg(e)),
        }
    });
    t.insert("bcrypt", |ex, a| {
        arity("bcrypt", a, 1)?;
        Ok(Value::from(bcrypt_hash(&str_arg(&a[0]), ex.rng)))
    });
    t.insert("htpasswd", |ex, a| {
        arity("htpasswd", a, 2)?;
        let user = str_arg(&a[0]);
        if user.contains(':') {
            return Ok(Value::from(format!("invalid username: {user}")));
        }
        Ok(Value::from(format!(
            "{user}:{}",
            bcrypt_hash(&str_arg(&a[1]), ex.rng)
        )))
    });
    t.insert("randBytes", |ex, a| {
        arity("randBytes", a, 1)?;
        let n = to_i64(&a[0]);
        if !(0..=1 << 20).contains(&n) {
            return err(format!("randBytes: invalid length {n}"));
        }
        let mut buf = vec![0u8; n as usize];
        rsa::rand_core::RngCore::fill_bytes(ex.rng, &mut buf);
        Ok(Value::from(B64.encode(buf)))
    });
}
