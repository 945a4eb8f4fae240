//! Chart archives: unpacking a `.tgz` into the files Fleet stores (hidden files and directories skipped, as its
//! reader skips them), and sha256 digests.

use std::io::Read;

use sha2::{Digest, Sha256};

use crate::error::{ArchiveProblem, SourceError};

/// Largest unpacked archive accepted.
const MAX_UNPACKED: u64 = 512 << 20;

/// Hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The regular files of a gzipped tar archive, by path as in the archive (`chart/Chart.yaml`), in archive
/// order. Paths that leave the archive are an error; hidden files and directories are skipped.
pub fn unpack(origin: &str, data: &[u8]) -> Result<Vec<(String, Vec<u8>)>, SourceError> {
    let error = |problem: ArchiveProblem| SourceError::Archive {
        origin: origin.to_string(),
        problem,
    };
    let tar = |e: std::io::Error| error(ArchiveProblem::Tar(e.into()));
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(data)
        .take(MAX_UNPACKED)
        .read_to_end(&mut raw)
        .map_err(|e| error(ArchiveProblem::Gzip(e.into())))?;
    let mut archive = tar::Archive::new(raw.as_slice());
    let mut files = Vec::new();
    for entry in archive.entries().map_err(tar)? {
        let mut entry = entry.map_err(tar)?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = entry
            .path()
            .map_err(tar)?
            .to_string_lossy()
            .replace('\\', "/");
        let name = name.trim_start_matches("./").to_string();
        if name.starts_with('/') || name.split('/').any(|part| part == "..") {
            return Err(error(ArchiveProblem::LeavesArchive(name)));
        }
        if name.split('/').any(|part| part.starts_with('.')) {
            continue;
        }
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).map_err(tar)?;
        files.push((name, bytes));
    }
    if files.is_empty() {
        return Err(error(ArchiveProblem::Empty));
    }
    Ok(files)
}

#[cfg(test)]
pub(crate) fn tgz(entries: &[(&str, &str)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, content) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder
            .append_data(&mut header, name, content.as_bytes())
            .unwrap();
    }
    let tar = builder.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &tar).unwrap();
    gz.finish().unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpacks_charts_without_hidden_files() {
        let data = tgz(&[
            ("app/Chart.yaml", "name: app\n"),
            ("app/.helmignore", "x\n"),
            ("app/templates/cm.yaml", "kind: ConfigMap\n"),
        ]);
        let files = unpack("app.tgz", &data).unwrap();
        let names: Vec<_> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["app/Chart.yaml", "app/templates/cm.yaml"]);
        assert!(
            unpack("x.tgz", b"not gzip")
                .unwrap_err()
                .to_string()
                .contains("x.tgz")
        );
    }

    #[test]
    fn what_is_wrong_with_an_archive_is_kept_as_its_kind() {
        // The gzip reader's own error, whole: its kind, and the source of the chain.
        let err = unpack("x.tgz", b"not gzip").unwrap_err();
        let SourceError::Archive {
            problem: ArchiveProblem::Gzip(cause),
            ..
        } = &err
        else {
            panic!("{err:?}");
        };
        // The reader's message is in the error's own message, once: printed as a chain (`{:#}`), as the CLI
        // prints errors, it is not repeated.
        let mut chain = vec![err.to_string()];
        let mut next = std::error::Error::source(&err);
        while let Some(inner) = next {
            chain.push(inner.to_string());
            next = inner.source();
        }
        assert_eq!(
            chain.join(": ").matches(&cause.to_string()).count(),
            1,
            "{chain:?}"
        );
        assert!(
            err.to_string()
                .starts_with("x.tgz: not a chart archive: gzip: "),
            "{err}"
        );
        assert_eq!(
            unpack("e.tgz", &tgz(&[(".hidden", "x")])).unwrap_err(),
            SourceError::Archive {
                origin: "e.tgz".into(),
                problem: ArchiveProblem::Empty
            }
        );
    }
}
