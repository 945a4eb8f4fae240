//! One chart file's contents: given in memory, or, for a file a render may never look at (a README, a changelog,
//! CRDs without `--include-crds`), produced by the caller's reader the first time they are asked for. The reading
//! itself stays with the caller (the CLI reads from disk); this crate does no I/O.

use std::sync::{Arc, OnceLock};

/// Produces a deferred file's contents.
type Reader = Box<dyn Fn() -> std::io::Result<Vec<u8>> + Send + Sync>;

/// A deferred file that could not be read: the file as the caller names it (e.g. its path on disk) and the
/// I/O error. Shared by the clones of the file, which keep it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("reading {file}: {source}")]
pub struct ReadError {
    pub file: String,
    pub source: Arc<std::io::Error>,
}

/// Two read errors are equal when they name the same file and say the same.
impl PartialEq for ReadError {
    fn eq(&self, other: &Self) -> bool {
        self.file == other.file
            && self.source.kind() == other.source.kind()
            && self.source.to_string() == other.source.to_string()
    }
}

/// The contents of one chart file. Clones share them, and a deferred file is read at most once.
#[derive(Clone)]
pub struct FileData(Arc<Inner>);

struct Inner {
    /// How a deferred file is read, and what it is called in a read error; `None` for contents given in memory.
    reader: Option<(String, Reader)>,
    contents: OnceLock<Result<Vec<u8>, ReadError>>,
}

impl FileData {
    /// A file whose contents `read` produces when they are first asked for; `file` names it in a read error.
    pub fn deferred(
        file: impl Into<String>,
        read: impl Fn() -> std::io::Result<Vec<u8>> + Send + Sync + 'static,
    ) -> Self {
        FileData(Arc::new(Inner {
            reader: Some((file.into(), Box::new(read))),
            contents: OnceLock::new(),
        }))
    }

    /// The contents, read now if the file was deferred and not read yet.
    pub fn bytes(&self) -> Result<&[u8], ReadError> {
        self.0
            .contents
            .get_or_init(|| match &self.0.reader {
                Some((file, read)) => read().map_err(|source| ReadError {
                    file: file.clone(),
                    source: Arc::new(source),
                }),
                None => Ok(Vec::new()),
            })
            .as_deref()
            .map_err(ReadError::clone)
    }
}

impl std::fmt::Debug for FileData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.contents.get() {
            Some(Ok(bytes)) => write!(f, "FileData({} bytes)", bytes.len()),
            Some(Err(err)) => write!(f, "FileData(unreadable: {err})"),
            None => f.write_str("FileData(not read yet)"),
        }
    }
}

impl From<Vec<u8>> for FileData {
    fn from(contents: Vec<u8>) -> Self {
        FileData(Arc::new(Inner {
            reader: None,
            contents: OnceLock::from(Ok(contents)),
        }))
    }
}

impl From<&str> for FileData {
    fn from(contents: &str) -> Self {
        contents.as_bytes().to_vec().into()
    }
}

impl From<String> for FileData {
    fn from(contents: String) -> Self {
        contents.into_bytes().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn contents_in_memory_are_returned_as_given() {
        assert_eq!(FileData::from("a: 1\n").bytes().unwrap(), b"a: 1\n");
    }

    #[test]
    fn a_deferred_file_is_read_on_first_use_once_and_its_clones_share_the_contents() {
        let reads = Arc::new(AtomicUsize::new(0));
        let counter = reads.clone();
        let file = FileData::deferred("README.md", move || {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(b"# README".to_vec())
        });
        let clone = file.clone();
        assert_eq!(reads.load(Ordering::SeqCst), 0);
        assert_eq!(file.bytes().unwrap(), b"# README");
        assert_eq!(clone.bytes().unwrap(), b"# README");
        assert_eq!(reads.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_deferred_file_that_cannot_be_read_keeps_its_error() {
        let file = FileData::deferred("crds/a.yaml", || {
            Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "permission denied",
            ))
        });
        let err = file.bytes().unwrap_err();
        assert_eq!(err.source.kind(), std::io::ErrorKind::PermissionDenied);
        assert_eq!(err.to_string(), "reading crds/a.yaml: permission denied");
        assert_eq!(
            format!("{file:?}"),
            "FileData(unreadable: reading crds/a.yaml: permission denied)"
        );
    }
}
