//! opsbot's own record of what its store must hold, kept outside sled.
//!
//! sled opens a store that lost its `snap.*` file, or one swapped for an older copy, without a
//! word, and rewrites its `db` as it opens it: the history is gone for good. The marker says
//! how far the store got (its last run id, its last audit entry, whether sled had written a
//! snapshot) so that such a store is refused before sled touches it.
//!
//! The marker lives *beside* the store directory (`/var/lib/opsbot/store.marker` for
//! `/var/lib/opsbot/store`), not inside it: a store directory deleted, or replaced by hand with
//! an older copy (which would bring its own, older, marker along), still meets the marker of
//! the store that was there. It is replaced atomically (temporary file, fsync, rename, fsync of
//! the directory), and only ever written after the sled flush that made its numbers durable,
//! so it never claims more than the store holds.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::sled::files;

/// The format of the marker file this opsbot writes and reads.
const FORMAT: u32 = 1;

/// How far a store got. The numbers are the store's own counters, which only grow: retention
/// removes old records but never takes back an id, so a store that is behind its marker lost
/// records (or is an older copy).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Marker {
    /// The last run id handed out (0: none yet); runs are numbered densely from 1.
    pub(crate) last_run: u64,
    /// The last audit sequence number used (0: none yet).
    pub(crate) last_audit: u64,
    /// Whether sled had written a `snap.*` file; once it has, one is always there.
    pub(crate) snapshot: bool,
}

/// The file as written: the marker and a checksum of it, so that a torn or edited marker is
/// recognised as such instead of being trusted.
#[derive(Serialize, Deserialize)]
struct File1 {
    format: u32,
    #[serde(flatten)]
    marker: Marker,
    crc32: u32,
}

impl Marker {
    /// Whether the store had any run or audit entry.
    pub(crate) fn holds_records(&self) -> bool {
        self.last_run > 0 || self.last_audit > 0
    }

    /// What `self` (the store as found) lacks compared with `expected` (the marker), in words;
    /// `None` if nothing.
    pub(crate) fn shortfall(&self, expected: &Marker) -> Option<String> {
        let mut missing = Vec::new();
        if self.last_run < expected.last_run {
            missing.push(format!(
                "its last run is {}, the marker says r-{}",
                describe_run(self.last_run),
                expected.last_run
            ));
        }
        if self.last_audit < expected.last_audit {
            missing.push(format!(
                "its audit log ends at #{}, the marker says #{}",
                self.last_audit, expected.last_audit
            ));
        }
        (!missing.is_empty()).then(|| missing.join("; "))
    }

    fn checksum(&self) -> u32 {
        crc32fast::hash(
            format!(
                "{FORMAT}/{}/{}/{}",
                self.last_run, self.last_audit, self.snapshot
            )
            .as_bytes(),
        )
    }
}

/// How often at most the marker is rewritten for the audit log alone (see [`Keeper::advance`]).
const AUDIT_ONLY_EVERY: Duration = Duration::from_secs(1);

/// The marker of an open store: where it is, what it last said (`None`: there is no marker
/// file yet, as in a new store or one from an opsbot that kept none), and when.
#[derive(Debug)]
pub(crate) struct Keeper {
    path: PathBuf,
    store: PathBuf,
    written: Mutex<Written>,
    audit_only_every: Duration,
}

#[derive(Debug)]
struct Written {
    marker: Option<Marker>,
    at: Option<Instant>,
}

impl Keeper {
    pub(crate) fn new(store: &Path, path: PathBuf, written: Option<Marker>) -> Self {
        Self {
            path,
            store: store.to_owned(),
            written: Mutex::new(Written {
                marker: written,
                at: None,
            }),
            audit_only_every: AUDIT_ONLY_EVERY,
        }
    }

    /// Records `held` (read before the flush that made it durable) where it is ahead of the
    /// marker. Each write costs a temporary file, two fsyncs and a rename, so not every flush
    /// pays it: a new run or a new snapshot is recorded at once, but the audit log, which moves
    /// with every transition of every run, at most once per [`AUDIT_ONLY_EVERY`]. The marker
    /// still never claims more than the store holds, only less: its `last_audit` may lag by
    /// that long. So a store that lost a run, or its snapshot, or audit entries older than
    /// that, is refused as ever; one put back to a copy that lacks only the audit entries of
    /// the last moment before the bot stopped (with no run created since) is not.
    pub(crate) fn advance(&self, held: &Marker) -> Result<(), StoreError> {
        let mut written = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        let before = written.marker.unwrap_or_default();
        let next = Marker {
            last_run: held.last_run.max(before.last_run),
            last_audit: held.last_audit.max(before.last_audit),
            snapshot: before.snapshot || files::has_snapshot(&self.store)?,
        };
        let due = match written.marker {
            None => true,
            Some(before) if before.last_run != next.last_run => true,
            Some(before) if before.snapshot != next.snapshot => true,
            Some(before) => {
                before.last_audit != next.last_audit
                    && written
                        .at
                        .is_none_or(|at| at.elapsed() >= self.audit_only_every)
            }
        };
        if due {
            write(&self.path, &next)?;
            *written = Written {
                marker: Some(next),
                at: Some(Instant::now()),
            };
        }
        Ok(())
    }
}

fn describe_run(last: u64) -> String {
    match last {
        0 => "none".to_owned(),
        n => format!("r-{n}"),
    }
}

/// Where the marker of the store directory `store` is: beside it, named after it.
pub(crate) fn path_of(store: &Path) -> Result<PathBuf, StoreError> {
    files::beside(store, "marker")
}

/// Reads the marker at `path`; `None` when there is none (a new store, or one from an opsbot
/// that kept no marker).
pub(crate) fn read(path: &Path) -> Result<Option<Marker>, StoreError> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(io_error(path, error)),
    };
    let damaged = |detail: String| StoreError::MarkerDamaged {
        path: path.to_owned(),
        detail,
    };
    let file: File1 = serde_json::from_slice(&bytes).map_err(|e| damaged(e.to_string()))?;
    if file.format != FORMAT {
        return Err(damaged(format!("format {} is not {FORMAT}", file.format)));
    }
    if file.crc32 != file.marker.checksum() {
        return Err(damaged(
            "its checksum does not match its content".to_owned(),
        ));
    }
    Ok(Some(file.marker))
}

/// Replaces the marker at `path` with `marker`, atomically and durably.
pub(crate) fn write(path: &Path, marker: &Marker) -> Result<(), StoreError> {
    let file = File1 {
        format: FORMAT,
        marker: *marker,
        crc32: marker.checksum(),
    };
    let bytes = serde_json::to_vec(&file).map_err(|e| StoreError::Unencodable {
        what: "the store's marker".to_owned(),
        detail: e.to_string(),
    })?;
    replace(path, &bytes).map_err(|error| io_error(path, error))
}

fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    // Named for what it is, should a kill leave one behind.
    let mut temp = tempfile::Builder::new()
        .prefix(".opsbot-marker-")
        .tempfile_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    File::open(dir)?.sync_all()
}

fn io_error(path: &Path, source: io::Error) -> StoreError {
    StoreError::MarkerIo {
        path: path.to_owned(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(last_run: u64, last_audit: u64) -> Marker {
        Marker {
            last_run,
            last_audit,
            snapshot: true,
        }
    }

    #[test]
    fn a_marker_round_trips_and_lives_beside_its_store() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_of(&dir.path().join("store")).unwrap();
        assert_eq!(path, dir.path().join("store.marker"));
        assert_eq!(read(&path).unwrap(), None);
        write(&path, &marker(3, 9)).unwrap();
        assert_eq!(read(&path).unwrap(), Some(marker(3, 9)));
        write(&path, &marker(4, 11)).unwrap();
        assert_eq!(read(&path).unwrap(), Some(marker(4, 11)));
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }

    /// A new run is recorded at once; the audit log alone, once the interval has passed.
    #[test]
    fn the_audit_log_alone_rewrites_the_marker_at_most_once_per_interval() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        fs::create_dir(&store).unwrap();
        let path = path_of(&store).unwrap();
        let keeper = |every| Keeper {
            audit_only_every: every,
            ..Keeper::new(&store, path.clone(), None)
        };
        let held = |last_run, last_audit| Marker {
            snapshot: false,
            ..marker(last_run, last_audit)
        };
        let never = keeper(Duration::MAX);
        never.advance(&held(1, 1)).unwrap();
        never.advance(&held(1, 2)).unwrap();
        assert_eq!(read(&path).unwrap(), Some(held(1, 1)));
        never.advance(&held(2, 3)).unwrap();
        assert_eq!(read(&path).unwrap(), Some(held(2, 3)));
        // Never back: a stale reading does not take back what was recorded.
        never.advance(&held(1, 1)).unwrap();
        assert_eq!(read(&path).unwrap(), Some(held(2, 3)));
        let always = keeper(Duration::ZERO);
        always.advance(&held(2, 3)).unwrap();
        always.advance(&held(2, 4)).unwrap();
        assert_eq!(read(&path).unwrap(), Some(held(2, 4)));
    }

    #[test]
    fn an_edited_or_torn_marker_is_damaged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.marker");
        write(&path, &marker(3, 9)).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        fs::write(&path, text.replace("\"last_run\":3", "\"last_run\":1")).unwrap();
        assert!(matches!(read(&path), Err(StoreError::MarkerDamaged { .. })));
        fs::write(&path, &text[..text.len() / 2]).unwrap();
        assert!(matches!(read(&path), Err(StoreError::MarkerDamaged { .. })));
    }

    #[test]
    fn a_store_behind_its_marker_says_what_it_lacks() {
        assert_eq!(marker(3, 9).shortfall(&marker(3, 9)), None);
        assert_eq!(
            marker(0, 0).shortfall(&marker(3, 9)).as_deref(),
            Some(
                "its last run is none, the marker says r-3; its audit log ends at #0, the marker says #9"
            )
        );
        assert_eq!(marker(4, 10).shortfall(&marker(3, 9)), None);
    }
}
