//! Errors of the store, worded for the operator who reads them at start-up or in chat.

use std::path::PathBuf;

use opsbot_commands::name::RunId;
use opsbot_commands::target::Target;

use crate::sled::keys;

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
    /// PostgreSQL did not answer in time, or the connection failed: an outage, not damage.
    /// A transaction that did not commit left nothing (one whose `COMMIT` went unanswered may
    /// have committed: read again). The bot's run tasks wait a few seconds and take their run
    /// up again from what the store holds, as a restart would; the store reconnects by itself.
    #[error("the store on PostgreSQL ({place}) is unavailable: {detail}; {REACH}")]
    Unavailable { place: String, detail: String },
    /// PostgreSQL refused a statement for a reason that is not an outage (permissions, a
    /// table changed by hand): retrying does not help.
    #[error(
        "PostgreSQL ({place}) refused the store's statement: {detail}; check the database \
         user's rights on the schema and that no one changed the store's tables by hand"
    )]
    Postgres { place: String, detail: String },
    /// PostgreSQL refused the store's login (`28P01`, `28000`): a wrong password or a user the
    /// server does not admit. Retrying does not help.
    #[error(
        "PostgreSQL ({place}) refused the store's login: {detail}; check the password \
         ([store] password_file or password_env) and the user in [store] url"
    )]
    Login { place: String, detail: String },
    /// Another process wrote to the same store at the same time: only the lease holder may.
    #[error(
        "another opsbot wrote to the store on PostgreSQL ({place}) at the same time ({detail}); \
         only one instance may write: run the others as standbys under the lease"
    )]
    Contended { place: String, detail: String },
    /// A PostgreSQL setting that cannot work, named in `detail`.
    #[error("the store's PostgreSQL settings cannot be used: {detail}")]
    PgConfig { detail: String },
    /// A row that does not decode, or contradicts the row it belongs to. Never skipped (see
    /// [`StoreError::Corrupt`]).
    #[error(
        "the store on PostgreSQL ({place}) is damaged: its {table} row {key} is corrupt \
         ({detail}); {PG_RESTORE}"
    )]
    CorruptRow {
        place: String,
        table: &'static str,
        key: String,
        detail: String,
    },
    /// A row, or the schema itself, written by a newer opsbot.
    #[error(
        "the store on PostgreSQL ({place}) has {what} written by a newer opsbot (version \
         {found}, this one knows up to {supported}); run the newer opsbot or restore a pg_dump"
    )]
    NewerRow {
        place: String,
        what: String,
        found: u32,
        supported: u32,
    },
    /// An operation of the sled backend that a PostgreSQL store has no use for.
    #[error("{what} is for a store on sled; this one is on PostgreSQL: {hint}")]
    NotOnPostgres {
        what: &'static str,
        hint: &'static str,
    },
    /// An operation of the PostgreSQL backend (the lease of high availability) that a sled
    /// store, one process on one machine, cannot offer.
    #[error("{what} needs a store on PostgreSQL; this one is on sled: {hint}")]
    NotOnSled {
        what: &'static str,
        hint: &'static str,
    },
    /// A write under a lease epoch that is no longer the lease's: another instance took over,
    /// and this one must stop writing. Nothing was written.
    #[error(
        "this opsbot writes under lease epoch {mine}, but the lease is at {} held by {}; \
         another instance took over, so nothing was written and this one must stand down",
        current.map_or_else(|| "no epoch".to_owned(), |epoch| epoch.to_string()),
        holder.as_deref().unwrap_or("no one")
    )]
    Fenced {
        mine: u64,
        current: Option<u64>,
        holder: Option<String>,
    },
    /// The bot refused a write of its own before making it: this instance may not act now
    /// (standing by, stepped down, or its lease not renewed in time). Nothing was written.
    #[error("this opsbot instance may not act now ({detail}); nothing was written")]
    NotActive { detail: String },
    /// A copy's destination that already holds records: a copy never merges two histories
    /// (ids taken in both would collide), so it goes into an empty store only.
    #[error(
        "the store {place} is not empty (it holds {found}); a copy goes into an empty store \
         only: give a new sled directory or an empty PostgreSQL schema; nothing was written"
    )]
    NotEmpty { place: String, found: String },
    /// A copy that does not read back as its source: the first entry that differs.
    #[error(
        "the copy in {to} does not read back as {from} does: {detail}; do not use the copy: \
         remove it (the new sled directory, or the PostgreSQL schema) and copy again with no \
         opsbot running on either store"
    )]
    CopyDiffers {
        from: String,
        to: String,
        detail: String,
    },
}

impl StoreError {
    /// Whether the failure passes by itself: the database is away for now, or this instance
    /// is not sure it may act until its lease is renewed. What failed is done again later,
    /// from what the store then says.
    pub fn is_passing(&self) -> bool {
        matches!(self, Self::Unavailable { .. } | Self::NotActive { .. })
    }
}

/// What to check when PostgreSQL cannot be reached.
const REACH: &str = "check that PostgreSQL is up and reachable from here (host, port, \
                     firewall, TLS) and that its credentials are right; runs wait and go on once it answers";

/// What every damaged PostgreSQL store is told to do.
const PG_RESTORE: &str = "restore the database from its last pg_dump, or repair the row by hand";

/// What [`crate::Store::update_run`] can fail with: the store itself, or the caller's closure
/// refusing the transition (then nothing was written).
#[derive(Debug, thiserror::Error)]
pub enum UpdateError<E> {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Refused(E),
}
