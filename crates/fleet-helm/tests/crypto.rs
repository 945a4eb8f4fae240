//! Sprig's key, certificate and password functions: the generated PEM blocks and certificates are parsed and their
//! fields checked against what Sprig (Go's `x509.CreateCertificate`) writes; deterministic functions are checked
//! against Sprig's own vectors and vectors made with `openssl enc`.

use fleet_helm::TemplateSet;
use fleet_helm::funcs::{Funcs, Rng};
use fleet_helm::template::exec::Exec;
use x509_parser::prelude::*;

fn render_seeded(src: &str, seed: u64) -> Result<String, String> {
    let mut set = TemplateSet::new();
    set.add_file("t", src).map_err(|e| e.to_string())?;
    let mut ex = Exec::new(&set, Funcs::helm());
    ex.rng = Rng::seeded(seed);
    ex.execute("t", &fleet_helm::Value::from(()))
        .map_err(|e| e.to_string())
}

fn render(src: &str) -> String {
    render_seeded(src, 42).unwrap_or_else(|e| panic!("{src}: {e}"))
}

/// The single PEM block in `text`: label and DER.
fn pem(text: &str) -> (String, Vec<u8>) {
    let (_, p) = x509_parser::pem::parse_x509_pem(text.as_bytes()).expect("a PEM block");
    assert!(
        text.ends_with(&format!("-----END {}-----\n", p.label)),
        "Go's PEM ends with a newline: {text:?}"
    );
    for line in text.lines().filter(|l| !l.starts_with("-----")) {
        assert!(line.len() <= 64, "64-column PEM lines: {line}");
    }
    (p.label, p.contents)
}

/// `genCA "name" days` then `genSignedCert` with it, printed as four PEM texts separated by `|`.
fn ca_and_leaf(src_extra: &str) -> Vec<String> {
    let out = render(&format!(
        "{{{{ $ca := genCA \"fleet-ca\" 365 }}}}{{{{ $c := genSignedCert \"web.example.com\" (list \"10.0.0.1\" \"::1\") \
         (list \"web.example.com\" \"web\") 30 $ca }}}}{{{{ $ca.Cert }}}}|{{{{ $ca.Key }}}}|{{{{ $c.Cert }}}}|{{{{ $c.Key }}}}{src_extra}"
    ));
    out.split('|').map(str::to_string).collect()
}

fn days(cert: &X509Certificate<'_>) -> i64 {
    let v = cert.validity();
    (v.not_after.timestamp() - v.not_before.timestamp()) / 86_400
}

fn ext_oids(cert: &X509Certificate<'_>) -> Vec<String> {
    cert.extensions()
        .iter()
        .map(|e| e.oid.to_id_string())
        .collect()
}

#[test]
fn gen_ca_and_signed_cert_have_sprigs_fields() {
    let parts = ca_and_leaf("");
    let (ca_label, ca_der) = pem(&parts[0]);
    assert_eq!(ca_label, "CERTIFICATE");
    let (_, ca) = X509Certificate::from_der(&ca_der).unwrap();
    assert_eq!(ca.subject().to_string(), "CN=fleet-ca");
    assert_eq!(ca.issuer(), ca.subject());
    assert_eq!(days(&ca), 365);
    let now = chrono::Utc::now().timestamp();
    assert!((ca.validity().not_before.timestamp() - now).abs() < 600);
    assert!(ca.raw_serial().len() <= 17, "serial below 2^128");
    assert_eq!(
        ca.signature_algorithm.algorithm,
        x509_parser::oid_registry::OID_PKCS1_SHA256WITHRSA
    );
    let bc = ca.basic_constraints().unwrap().unwrap();
    assert!(bc.critical && bc.value.ca && bc.value.path_len_constraint.is_none());
    let ku = ca.key_usage().unwrap().unwrap();
    assert!(ku.critical);
    assert!(
        ku.value.digital_signature() && ku.value.key_encipherment() && ku.value.key_cert_sign()
    );
    assert!(!ku.value.crl_sign());
    let eku = ca.extended_key_usage().unwrap().unwrap().value;
    assert!(eku.server_auth && eku.client_auth && !eku.code_signing);
    let ski = ca
        .extensions()
        .iter()
        .find_map(|e| match e.parsed_extension() {
            ParsedExtension::SubjectKeyIdentifier(k) => Some(k.0.to_vec()),
            _ => None,
        })
        .expect("a CA carries a subject key identifier");
    assert_eq!(
        ext_oids(&ca),
        ["2.5.29.15", "2.5.29.37", "2.5.29.19", "2.5.29.14"],
        "Go's extension order: key usage, EKU, basic constraints, SKI"
    );
    use sha2::Digest;
    let key_bits = &ca.public_key().subject_public_key.data;
    assert_eq!(
        ski,
        sha2::Sha256::digest(key_bits)[..20],
        "Go 1.25's truncated SHA-256 key id"
    );
    assert!(
        !ext_oids(&ca).contains(&"2.5.29.35".to_string()),
        "self-signed: no AKI"
    );
    ca.verify_signature(None)
        .expect("self-signed signature verifies");

    let (key_label, key_der) = pem(&parts[1]);
    assert_eq!(key_label, "RSA PRIVATE KEY");
    use rsa::pkcs1::DecodeRsaPrivateKey;
    use rsa::traits::PublicKeyParts;
    let key = rsa::RsaPrivateKey::from_pkcs1_der(&key_der).unwrap();
    assert_eq!(key.size() * 8, 2048);

    let (_, leaf_der) = pem(&parts[2]);
    let (_, leaf) = X509Certificate::from_der(&leaf_der).unwrap();
    assert_eq!(leaf.subject().to_string(), "CN=web.example.com");
    assert_eq!(leaf.issuer(), ca.subject());
    assert_eq!(days(&leaf), 30);
    leaf.verify_signature(Some(ca.public_key()))
        .expect("signed by the CA");
    let bc = leaf.basic_constraints().unwrap().unwrap();
    assert!(bc.critical && !bc.value.ca);
    let ku = leaf.key_usage().unwrap().unwrap().value;
    assert!(ku.digital_signature() && ku.key_encipherment() && !ku.key_cert_sign());
    let san = leaf.subject_alternative_name().unwrap().unwrap().value;
    let names: Vec<String> = san.general_names.iter().map(|n| n.to_string()).collect();
    assert_eq!(
        names,
        [
            "DNSName(web.example.com)",
            "DNSName(web)",
            "IPAddress(0a:00:00:01)",
            "IPAddress(00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:01)"
        ]
    );
    let aki = leaf
        .extensions()
        .iter()
        .find_map(|e| match e.parsed_extension() {
            ParsedExtension::AuthorityKeyIdentifier(a) => {
                a.key_identifier.as_ref().map(|k| k.0.to_vec())
            }
            _ => None,
        })
        .expect("a signed leaf names its issuer's key");
    assert_eq!(aki, ski);
    assert_eq!(
        ext_oids(&leaf),
        [
            "2.5.29.15",
            "2.5.29.37",
            "2.5.29.19",
            "2.5.29.35",
            "2.5.29.17"
        ],
        "Go's extension order, no SKI on a leaf"
    );
    assert!(
        !ext_oids(&leaf).contains(&"2.5.29.14".to_string()),
        "leaf: no SKI, as Go"
    );
    assert_eq!(pem(&parts[3]).0, "RSA PRIVATE KEY");
}

#[test]
fn self_signed_with_given_keys_keeps_the_key_and_its_algorithm() {
    for (kind, label, alg) in [
        (
            "ecdsa",
            "EC PRIVATE KEY",
            x509_parser::oid_registry::OID_SIG_ECDSA_WITH_SHA256,
        ),
        (
            "ed25519",
            "PRIVATE KEY",
            x509_parser::oid_registry::OID_SIG_ED25519,
        ),
    ] {
        let out = render(&format!(
            "{{{{ $k := genPrivateKey \"{kind}\" }}}}{{{{ $c := genSelfSignedCertWithKey \"self\" nil (list \"a.example\") 7 $k }}}}\
             {{{{ $k }}}}|{{{{ $c.Key }}}}|{{{{ $c.Cert }}}}"
        ));
        let parts: Vec<&str> = out.split('|').collect();
        assert_eq!(
            parts[0], parts[1],
            "{kind}: the certificate's key is the key given"
        );
        assert_eq!(pem(parts[0]).0, label);
        let (_, der) = pem(parts[2]);
        let (_, cert) = X509Certificate::from_der(&der).unwrap();
        assert_eq!(cert.signature_algorithm.algorithm, alg, "{kind}");
        assert_eq!(cert.subject().to_string(), "CN=self");
        assert_eq!(days(&cert), 7);
        cert.verify_signature(None).expect("self-signed");
        assert!(!cert.basic_constraints().unwrap().unwrap().value.ca);
    }
}

#[test]
fn signed_cert_with_key_and_ca_with_key() {
    let out = render(
        "{{ $cak := genPrivateKey \"ecdsa\" }}{{ $ca := genCAWithKey \"ca\" 10 $cak }}{{ $k := genPrivateKey \"ed25519\" }}\
         {{ $c := genSignedCertWithKey \"leaf\" nil nil 5 $ca $k }}{{ $ca.Cert }}|{{ $c.Cert }}|{{ eq $ca.Key $cak }}|{{ eq $c.Key $k }}",
    );
    let parts: Vec<&str> = out.split('|').collect();
    let (_, ca_der) = pem(parts[0]);
    let (_, ca) = X509Certificate::from_der(&ca_der).unwrap();
    assert!(ca.basic_constraints().unwrap().unwrap().value.ca);
    let (_, leaf_der) = pem(parts[1]);
    let (_, leaf) = X509Certificate::from_der(&leaf_der).unwrap();
    assert_eq!(
        leaf.signature_algorithm.algorithm,
        x509_parser::oid_registry::OID_SIG_ECDSA_WITH_SHA256,
        "signed with the CA's EC key"
    );
    leaf.verify_signature(Some(ca.public_key())).unwrap();
    assert!(leaf.subject_alternative_name().unwrap().is_none());
    assert_eq!(&parts[2..], ["true", "true"]);
}

#[test]
fn private_keys_by_kind_and_seeded_reproducibility() {
    let rsa_pem = render("{{ genPrivateKey \"rsa\" }}");
    let (label, der) = pem(&rsa_pem);
    assert_eq!(label, "RSA PRIVATE KEY");
    use rsa::pkcs1::DecodeRsaPrivateKey;
    use rsa::traits::PublicKeyParts;
    assert_eq!(
        rsa::RsaPrivateKey::from_pkcs1_der(&der).unwrap().size() * 8,
        4096
    );

    let ec = render("{{ genPrivateKey \"ecdsa\" }}");
    let (label, der) = pem(&ec);
    assert_eq!(label, "EC PRIVATE KEY");
    assert!(p256::SecretKey::from_sec1_der(&der).is_ok());

    let ed = render("{{ genPrivateKey \"ed25519\" }}");
    let (label, der) = pem(&ed);
    assert_eq!(label, "PRIVATE KEY");
    assert_eq!(der.len(), 48);
    assert_eq!(
        &der[..16],
        &[
            0x30, 0x2e, 2, 1, 0, 0x30, 5, 6, 3, 0x2b, 0x65, 0x70, 4, 0x22, 4, 0x20
        ]
    );

    assert_eq!(
        render_seeded("{{ genPrivateKey \"ecdsa\" }}", 42).unwrap(),
        ec
    );
    assert_ne!(
        render_seeded("{{ genPrivateKey \"ecdsa\" }}", 43).unwrap(),
        ec
    );
    assert_eq!(render("{{ genPrivateKey \"foo\" }}"), "Unknown type foo");
    assert_eq!(
        render("{{ genPrivateKey \"dsa\" }}"),
        "failed to generate private key: DSA keys are not supported by fleet's Helm engine"
    );
}

#[test]
fn certificate_errors_are_sprigs() {
    let e = render_seeded(
        "{{ genSelfSignedCert \"x\" (list \"not-an-ip\") nil 1 }}",
        1,
    )
    .unwrap_err();
    assert!(
        e.ends_with("error calling genSelfSignedCert: error parsing ip: not-an-ip"),
        "{e}"
    );
    let e = render_seeded("{{ genSelfSignedCert \"x\" nil (list 1) 1 }}", 1).unwrap_err();
    assert!(
        e.ends_with("error processing alternate dns name: 1 is not a string"),
        "{e}"
    );
    let e = render_seeded("{{ genCAWithKey \"x\" 1 \"nope\" }}", 1).unwrap_err();
    assert!(
        e.ends_with("parsing private key: no PEM data in input"),
        "{e}"
    );
    let e = render_seeded("{{ genSignedCert \"x\" nil nil 1 (dict) }}", 1).unwrap_err();
    assert!(e.contains("expected sprig.certificate"), "{e}");
}

#[test]
fn build_custom_cert_round_trips_a_generated_pair() {
    let out = render(
        "{{ $c := genSelfSignedCertWithKey \"x\" nil nil 1 (genPrivateKey \"ecdsa\") }}\
         {{ $b := buildCustomCert ($c.Cert | b64enc) ($c.Key | b64enc) }}{{ eq $b.Cert $c.Cert }} {{ eq $b.Key $c.Key }}",
    );
    assert_eq!(out, "true true");
    let e = render_seeded("{{ buildCustomCert \"!!\" \"\" }}", 1).unwrap_err();
    assert!(e.ends_with("unable to decode base64 certificate"), "{e}");
}

/// Sprig's own `TestDerivePassword` vectors.
#[test]
fn derive_password_matches_sprig_vectors() {
    for (counter, kind, want) in [
        (1, "long", "ZedaFaxcZaso9*"),
        (2, "long", "Fovi2@JifpTupx"),
        (1, "maximum", "pf4zS1LjCg&LjhsZ7T2~"),
        (1, "medium", "ZedJuz8$"),
        (1, "basic", "pIS54PLs"),
        (1, "short", "Zed5"),
        (1, "pin", "6685"),
    ] {
        let src = format!(
            "{{{{ derivePassword {counter} \"{kind}\" \"password\" \"user\" \"example.com\" }}}}"
        );
        assert_eq!(render(&src), want, "{src}");
    }
    assert_eq!(
        render("{{ derivePassword 1 \"nope\" \"p\" \"u\" \"s\" }}"),
        "cannot find password template nope"
    );
}

#[test]
fn aes_decrypts_openssl_vectors_and_round_trips() {
    // `openssl enc -aes-256-cbc` with key "secretkey" zero-padded to 32 bytes and IV 00..0f, IV prepended.
    for (ct, plain) in [
        ("AAECAwQFBgcICQoLDA0OD4aChIkqfhLglmmHSXlA6r0=", "plaintext"),
        (
            "AAECAwQFBgcICQoLDA0OD+E9jvwhZq13NE3tulcX3JbA49NceyraruT1mgT7Kpi5Xb0DxG7J90v+jDbsSpsiDw==",
            "a longer plaintext, over one block",
        ),
    ] {
        assert_eq!(
            render(&format!("{{{{ \"{ct}\" | decryptAES \"secretkey\" }}}}")),
            plain
        );
    }
    assert_eq!(
        render("{{ \"plaintext\" | encryptAES \"secretkey\" | decryptAES \"secretkey\" }}"),
        "plaintext"
    );
    let a = render("{{ \"x\" | encryptAES \"k\" }}");
    assert_eq!(a.len(), 44, "IV and one block, base64");
    assert_eq!(render("{{ \"\" | encryptAES \"k\" }}"), "");
    let e = render_seeded("{{ \"AAAA\" | decryptAES \"k\" }}", 1).unwrap_err();
    assert!(e.contains("error calling decryptAES"), "{e}");
}

#[test]
fn bcrypt_and_htpasswd_verify() {
    let h = render("{{ bcrypt \"s3cret\" }}");
    assert!(h.starts_with("$2a$10$"), "{h}");
    assert!(bcrypt::verify("s3cret", &h).unwrap());
    assert!(!bcrypt::verify("other", &h).unwrap());
    let line = render("{{ htpasswd \"admin\" \"pa:ss\" }}");
    let (user, hash) = line.split_once(':').unwrap();
    assert_eq!(user, "admin");
    assert!(bcrypt::verify("pa:ss", hash).unwrap());
    assert_eq!(
        render("{{ htpasswd \"a:b\" \"x\" }}"),
        "invalid username: a:b"
    );
    assert_eq!(
        render("{{ randBytes 12 | len }}"),
        "16",
        "12 bytes in base64"
    );
}
