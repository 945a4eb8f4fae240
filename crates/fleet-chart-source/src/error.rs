//! What can go wrong while getting a chart. Messages name URLs without credentials and never hold a password.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    #[error("{url}: {message}")]
    Request { url: String, message: String },
    #[error("{url}: the server answered {status}{}", hint(*.status))]
    Status { url: String, status: u16 },
    #[error("{url}: {message}")]
    Index { url: String, message: String },
    #[error("{origin}: not a chart archive: {message}")]
    Archive { origin: String, message: String },
    #[error("{url}: the download's sha256 is {actual}, not the expected {expected}")]
    Digest {
        url: String,
        expected: String,
        actual: String,
    },
    #[error("{reference}: {message}")]
    Oci { reference: String, message: String },
    #[error("TLS settings: {0}")]
    Tls(String),
    #[error("credentials: {0}")]
    Credentials(String),
    #[error("the chart source's runtime stopped")]
    Stopped,
}

fn hint(status: u16) -> &'static str {
    match status {
        401 => {
            " (unauthorized: the credentials are missing or wrong, or helmRepoURLRegex does not match this URL)"
        }
        403 => " (forbidden)",
        404 => " (not found)",
        _ => "",
    }
}
