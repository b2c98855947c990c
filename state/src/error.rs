//! Errors of the store, worded for the operator who reads them at start-up or in chat.

use std::path::PathBuf;

use opsbot_commands::name::RunId;
use opsbot_commands::target::Target;

use crate::keys;

/// What every damaged store is told to do.
const RESTORE: &str = "restore the last backup with `opsbot store restore --config FILE \
                       BACKUP` (the damaged store is kept aside)";

/// Why the store could not do what was asked. The `Display` text is a whole sentence that says
/// what to do next, because it ends up in a start-up failure or a chat reply.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// sled's own failures: a damaged log or snapshot, or the disk refusing a write.
    #[error(
        "the store is damaged or its disk refused it ({0}); if the disk is not full or \
         read-only, {RESTORE}"
    )]
    Sled(#[from] sled::Error),
    /// sled admits one process per store: another opsbot (or an export) has it open.
    #[error(
        "the store at {} is in use by another opsbot process (a store admits one at a time); \
         stop that process, or ask the running bot (e.g. /audit in chat)",
        path.display()
    )]
    InUse { path: PathBuf },
    /// A record that does not decode. Never skipped: a run the bot cannot read is a run it
    /// cannot resume, so it refuses to start rather than forget it.
    #[error(
        "the store at {} is damaged: its {} {key} is corrupt ({detail}); {RESTORE}",
        .path.display(),
        keys::noun(.tree)
    )]
    Corrupt {
        path: PathBuf,
        tree: &'static str,
        key: String,
        detail: String,
    },
    /// A record written by a newer opsbot: reading it with this one could lose what it added.
    #[error(
        "the store at {} has a {} {key} written by a newer opsbot (format {found}, this one reads \
         up to {supported}); run the newer opsbot or restore a backup",
        .path.display(),
        keys::noun(.tree)
    )]
    NewerVersion {
        path: PathBuf,
        tree: &'static str,
        key: String,
        found: u32,
        supported: u32,
    },
    /// The store's files, or its records, contradict its marker (see `marker`): a file is
    /// missing or truncated, or it is an older copy. Refused before anything was written.
    #[error(
        "the store at {} is damaged: {detail}; nothing was written to it; {RESTORE}",
        .path.display()
    )]
    Damaged { path: PathBuf, detail: String },
    /// A path given as a store or a backup that holds neither: a mistyped path, not damage, so
    /// nothing is to be restored.
    #[error(
        "{} is not an opsbot store ({detail}); give the store's directory or a backup directory \
         `opsbot store backup` wrote",
        .path.display()
    )]
    NotAStore { path: PathBuf, detail: String },
    /// The marker itself does not decode or does not match its checksum.
    #[error(
        "the store's marker {} is damaged ({detail}); `opsbot store check --path` verifies the \
         store itself: if it is sound, remove the marker and opsbot writes a new one",
        .path.display()
    )]
    MarkerDamaged { path: PathBuf, detail: String },
    #[error(
        "the store's marker {} cannot be written or read ({source}); check that opsbot may write \
         in its directory",
        .path.display()
    )]
    MarkerIo {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read {} ({source})", .path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A backup or restore could not write its copy.
    #[error("cannot copy the store to {} ({source})", .path.display())]
    Copy {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A store path with no name (such as `/`) has nowhere beside it for its marker.
    #[error(
        "[store] path {} names no directory; give a directory such as /var/lib/opsbot/store",
        .path.display()
    )]
    Unplaceable { path: PathBuf },
    #[error("{target} is busy with run {holder}; wait for it or /run cancel id:{holder}")]
    Locked { target: Target, holder: RunId },
    /// A schedule's fire that the store already recorded: taken once, never twice.
    #[error("schedule {schedule} already fired at {at}")]
    AlreadyFired { schedule: String, at: String },
    #[error("there is no standing approval {id}; /schedule show lists a schedule's")]
    NoStanding { id: String },
    #[error("there is no run {run}; /run list shows the runs there are")]
    NotFound { run: RunId },
    /// A write that never started because the bot is stopping (its caller ran it off the async
    /// threads, and the pool that would have run it has shut down).
    #[error("opsbot is shutting down and did not write this; send it again once opsbot is back")]
    ShuttingDown,
    /// A value serde cannot write (a timestamp outside years 0–9999 has no RFC 3339 form).
    #[error("{what} cannot be stored ({detail}); nothing was written")]
    Unencodable { what: String, detail: String },
    /// The archive that compaction appends old runs and audit entries to could not be written
    /// or was changed by hand; nothing was removed from the store.
    #[error(
        "the archive {} could not be written ({source}); nothing was removed from the store; \
         check the disk, its free space and its permissions",
        .path.display()
    )]
    Archive {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What [`crate::Store::update_run`] can fail with: the store itself, or the caller's closure
/// refusing the transition (then nothing was written).
#[derive(Debug, thiserror::Error)]
pub enum UpdateError<E> {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Refused(E),
}
