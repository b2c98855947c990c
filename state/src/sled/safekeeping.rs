//! How the store keeps its marker (see `marker`) true: checked when the store opens, before
//! anything is written, and moved forward after every flush.

use std::path::Path;
use std::sync::{PoisonError, RwLockReadGuard, RwLockWriteGuard};

use crate::error::StoreError;
use crate::sled::Sled;
use crate::sled::files;
use crate::sled::keys::{AUDIT, META, NEXT_AUDIT, NEXT_RUN, RUNS};
use crate::sled::marker::{self, Marker};

/// What the marker of the store at `path` expects, once the store's files agree with it (or
/// `None` when it has no marker yet). Nothing is written (sled has not opened it) but the
/// removal of a snapshot sled was killed writing, which it would read and refuse.
pub(crate) fn before_open(path: &Path) -> Result<(std::path::PathBuf, Option<Marker>), StoreError> {
    let marker_path = marker::path_of(path)?;
    files::probe_lock(path)?;
    files::discard_unfinished_snapshots(path)?;
    let expected = marker::read(&marker_path)?;
    // A marker of no records has nothing to lose (a new store deleted before its first run).
    if let Some(expected) = expected.filter(Marker::holds_records) {
        files::check(path, &expected)?;
    }
    Ok((marker_path, expected))
}

/// Refuses a database without the tree the counters live in when the marker says it held
/// records (it lost them all; opening the tree would create it: a write).
pub(crate) fn has_records(
    db: &sled::Db,
    path: &Path,
    expected: Option<&Marker>,
) -> Result<(), StoreError> {
    let has_meta = db.tree_names().iter().any(|name| name == META.as_bytes());
    if has_meta || !expected.is_some_and(Marker::holds_records) {
        return Ok(());
    }
    Err(StoreError::Damaged {
        path: path.to_owned(),
        detail: "it holds no records, although its marker says it had some".to_owned(),
    })
}

impl Sled {
    /// How far the store got, by its own counters (the snapshot is the keeper's to see).
    pub(crate) fn held(&self) -> Result<Marker, StoreError> {
        Ok(Marker {
            last_run: self.counter(NEXT_RUN)?.saturating_sub(1),
            last_audit: self.counter(NEXT_AUDIT)?.saturating_sub(1),
            snapshot: false,
        })
    }

    /// Refuses a store that holds less than its marker says, before anything is written. A
    /// counter set back by hand, behind the records it numbers, is named as such.
    pub(crate) fn check_held(&self, expected: &Marker) -> Result<(), StoreError> {
        let Some(shortfall) = self.held()?.shortfall(expected) else {
            return Ok(());
        };
        self.check_counter(NEXT_RUN, &self.runs, RUNS)?;
        self.check_counter(NEXT_AUDIT, &self.audit, AUDIT)?;
        Err(self.damaged(format!("it is an older copy or lost records ({shortfall})")))
    }

    pub(crate) fn damaged(&self, detail: String) -> StoreError {
        StoreError::Damaged {
            path: self.path().to_owned(),
            detail,
        }
    }

    /// Held by every write, transaction and flush, so that a backup (which holds
    /// [`Sled::quiet`]) sees the store at one point in time, between two writes, and
    /// [`Sled::close`] waits for the writes under way. Taken once per write, never again by the
    /// thread holding it: std's lock queues a second read behind a backup waiting for the write
    /// lock, which waits for the first read, and neither ends. Refused once the store is closed.
    pub(crate) fn writing(&self) -> Result<RwLockReadGuard<'_, bool>, StoreError> {
        let writing = self.writes.read().unwrap_or_else(PoisonError::into_inner);
        if *writing {
            return Err(StoreError::ShuttingDown);
        }
        Ok(writing)
    }

    /// Waits for the writes under way to be on disk, and refuses every write after them: what
    /// a process about to exit calls. A write is visible to readers once its transaction
    /// commits, before its flush; a process that ended between the two would lose what a
    /// reader (`/run status`, `/run list`) was already shown.
    pub(crate) fn close(&self) {
        *self.quiet() = true;
    }

    /// No write happens while this is held.
    pub(crate) fn quiet(&self) -> RwLockWriteGuard<'_, bool> {
        self.writes.write().unwrap_or_else(PoisonError::into_inner)
    }
}
