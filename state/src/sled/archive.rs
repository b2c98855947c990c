//! The archive files next to the store that compaction appends to: `<store>.runs.jsonl` (each
//! line a finished run with its plan and log) and `<store>.audit.jsonl` (each line an audit
//! entry exactly as `opsbot audit export` writes it). Appends are made durable (fsync) before
//! the store forgets what they hold, and an append the store did not finish forgetting is cut
//! off again (see `compact`), so that the archive holds every record exactly once.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::StoreError;
use crate::export;
use crate::sled::files;

/// Where the archive files of a store are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchivePaths {
    pub runs: PathBuf,
    pub audit: PathBuf,
}

impl ArchivePaths {
    /// Beside the store's directory, named after it.
    pub(crate) fn of(store: &Path) -> Result<Self, StoreError> {
        Ok(Self {
            runs: files::beside(store, "runs.jsonl")?,
            audit: files::beside(store, "audit.jsonl")?,
        })
    }
}

/// The length of an archive file (0 when it does not exist yet).
pub(crate) fn length(path: &Path) -> Result<u64, StoreError> {
    match std::fs::metadata(path) {
        Ok(meta) => Ok(meta.len()),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(0),
        Err(error) => Err(failed(path, error)),
    }
}

/// Appends `values` as lines and makes them durable (the file, and the directory entry of a
/// file just created).
pub(crate) fn append<T: Serialize>(path: &Path, values: &[T]) -> Result<(), StoreError> {
    if values.is_empty() {
        return Ok(());
    }
    let written = || -> io::Result<()> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let mut out = BufWriter::new(file);
        for value in values {
            export::write_line(&mut out, value)?;
        }
        out.flush()?;
        out.get_ref().sync_all()?;
        sync_parent(path)
    };
    written().map_err(|error| failed(path, error))
}

/// Copies the first `len` bytes of the archive `from` into the new file `to`, durably.
pub(crate) fn copy_start(from: &Path, to: &Path, len: u64) -> io::Result<()> {
    let mut start = File::open(from)?.take(len);
    let mut copy = File::create_new(to)?;
    if io::copy(&mut start, &mut copy)? < len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("{} was cut short while it was copied", from.display()),
        ));
    }
    copy.sync_all()
}

/// Cuts the file back to `len`: what an unfinished compaction appended. A file shorter than
/// that was cut or replaced by hand, and the records it held may be nowhere else: refused.
pub(crate) fn truncate(path: &Path, len: u64) -> Result<(), StoreError> {
    let now = length(path)?;
    if now < len {
        let detail = format!(
            "it is {now} bytes, shorter than the {len} it had when compaction began; put the \
             archive back"
        );
        return Err(failed(path, io::Error::other(detail)));
    }
    if now == len {
        return Ok(());
    }
    let cut = || -> io::Result<()> {
        let file = OpenOptions::new().write(true).open(path)?;
        file.set_len(len)?;
        file.sync_all()
    };
    cut().map_err(|error| failed(path, error))
}

fn sync_parent(path: &Path) -> io::Result<()> {
    match path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        Some(dir) => File::open(dir)?.sync_all(),
        None => Ok(()),
    }
}

fn failed(path: &Path, source: io::Error) -> StoreError {
    StoreError::Archive {
        path: path.to_owned(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_archives_are_beside_the_store_named_after_it() {
        let paths = ArchivePaths::of(Path::new("/var/lib/opsbot/store")).unwrap();
        assert_eq!(paths.runs, Path::new("/var/lib/opsbot/store.runs.jsonl"));
        assert_eq!(paths.audit, Path::new("/var/lib/opsbot/store.audit.jsonl"));
    }

    #[test]
    fn an_append_is_cut_back_and_a_shortened_archive_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.jsonl");
        assert_eq!(length(&path).unwrap(), 0);
        append(&path, &[1, 2]).unwrap();
        let before = length(&path).unwrap();
        append(&path, &[3]).unwrap();
        truncate(&path, before).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "1\n2\n");
        let error = truncate(&path, before + 10).unwrap_err().to_string();
        assert!(error.contains("shorter than the"), "{error}");
    }
}
