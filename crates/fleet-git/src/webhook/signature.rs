//! The checks webhook senders use: HMAC-SHA256 of the body (hex, with or without a `sha256=` prefix), a
//! shared token, and HTTP basic auth. Comparisons are constant-time; failure reasons never quote a secret.

use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// `sha256=<hex>` HMAC of `body` (GitHub's `X-Hub-Signature-256`, Bitbucket's `X-Hub-Signature`).
pub(super) fn check_prefixed_hmac(
    header: Option<&str>,
    secret: &[u8],
    body: &[u8],
) -> Result<(), String> {
    let header = header.ok_or("the signature header is missing")?;
    let hex_signature = header
        .strip_prefix("sha256=")
        .ok_or("the signature is not of the form sha256=<hex>")?;
    check_hex_hmac(Some(hex_signature), secret, body)
}

/// Bare hex HMAC of `body` (Gogs' and Gitea's signature headers).
pub(super) fn check_hex_hmac(
    header: Option<&str>,
    secret: &[u8],
    body: &[u8],
) -> Result<(), String> {
    let header = header.ok_or("the signature header is missing")?;
    let signature =
        hex::decode(header.trim()).map_err(|_| "the signature is not hexadecimal".to_string())?;
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).map_err(|err| err.to_string())?;
    mac.update(body);
    mac.verify_slice(&signature)
        .map_err(|_| "the signature does not match the payload and secret".to_string())
}

/// A token header equal to the secret (GitLab's `X-Gitlab-Token`).
pub(super) fn check_token(header: Option<&str>, secret: &[u8]) -> Result<(), String> {
    let token = header.ok_or("the token header is missing")?;
    if bool::from(token.as_bytes().ct_eq(secret)) {
        Ok(())
    } else {
        Err("the token does not match the secret".to_string())
    }
}

/// `Authorization: Basic base64(user:password)` equal to `secret` (`user:password`; Azure DevOps).
pub(super) fn check_basic_auth(header: Option<&str>, secret: &[u8]) -> Result<(), String> {
    let header = header.ok_or("the Authorization header is missing")?;
    let encoded = header
        .strip_prefix("Basic ")
        .or_else(|| header.strip_prefix("basic "))
        .ok_or("the Authorization header is not basic auth")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|_| "the basic auth credentials are not base64".to_string())?;
    if bool::from(decoded.ct_eq(secret)) {
        Ok(())
    } else {
        Err("the basic auth credentials do not match".to_string())
    }
}

/// The `sha256=<hex>` signature a sender would put on `body` (for tests and for building fixtures).
#[cfg(test)]
pub(crate) fn sign(secret: &[u8], body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("any key length");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}
