//! What a Git host sends with a webhook, for tests of the receiver: GitHub's signature of a request body.

use hmac::{KeyInit, Mac};

/// GitHub's `X-Hub-Signature-256` value for `body` signed with `secret`: `sha256=` and the hex HMAC-SHA256.
pub fn github_signature(secret: &[u8], body: &[u8]) -> String {
    let mut mac =
        hmac::Hmac::<sha2::Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(body);
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256={hex}")
}
