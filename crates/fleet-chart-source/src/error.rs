//! What can go wrong while getting a chart. Messages name URLs without credentials and never hold a password.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    #[error("{url}: {message}")]
    Request { url: String, message: String },
    #[error("{url}: the server answered {status}{}", hint(*.status))]
    Status { url: String, status: u16 },
    #[error("{url}: {message}")]
    Index { url: String, message: String },
    #[error("{origin}: not a chart archive: {problem}")]
    Archive {
        origin: String,
        problem: ArchiveProblem,
    },
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

/// Why downloaded bytes are not a chart archive.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchiveProblem {
    /// The gzip stream could not be read.
    #[error("gzip: {0}")]
    Gzip(IoCause),
    /// The tar stream inside could not be read.
    #[error("tar: {0}")]
    Tar(IoCause),
    /// An entry's path is absolute or climbs out with `..`.
    #[error("entry {0:?} leaves the archive")]
    LeavesArchive(String),
    /// No regular file in the archive.
    #[error("the archive holds no file")]
    Empty,
}

/// An I/O error kept whole (its [`kind`](IoCause::kind), and as the source), shared so that errors stay
/// cloneable. Two are equal when their kind and text are.
#[derive(Debug, Clone, thiserror::Error)]
#[error(transparent)]
pub struct IoCause(std::sync::Arc<std::io::Error>);

impl IoCause {
    /// What kind of I/O error it is.
    pub fn kind(&self) -> std::io::ErrorKind {
        self.0.kind()
    }
}

impl From<std::io::Error> for IoCause {
    fn from(error: std::io::Error) -> Self {
        Self(std::sync::Arc::new(error))
    }
}

impl PartialEq for IoCause {
    fn eq(&self, other: &Self) -> bool {
        self.kind() == other.kind() && self.0.to_string() == other.0.to_string()
    }
}

impl Eq for IoCause {}

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
