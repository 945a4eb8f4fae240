//! Shared checks for the provider tests: every provider must accept its own signed request, reject a wrong
//! secret with 401 and a GET with 405, and accept an unsigned request when no secret is configured.

use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};

use super::{PushEvent, WebhookError, verify_and_parse};

pub(crate) fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    pairs
        .iter()
        .map(|(name, value)| {
            (
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            )
        })
        .collect()
}

/// Runs the common checks; `signed(secret)` builds the headers a sender holding `secret` would send for
/// `body`. Returns the event parsed from the correctly signed request.
pub(crate) fn check_provider(body: &[u8], signed: impl Fn(&[u8]) -> HeaderMap) -> PushEvent {
    let secret = b"webhook-secret".as_slice();
    let event = verify_and_parse(&Method::POST, &signed(secret), body, Some(secret))
        .unwrap_or_else(|err| panic!("a correctly signed request is accepted: {err}"));

    let err =
        verify_and_parse(&Method::POST, &signed(b"wrong-secret"), body, Some(secret)).unwrap_err();
    assert_eq!(err.status(), StatusCode::UNAUTHORIZED, "{err}");
    assert!(!err.to_string().contains("webhook-secret"), "{err}");

    let err = verify_and_parse(&Method::GET, &signed(secret), body, Some(secret)).unwrap_err();
    assert_eq!(
        err,
        WebhookError::MethodNotAllowed {
            method: "GET".into()
        }
    );
    assert_eq!(err.status(), StatusCode::METHOD_NOT_ALLOWED);

    assert_eq!(
        verify_and_parse(&Method::POST, &signed(secret), body, None).unwrap(),
        event,
        "without a configured secret the request is accepted unverified"
    );
    event
}

/// Asserts that a changed body is rejected (for senders that sign the body).
pub(crate) fn assert_body_is_signed(body: &[u8], signed: impl Fn(&[u8]) -> HeaderMap) {
    let secret = b"webhook-secret".as_slice();
    let mut tampered = body.to_vec();
    tampered.extend_from_slice(b" ");
    let err =
        verify_and_parse(&Method::POST, &signed(secret), &tampered, Some(secret)).unwrap_err();
    assert_eq!(err.status(), StatusCode::UNAUTHORIZED, "{err}");
}
