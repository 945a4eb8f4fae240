//! Durability for `--data-dir`: an append-only journal of JSON lines (one per stored or deleted object, with
//! its resourceVersion), fsync'd before a write is acknowledged, replayed at startup and compacted into a
//! snapshot when it grows. A torn last line (a crash mid-write) is ignored: it was never acknowledged.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::storage::key::ObjKey;

const JOURNAL_FILE: &str = "objects.jsonl";

/// One journal line: an object stored (`object` set) or deleted (`object` empty) at `rv`.
#[derive(Debug, Clone)]
pub struct Record {
    pub rv: u64,
    pub key: ObjKey,
    pub object: Option<Value>,
}

/// The open journal file.
pub struct Journal {
    path: PathBuf,
    file: File,
    /// A second handle on the journal file, fsync'd outside the store lock (group commit).
    sync_handle: Arc<File>,
    lines: u64,
    live_at_rewrite: u64,
}

/// What a journal held when opened.
pub struct Recovered {
    pub rv: u64,
    pub objects: Vec<(ObjKey, Value)>,
}

impl Journal {
    /// Opens (creating) the journal in `dir` and replays it.
    pub fn open(dir: &Path) -> io::Result<(Journal, Recovered)> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(JOURNAL_FILE);
        let mut objects: BTreeMap<ObjKey, Value> = BTreeMap::new();
        let mut rv = 0;
        let mut lines = 0;
        let mut valid_len: u64 = 0;
        if path.exists() {
            let mut reader = BufReader::new(File::open(&path)?);
            let mut line = String::new();
            loop {
                line.clear();
                let n = reader.read_line(&mut line)?;
                if n == 0 || !line.ends_with('\n') {
                    break;
                }
                let Ok(record) = serde_json::from_str::<Value>(&line) else {
                    break;
                };
                let Some(parsed) = parse_record(&record) else {
                    break;
                };
                rv = rv.max(parsed.rv);
                match parsed.object {
                    Some(obj) => objects.insert(parsed.key, obj),
                    None => objects.remove(&parsed.key),
                };
                lines += 1;
                valid_len += n as u64;
            }
        }
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        // Drop a torn tail so that later appends start on a line boundary.
        file.set_len(valid_len)?;
        let live = objects.len() as u64;
        let sync_handle = Arc::new(file.try_clone()?);
        let journal = Journal {
            path,
            sync_handle,
            file,
            lines,
            live_at_rewrite: live,
        };
        Ok((
            journal,
            Recovered {
                rv,
                objects: objects.into_iter().collect(),
            },
        ))
    }

    /// Appends records without syncing them; see [`Journal::sync_handle`].
    pub fn write(&mut self, records: &[Record]) -> io::Result<()> {
        let mut buf = Vec::new();
        for record in records {
            serde_json::to_writer(&mut buf, &encode(record)).map_err(io::Error::other)?;
            buf.push(b'\n');
        }
        self.file.write_all(&buf)?;
        self.lines += records.len() as u64;
        Ok(())
    }

    /// A handle to fsync the journal with, without holding the journal (group commit).
    pub fn sync_handle(&self) -> Arc<File> {
        self.sync_handle.clone()
    }

    /// True when the journal holds many more lines than live objects.
    pub fn wants_compaction(&self, live: usize) -> bool {
        self.lines > 10_000 && self.lines > 4 * (live as u64).max(self.live_at_rewrite)
    }

    /// Rewrites the journal as one line per live object (atomically, through a rename).
    pub fn rewrite(&mut self, rv: u64, objects: &[(ObjKey, Arc<Value>)]) -> io::Result<()> {
        let tmp = self.path.with_extension("jsonl.tmp");
        {
            let mut out = io::BufWriter::new(File::create(&tmp)?);
            // A marker line carrying the current resourceVersion, so it survives even if every object is gone.
            let marker = Record {
                rv,
                key: ObjKey::new("", "", ""),
                object: None,
            };
            serde_json::to_writer(&mut out, &encode(&marker)).map_err(io::Error::other)?;
            out.write_all(b"\n")?;
            for (key, obj) in objects {
                let record = Record {
                    rv: crate::storage::object::resource_version(obj).unwrap_or(rv),
                    key: key.clone(),
                    object: None,
                };
                let mut line = encode(&record);
                line["object"] = (**obj).clone();
                serde_json::to_writer(&mut out, &line).map_err(io::Error::other)?;
                out.write_all(b"\n")?;
            }
            out.flush()?;
            out.get_ref().sync_all()?;
        }
        std::fs::rename(&tmp, &self.path)?;
        if let Some(dir) = self.path.parent() {
            File::open(dir)?.sync_all()?;
        }
        self.file = OpenOptions::new().append(true).open(&self.path)?;
        self.sync_handle = Arc::new(self.file.try_clone()?);
        self.lines = objects.len() as u64 + 1;
        self.live_at_rewrite = objects.len() as u64;
        Ok(())
    }
}

fn encode(record: &Record) -> Value {
    json!({
        "rv": record.rv,
        "resource": record.key.resource,
        "namespace": record.key.namespace,
        "name": record.key.name,
        "object": record.object,
    })
}

fn parse_record(value: &Value) -> Option<Record> {
    let key = ObjKey::new(
        value.get("resource")?.as_str()?,
        value.get("namespace")?.as_str()?,
        value.get("name")?.as_str()?,
    );
    let object = match value.get("object") {
        None | Some(Value::Null) => None,
        Some(obj) => Some(obj.clone()),
    };
    Some(Record {
        rv: value.get("rv")?.as_u64()?,
        key,
        object,
    })
}
