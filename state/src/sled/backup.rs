//! Backups of a store, their checks, and putting one back.
//!
//! A backup is a directory holding a store (`store/`) with its marker beside it
//! (`store.marker`): the same pair as a live store and its marker, so that a backup is checked
//! and opened by the same code, and one copied only in part is refused like a damaged store.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use time::OffsetDateTime;

use crate::error::StoreError;
use crate::sled::Sled;
use crate::sled::archive::{self, ArchivePaths};
use crate::sled::check::Summary;
use crate::sled::files;
use crate::sled::marker::{self, Marker};

/// The store inside a backup directory.
const BACKUP_STORE: &str = "store";

/// The store at `path`, or the store inside it if `path` is a backup directory.
pub fn store_in(path: &Path) -> PathBuf {
    let inner = path.join(BACKUP_STORE);
    match marker::path_of(&inner) {
        Ok(marker) if marker.is_file() => inner,
        _ => path.to_owned(),
    }
}

/// Opens the store at `path` (or in the backup directory `path`) and checks everything in it:
/// its files against its marker and its counters (as every open does), then every record, the
/// finished runs and their plans included, and the index against them (see
/// [`Sled::summary`]).
pub fn check(path: &Path) -> Result<Summary, StoreError> {
    let path = store_in(path);
    if !path.is_dir() {
        return Err(StoreError::NotAStore {
            path,
            detail: "there is no directory there".to_owned(),
        });
    }
    Sled::open(&path)?.summary()
}

impl Sled {
    /// Copies every record into a new backup directory `dest` (which must not exist yet, or
    /// be empty), at one point in time: no write happens while the trees are copied. Safe
    /// while the bot runs; runs wait for the copy to end before their next write.
    pub fn backup(&self, dest: &Path) -> Result<Summary, StoreError> {
        let copy_error = |source: io::Error| StoreError::Copy {
            path: dest.to_owned(),
            source,
        };
        if fs::read_dir(dest).is_ok_and(|mut entries| entries.next().is_some()) {
            return Err(copy_error(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "it exists and is not empty; name a new directory",
            )));
        }
        fs::create_dir_all(dest).map_err(copy_error)?;
        let inner = dest.join(BACKUP_STORE);
        let (held, archived) = {
            let _quiet = self.quiet();
            let copy = sled::open(&inner)?;
            for name in self.db.tree_names() {
                let from = self.db.open_tree(&name)?;
                let to = copy.open_tree(&name)?;
                for entry in from.iter() {
                    let (key, value) = entry?;
                    to.insert(key, value)?;
                }
            }
            copy.flush()?;
            // The history compaction moved out of the store is part of it too: as long as the
            // archives are now, copied once writes resume, since compaction only appends past
            // that length (or cuts back to where a batch of its own began).
            let from = self.archives();
            let lengths = [archive::length(&from.runs)?, archive::length(&from.audit)?];
            (self.held()?, lengths)
        };
        let (from, to) = (self.archives(), ArchivePaths::of(&inner)?);
        let archives = [(&from.runs, &to.runs), (&from.audit, &to.audit)];
        for ((from, to), len) in archives.into_iter().zip(archived) {
            if len > 0 {
                archive::copy_start(from, to, len).map_err(copy_error)?;
            }
        }
        let backup = Marker {
            snapshot: files::has_snapshot(&inner)?,
            ..held
        };
        marker::write(&marker::path_of(&inner)?, &backup)?;
        files::wait_until_free(&inner)?;
        check(dest)
    }
}

/// What [`restore`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    pub summary: Summary,
    /// Where the store that was there was moved to (with its marker and archives beside it),
    /// if any.
    pub kept_aside: Option<PathBuf>,
}

/// Puts the backup `backup` in place of the store at `store`: checks a copy of it (its
/// marker and archives with it) beside the store, then moves the store that was there aside
/// with its marker and archives (never deleted: it may hold what the backup lacks) and the
/// copy in. Refused while a process holds the store.
pub fn restore(store: &Path, backup: &Path) -> Result<Restored, StoreError> {
    files::probe_lock(store)?;
    let source = store_in(backup);
    if !marker::path_of(&source)?.is_file() {
        return Err(StoreError::NotAStore {
            path: source,
            detail: "it has no marker beside it, as a backup has".to_owned(),
        });
    }
    let staging = files::beside(store, "restoring")?;
    remove_leftover(&staging)?;
    for (from, to) in present(&source, &staging)? {
        copy_all(&from, &to).map_err(|source| StoreError::Copy { path: to, source })?;
    }
    let summary = check(&staging)?;
    files::probe_lock(store)?;
    let aside = files::beside(
        store,
        &format!("replaced-{}", stamp(OffsetDateTime::now_utc())),
    )?;
    let moved_aside = present(store, &aside)?;
    let kept_aside = (!moved_aside.is_empty()).then(|| aside.clone());
    for (from, to) in moved_aside.into_iter().chain(present(&staging, store)?) {
        rename(&from, &to)?;
    }
    Ok(Restored {
        summary,
        kept_aside,
    })
}

/// `20261128T031502Z`: when a store was moved aside, readable in a directory listing and in
/// the order of the listing.
fn stamp(at: OffsetDateTime) -> String {
    const STAMP: &[time::format_description::BorrowedFormatItem<'_>] =
        time::macros::format_description!("[year][month][day]T[hour][minute][second]Z");
    // Formatting a UTC time with numeric components cannot fail; the seconds would do.
    at.format(STAMP)
        .unwrap_or_else(|_| at.unix_timestamp().to_string())
}

/// A store directory and the files beside it named after it, its marker and archives: what a
/// restore copies, moves aside and puts in place together. The directory comes last, so that
/// the marker is in place before the store it guards.
fn family(store: &Path) -> Result<[PathBuf; 4], StoreError> {
    let archives = ArchivePaths::of(store)?;
    Ok([
        marker::path_of(store)?,
        archives.runs,
        archives.audit,
        store.to_owned(),
    ])
}

/// The files of `from`'s [`family`] that exist, each with its namesake in `to`'s.
fn present(from: &Path, to: &Path) -> Result<Vec<(PathBuf, PathBuf)>, StoreError> {
    Ok(family(from)?
        .into_iter()
        .zip(family(to)?)
        .filter(|(from, _)| from.exists())
        .collect())
}

/// Removes what an interrupted restore left in `staging` (a copy, never the store itself).
fn remove_leftover(staging: &Path) -> Result<(), StoreError> {
    for path in family(staging)? {
        let removed = if path.is_dir() {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
        match removed {
            Err(error) if error.kind() != io::ErrorKind::NotFound => {
                return Err(StoreError::Copy {
                    path,
                    source: error,
                });
            }
            _ => {}
        }
    }
    Ok(())
}

fn rename(from: &Path, to: &Path) -> Result<(), StoreError> {
    fs::rename(from, to).map_err(|source| StoreError::Copy {
        path: to.to_owned(),
        source,
    })
}

/// Copies a file, or a directory and everything under it.
fn copy_all(from: &Path, to: &Path) -> io::Result<()> {
    if !fs::metadata(from)?.is_dir() {
        fs::copy(from, to)?;
        return fs::File::open(to)?.sync_all();
    }
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        copy_all(&entry.path(), &to.join(entry.file_name()))?;
    }
    Ok(())
}
