//! The files of a sled store, checked before sled may open it. sled writes as it opens (it
//! zero-fills a segment of `db` and writes a snapshot), so a store missing a file is refused
//! here, while its remains can still be put right from a backup.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::StoreError;
use crate::sled::marker::Marker;

/// sled's configuration file: its parameters, then their CRC-32.
const CONF: &str = "conf";
/// sled's log, which holds every record.
const DB: &str = "db";
/// Prefix of sled's snapshots (`snap.<lsn>`, `.generating` while being written).
const SNAP: &str = "snap.";

/// Checks the files of a store whose marker is `marker` (and says it holds records): the
/// directory, `conf` and `db`, and once sled has written a snapshot, the newest one, whole
/// (sled's own checksum).
pub(crate) fn check(store: &Path, marker: &Marker) -> Result<(), StoreError> {
    let damaged = |detail: String| StoreError::Damaged {
        path: store.to_owned(),
        detail,
    };
    if !store.is_dir() {
        return Err(damaged("its directory is missing".to_owned()));
    }
    // sled ignores a `conf` of 8 bytes or less and writes a new one.
    match read(&store.join(CONF))? {
        None => return Err(damaged(format!("its `{CONF}` file is missing"))),
        Some(conf) if !sealed(&conf, 4) => {
            return Err(damaged(format!(
                "its `{CONF}` file is truncated or damaged"
            )));
        }
        Some(_) => {}
    }
    let db_len = match fs::metadata(store.join(DB)) {
        Ok(meta) => meta.len(),
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            return Err(damaged(format!("its `{DB}` file is missing")));
        }
        Err(error) => return Err(unreadable(&store.join(DB), error)),
    };
    if db_len == 0 {
        return Err(damaged(format!("its `{DB}` file is empty")));
    }
    if marker.snapshot {
        let Some(snap) = newest_snapshot(store)? else {
            return Err(damaged(format!("its `{SNAP}*` snapshot file is missing")));
        };
        let bytes = read(&snap)?.unwrap_or_default();
        // The snapshot, its length (8 bytes), then the CRC-32 of the snapshot.
        if !sealed(&bytes, 12) {
            let name = snap.file_name().unwrap_or_default().to_string_lossy();
            return Err(damaged(format!(
                "its snapshot `{name}` is truncated or damaged"
            )));
        }
    }
    Ok(())
}

/// Removes a snapshot sled was writing when it was killed (`snap.<lsn>.generating`, not yet
/// whole). sled writes a snapshot under that name, syncs it and only then renames it (and
/// removes the older one); but on opening it reads the greatest `snap.*` name, `.generating`
/// ones included, and refuses a store whose file is cut short. The older, whole snapshot is
/// still there, or none was ever made: either way sled rebuilds the rest from its log, which
/// holds every record. A whole `.generating` file is kept: sled reads it as any snapshot.
pub(crate) fn discard_unfinished_snapshots(store: &Path) -> Result<(), StoreError> {
    let Ok(entries) = fs::read_dir(store) else {
        return Ok(());
    };
    for entry in entries {
        let path = entry.map_err(|error| unreadable(store, error))?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if !(name.starts_with(SNAP) && name.ends_with(".generating")) {
            continue;
        }
        if read(&path)?.is_some_and(|bytes| !sealed(&bytes, 12)) {
            tracing::warn!(file = %path.display(), "removing a snapshot sled did not finish writing");
            fs::remove_file(&path).map_err(|error| unreadable(&path, error))?;
        }
    }
    Ok(())
}

/// Whether sled has written a snapshot in `store`.
pub(crate) fn has_snapshot(store: &Path) -> Result<bool, StoreError> {
    Ok(newest_snapshot(store)?.is_some())
}

/// The snapshot sled would read: the greatest name, as sled 0.34 picks it (a `.generating` one
/// left by a crash included: sled reads it too).
fn newest_snapshot(store: &Path) -> Result<Option<PathBuf>, StoreError> {
    let entries = fs::read_dir(store).map_err(|error| unreadable(store, error))?;
    let mut newest: Option<PathBuf> = None;
    for entry in entries {
        let path = entry.map_err(|error| unreadable(store, error))?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let snapshot = name.starts_with(SNAP) && !name.ends_with(".in___motion");
        if snapshot && newest.as_ref().is_none_or(|n| *n < path) {
            newest = Some(path);
        }
    }
    Ok(newest)
}

/// Whether `bytes` end in the little-endian CRC-32 of what precedes the last `trailer` bytes,
/// as sled seals its `conf` and snapshots.
fn sealed(bytes: &[u8], trailer: usize) -> bool {
    if bytes.len() <= trailer.max(8) {
        return false;
    }
    let (body, rest) = bytes.split_at(bytes.len() - trailer);
    let Some(crc) = rest
        .get(rest.len() - 4..)
        .and_then(|c| <[u8; 4]>::try_from(c).ok())
    else {
        return false;
    };
    crc32fast::hash(body) == u32::from_le_bytes(crc)
}

fn read(path: &Path) -> Result<Option<Vec<u8>>, StoreError> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(unreadable(path, error)),
    }
}

fn unreadable(path: &Path, source: io::Error) -> StoreError {
    StoreError::Unreadable {
        path: path.to_owned(),
        source,
    }
}

/// `<store>.<suffix>`: beside the store directory and named after it, where its marker, its
/// archives, and a restore's staging copy and the store it replaced are. Beside, not inside:
/// a store directory deleted or replaced by hand leaves them be.
pub(crate) fn beside(store: &Path, suffix: &str) -> Result<PathBuf, StoreError> {
    let name = store.file_name().ok_or_else(|| StoreError::Unplaceable {
        path: store.to_owned(),
    })?;
    let mut name = name.to_owned();
    name.push(format!(".{suffix}"));
    Ok(store.with_file_name(name))
}

/// Fails with [`StoreError::InUse`] when a process holds the store (sled locks its `db` file
/// with `flock`); the lock is let go at once, so that sled can take it.
pub(crate) fn probe_lock(store: &Path) -> Result<(), StoreError> {
    use fs2::FileExt;
    let db = store.join(DB);
    let file = match fs::File::open(&db) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(unreadable(&db, error)),
    };
    file.try_lock_exclusive().map_err(|_| StoreError::InUse {
        path: store.to_owned(),
    })?;
    // fs2's, not std's (newer than this crate's minimum Rust): the same `flock` as sled's.
    FileExt::unlock(&file).map_err(|error| unreadable(&db, error))
}

/// Waits, for at most two seconds, until no process holds the store at `store` (see
/// [`probe_lock`]); [`StoreError::InUse`] if one still does then. sled lets go of its file lock
/// from a background thread shortly after the last handle of a database drops, so a store
/// closed and opened again at once in the same process (a backup's copy, checked as soon as it
/// is written) can find its own lock still held.
pub fn wait_until_free(store: &Path) -> Result<(), StoreError> {
    const TRIES: u32 = 200;
    for _ in 1..TRIES {
        match probe_lock(store) {
            Err(StoreError::InUse { .. }) => std::thread::sleep(Duration::from_millis(10)),
            other => return other,
        }
    }
    probe_lock(store)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `body` sealed as sled seals a snapshot: its length (8 bytes), then its CRC-32.
    fn snapshot(body: &[u8]) -> Vec<u8> {
        let mut bytes = body.to_vec();
        bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&crc32fast::hash(body).to_le_bytes());
        bytes
    }

    #[test]
    fn a_snapshot_cut_short_while_generating_is_removed_and_a_whole_one_kept() {
        let dir = tempfile::tempdir().unwrap();
        let older = dir.path().join("snap.0000000000000F00");
        let cut = dir.path().join("snap.0000000000001101.generating");
        std::fs::write(&older, snapshot(b"the older snapshot")).unwrap();
        std::fs::write(&cut, &snapshot(b"a newer one, killed while written")[..20]).unwrap();
        discard_unfinished_snapshots(dir.path()).unwrap();
        assert!(!cut.exists(), "the half-written snapshot is gone");
        assert_eq!(newest_snapshot(dir.path()).unwrap(), Some(older.clone()));

        let whole = dir.path().join("snap.0000000000001200.generating");
        std::fs::write(&whole, snapshot(b"written whole, not yet renamed")).unwrap();
        discard_unfinished_snapshots(dir.path()).unwrap();
        assert!(
            whole.exists() && older.exists(),
            "whole snapshots are sled's to read"
        );
    }
}
