//! One chart file's contents: given in memory, or, for a file a render may never look at (a README, a changelog,
//! CRDs without `--include-crds`), produced by the caller's reader the first time they are asked for. The reading
//! itself stays with the caller (the CLI reads from disk); this crate does no I/O.

use std::sync::{Arc, OnceLock};

/// Produces a deferred file's contents, or an error that names the file and the reason.
type Reader = Box<dyn Fn() -> Result<Vec<u8>, String> + Send + Sync>;

/// The contents of one chart file. Clones share them, and a deferred file is read at most once.
#[derive(Clone)]
pub struct FileData(Arc<Inner>);

struct Inner {
    /// How a deferred file is read; `None` for contents given in memory.
    reader: Option<Reader>,
    contents: OnceLock<Result<Vec<u8>, String>>,
}

impl FileData {
    /// A file whose contents `read` produces when they are first asked for.
    pub fn deferred(read: impl Fn() -> Result<Vec<u8>, String> + Send + Sync + 'static) -> Self {
        FileData(Arc::new(Inner {
            reader: Some(Box::new(read)),
            contents: OnceLock::new(),
        }))
    }

    /// The contents, read now if the file was deferred and not read yet.
    pub fn bytes(&self) -> Result<&[u8], String> {
        self.0
            .contents
            .get_or_init(|| match &self.0.reader {
                Some(read) => read(),
                None => Ok(Vec::new()),
            })
            .as_deref()
            .map_err(String::clone)
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
        let file = FileData::deferred(move || {
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
        let file = FileData::deferred(|| Err("reading crds/a.yaml: permission denied".into()));
        assert_eq!(
            file.bytes().unwrap_err(),
            "reading crds/a.yaml: permission denied"
        );
        assert_eq!(
            format!("{file:?}"),
            "FileData(unreadable: reading crds/a.yaml: permission denied)"
        );
    }
}
