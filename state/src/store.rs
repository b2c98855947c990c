//! The one store the bot uses, on either backend. Each method is one line that hands the call
//! to the backend (enum dispatch, so that the generic methods stay generic and nothing is
//! boxed); what a method means is documented here once, and both backends keep it.

use std::path::Path;
use std::time::Duration;

use opsbot_commands::audit::{AuditEvent, AuditKind};
use opsbot_commands::maintenance::MaintenanceNotice;
use opsbot_commands::name::RunId;
use opsbot_commands::page::Page;
use opsbot_commands::people::Speaker;
use opsbot_commands::run::Run;
use opsbot_commands::schedule::{FireRecord, Pause, ScheduleName, StandingApproval, StandingId};
use opsbot_commands::target::Target;
use time::OffsetDateTime;

use crate::dump::Entry;
use crate::error::{StoreError, UpdateError};
use crate::listing::{AuditQuery, Listing};
use crate::postgres::{LeaseStatus, PgConfig, Postgres};
use crate::sled::{ArchivePaths, Compacted, Sled, Summary};

/// The durable store: runs, the audit log, one lock per cluster, run logs, schedules. Every
/// write is one transaction, durable before the method returns, so that a write that returned
/// survives the bot being killed. A cluster's lock is held exactly while its run is
/// unfinished: taken when the run is created, released by the transition that finishes it, in
/// the same transaction. Clones are cheap and share the same store.
#[derive(Debug, Clone)]
pub struct Store {
    backend: Backend,
}

#[derive(Debug, Clone)]
enum Backend {
    Sled(Sled),
    Postgres(Postgres),
}

/// Calls the same method on whichever backend the store is on.
macro_rules! on_backend {
    ($store:expr, $backend:ident => $call:expr) => {
        match &$store.backend {
            Backend::Sled($backend) => $call,
            Backend::Postgres($backend) => $call,
        }
    };
}

impl Store {
    /// Opens (or creates) the sled store at `path` and checks it: its files against its
    /// marker, the schema version, the counters, the locks and every unfinished run (record
    /// and plan) are decoded once, so that a store the bot cannot resume from stops it at
    /// start-up with a clear message. Finished runs and the audit log are checked when read.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Sled::open(path).map(|sled| Store {
            backend: Backend::Sled(sled),
        })
    }

    /// Connects to the store on PostgreSQL, migrates its schema to this opsbot's (refusing
    /// one from a newer opsbot) and checks it as [`Store::open`] does: every unfinished run
    /// decoded and consistent.
    pub fn open_postgres(config: &PgConfig) -> Result<Store, StoreError> {
        Postgres::open(config).map(|postgres| Store {
            backend: Backend::Postgres(postgres),
        })
    }

    /// The same store, stamping its audit entries with `now`: the bot's clock, which runs at
    /// another time under `--now`.
    pub fn with_now(mut self, now: crate::Now) -> Self {
        match &mut self.backend {
            Backend::Sled(sled) => sled.now = now,
            Backend::Postgres(postgres) => postgres.now = now,
        }
        self
    }

    /// `sled` or `postgres`, for logs and metrics.
    pub fn kind(&self) -> &'static str {
        match &self.backend {
            Backend::Sled(_) => "sled",
            Backend::Postgres(_) => "postgres",
        }
    }

    /// Where the store is, for logs: a path, or PostgreSQL's user, host, database and schema
    /// (never a password).
    pub fn describe(&self) -> String {
        on_backend!(self, store => store.describe())
    }

    /// Creates a run in one transaction: allocates the next id (r-1, r-2, ... with no gaps),
    /// takes the lock of the run's cluster, stores the run and appends `RunRequested`. `build`
    /// is called once, with the id the run gets (a run it returns with another id is filed
    /// under the allocated one). A cluster busy with another unfinished run gives
    /// [`StoreError::Locked`] and nothing is written.
    pub fn create_run(
        &self,
        build: impl FnOnce(RunId) -> Run,
        actor: Option<&Speaker>,
    ) -> Result<Run, StoreError> {
        on_backend!(self, store => store.create(build, actor, None))
    }

    /// Creates the run of a schedule's fire at `fire_at`, like [`Store::create_run`], and
    /// records the fire in the same transaction: a fire at or before the schedule's last
    /// recorded one is refused with [`StoreError::AlreadyFired`] and nothing is written. So a
    /// bot killed at any instant either created the run and recorded the fire, or neither.
    pub fn create_fired_run(
        &self,
        build: impl FnOnce(RunId) -> Run,
        schedule: &ScheduleName,
        fire_at: OffsetDateTime,
    ) -> Result<Run, StoreError> {
        let speaker = Speaker::from(&schedule.as_requester());
        on_backend!(self, store => store.create(build, Some(&speaker), Some((schedule, fire_at))))
    }

    /// The run with this id, if there is one.
    pub fn run(&self, id: RunId) -> Result<Option<Run>, StoreError> {
        on_backend!(self, store => store.run(id))
    }

    /// Whether run `id` was ever created, though compaction may have archived it since: ids
    /// are handed out densely and never taken back.
    pub fn was_created(&self, id: RunId) -> Result<bool, StoreError> {
        on_backend!(self, store => store.was_created(id))
    }

    /// Applies a transition as a compare-and-swap: reads the run, applies `change` to a copy,
    /// and writes the copy in one transaction with the audit events `change` returned (stamped
    /// with now, the run and `actor`) and the lock change it implies (a run that became
    /// finished releases its cluster). If the run changed in between, it is read again and
    /// `change` applied again, so no concurrent transition is lost. A refusal from `change`
    /// writes nothing; a change that alters nothing and audits nothing writes nothing either.
    /// A run's plan never changes, except once when a booked run reaches its time.
    pub fn update_run<E>(
        &self,
        id: RunId,
        actor: Option<&Speaker>,
        change: impl FnMut(&mut Run) -> Result<Vec<AuditKind>, E>,
    ) -> Result<Run, UpdateError<E>> {
        on_backend!(self, store => store.update_run(id, actor, change))
    }

    /// The run holding one of `target`'s locks. A lock left pointing at a finished, missing or
    /// other-target run (possible only after a repair by hand) counts as free.
    pub fn lock_holder(&self, target: &Target) -> Result<Option<RunId>, StoreError> {
        on_backend!(self, store => store.lock_holder(target))
    }

    /// Appends an event that is not part of a run transition (a refused approval, say).
    pub fn append_audit(&self, event: &AuditEvent) -> Result<(), StoreError> {
        on_backend!(self, store => store.append_audit(event))
    }

    /// Appends the output lines of one command to a run's log, whole or not at all. A run's
    /// log holds at most [`crate::RUN_LOG_CAP`] bytes of lines: the line that would pass it is
    /// replaced by a note saying so, and nothing is appended after it.
    pub fn append_run_log<S: AsRef<str>>(&self, run: RunId, lines: &[S]) -> Result<(), StoreError> {
        on_backend!(self, store => store.append_run_log(run, lines))
    }

    /// A run's log lines, in the order they were appended: all of them.
    pub fn run_log(&self, run: RunId) -> Result<Vec<String>, StoreError> {
        on_backend!(self, store => store.run_log(run))
    }

    /// Copies a sled store into a new backup directory `dest`, at one point in time. A store
    /// on PostgreSQL is backed up by the database's own tools (pg_dump), which know its
    /// transactions: [`StoreError::NotOnPostgres`].
    pub fn backup(&self, dest: &Path) -> Result<Summary, StoreError> {
        on_backend!(self, store => store.backup(dest))
    }

    /// Where a sled store's compaction archives to. A store on PostgreSQL keeps its history
    /// in the database (see [`Store::compact`]): [`StoreError::NotOnPostgres`].
    pub fn archive_paths(&self) -> Result<ArchivePaths, StoreError> {
        on_backend!(self, store => store.archive_paths())
    }

    /// On sled: archives then removes the runs that finished before `cutoff` and the audit
    /// entries stamped before it, `batch` at a time. On PostgreSQL: nothing, and an empty
    /// [`Compacted`]: the history stays in the database, where its indexes keep listings fast
    /// and the DBAs' backups and retention policy already apply (archive files on the disk of
    /// whichever instance was active would split the history across machines).
    pub fn compact(&self, cutoff: OffsetDateTime, batch: usize) -> Result<Compacted, StoreError> {
        on_backend!(self, store => store.compact(cutoff, batch))
    }

    /// True the first time `id` is seen, false for a repeat; durable before it returns. Ids
    /// older than a day are forgotten.
    pub fn first_delivery(&self, id: &str) -> Result<bool, StoreError> {
        on_backend!(self, store => store.first_delivery(id))
    }

    /// Records a delivered announcement: its id (as [`Store::first_delivery`] does) and its
    /// audit entry, in one transaction: a crash between the two would either announce it
    /// again or lose its audit record. False, and nothing appended, for an id already there.
    pub fn announced(&self, id: &str, event: &AuditEvent) -> Result<bool, StoreError> {
        on_backend!(self, store => store.announced(id, event))
    }

    /// True when `id` was recorded by [`Store::first_delivery`] or [`Store::announced`]; reads
    /// only.
    pub fn delivered(&self, id: &str) -> Result<bool, StoreError> {
        on_backend!(self, store => store.delivered(id))
    }

    /// What a process calls before it exits. A sled store waits for the writes under way to
    /// reach the disk (a reader may have seen them already) and refuses later ones with
    /// [`StoreError::ShuttingDown`]. A PostgreSQL store ends its connections now, before a
    /// server the process started itself is stopped (the demo's): each ends cleanly instead of
    /// reporting the server gone; what it committed is on disk already.
    pub fn close(&self) {
        match &self.backend {
            Backend::Sled(store) => store.close(),
            Backend::Postgres(store) => store.close(),
        }
    }

    /// The bytes the store takes (sled's files, or the PostgreSQL schema's tables and
    /// indexes), for the bot's metrics.
    pub fn size_on_disk(&self) -> Result<u64, StoreError> {
        on_backend!(self, store => store.size_on_disk())
    }

    /// The unfinished runs (to resume, or to show), oldest first.
    pub fn unfinished_runs(&self) -> Result<Vec<Run>, StoreError> {
        on_backend!(self, store => store.unfinished_runs())
    }

    /// `/run list`: the unfinished runs and those finished at or after `since`, newest (by id)
    /// first, one page of `per_page`.
    pub fn recent_runs(
        &self,
        since: OffsetDateTime,
        page: Page,
        per_page: usize,
    ) -> Result<Listing<Run>, StoreError> {
        on_backend!(self, store => store.recent_runs(since, page, per_page))
    }

    /// Run ids to suggest as an option is typed: the unfinished runs first (newest first), then
    /// the newest others, `limit` in all.
    pub fn suggested_run_ids(&self, limit: usize) -> Result<Vec<RunId>, StoreError> {
        on_backend!(self, store => store.suggested_run_ids(limit))
    }

    /// Every run, newest first: the whole history, for tests and tools.
    pub fn runs(&self) -> Result<Vec<Run>, StoreError> {
        on_backend!(self, store => store.runs())
    }

    /// The whole audit log in the order it was appended, in memory: for tests and tools.
    pub fn audit(&self) -> Result<Vec<AuditEvent>, StoreError> {
        on_backend!(self, store => store.audit())
    }

    /// `/audit`: one page of `per_page` entries matching `query`, newest first.
    pub fn audit_page(
        &self,
        query: AuditQuery,
        page: Page,
        per_page: usize,
    ) -> Result<Listing<AuditEvent>, StoreError> {
        on_backend!(self, store => store.audit_page(query, page, per_page))
    }

    /// Every audit entry matching `query`, oldest first, read a bounded batch at a time as the
    /// iterator is (for an export, however long).
    pub fn audit_events(
        &self,
        query: AuditQuery,
    ) -> impl Iterator<Item = Result<AuditEvent, StoreError>> + '_ {
        type Events<'a> = Box<dyn Iterator<Item = Result<AuditEvent, StoreError>> + 'a>;
        on_backend!(self, store => Box::new(store.audit_events(query)) as Events<'_>)
    }

    /// Everything the store holds, as backend-neutral entries in one deterministic order (see
    /// [`Entry`]), read a bounded batch at a time where the history is long; each record
    /// decoded and checked as a read would, so a damaged one is an error, never skipped.
    pub fn export(&self) -> impl Iterator<Item = Result<Entry, StoreError>> + '_ {
        type Entries<'a> = Box<dyn Iterator<Item = Result<Entry, StoreError>> + 'a>;
        on_backend!(self, store => Box::new(store.export()) as Entries<'_>)
    }

    /// Writes `batch` of an import in one transaction (see [`Store::import`]).
    pub(crate) fn import_batch(&self, batch: &[Entry]) -> Result<(), StoreError> {
        on_backend!(self, store => store.import_batch(batch))
    }

    /// The maintenance notice in force, if any.
    pub fn maintenance_notice(&self) -> Result<Option<MaintenanceNotice>, StoreError> {
        on_backend!(self, store => store.maintenance_notice())
    }

    /// Replaces the notice (`None` ends it). Returns the one it replaced.
    pub fn set_maintenance_notice(
        &self,
        notice: Option<&MaintenanceNotice>,
    ) -> Result<Option<MaintenanceNotice>, StoreError> {
        on_backend!(self, store => store.set_maintenance_notice(notice))
    }

    /// The last fire of `schedule` the store recorded.
    pub fn last_fire(&self, schedule: &ScheduleName) -> Result<Option<FireRecord>, StoreError> {
        on_backend!(self, store => store.last_fire(schedule))
    }

    /// Records a fire that created no run, audited unless it is the scheduler's first look;
    /// refused with [`StoreError::AlreadyFired`] if a fire at or after `record.at` is recorded.
    pub fn record_fire(
        &self,
        schedule: &ScheduleName,
        record: &FireRecord,
    ) -> Result<(), StoreError> {
        on_backend!(self, store => store.record_fire(schedule, record))
    }

    /// Who paused `schedule`, if it is paused.
    pub fn pause(&self, schedule: &ScheduleName) -> Result<Option<Pause>, StoreError> {
        on_backend!(self, store => store.pause(schedule))
    }

    /// Pauses (`Some`) or resumes (`None`) `schedule`, with its audit event. Returns the
    /// pause it replaced.
    pub fn set_pause(
        &self,
        schedule: &ScheduleName,
        pause: Option<&Pause>,
        actor: &Speaker,
    ) -> Result<Option<Pause>, StoreError> {
        on_backend!(self, store => store.set_pause(schedule, pause, actor))
    }

    /// Every standing approval, oldest first.
    pub fn standing_approvals(&self) -> Result<Vec<StandingApproval>, StoreError> {
        on_backend!(self, store => store.standing_approvals())
    }

    /// Creates a standing approval under the next id (sa-1, sa-2, ...), with its audit event;
    /// `build` may refuse.
    pub fn create_standing<E>(
        &self,
        actor: &Speaker,
        build: impl FnOnce(StandingId) -> Result<StandingApproval, E>,
    ) -> Result<StandingApproval, UpdateError<E>> {
        on_backend!(self, store => store.create_standing(actor, build))
    }

    /// A compare-and-swap transition of standing approval `id`, like [`Store::update_run`]:
    /// `change` returns what happened in words for the audit log (`None`: nothing to record).
    pub fn update_standing<E>(
        &self,
        id: StandingId,
        actor: &Speaker,
        change: impl FnMut(&mut StandingApproval) -> Result<Option<String>, E>,
    ) -> Result<StandingApproval, UpdateError<E>> {
        on_backend!(self, store => store.update_standing(id, actor, change))
    }

    /// From now on, every write of this store (all its clones) first checks that the lease
    /// is still at `epoch` and is refused with [`StoreError::Fenced`] otherwise: an instance
    /// that lost the lease cannot write over the one that took it. PostgreSQL only.
    pub fn fence(&self, epoch: u64) -> Result<(), StoreError> {
        on_backend!(self, store => store.fence(epoch))
    }

    /// Takes the lease for `holder` for `ttl` (by the database's clock) if it is free, expired
    /// or already `holder`'s, and returns its epoch; `None` while another holds it. The epoch
    /// goes up by one each time the lease changes hands. PostgreSQL only.
    pub fn acquire_lease(&self, holder: &str, ttl: Duration) -> Result<Option<u64>, StoreError> {
        on_backend!(self, store => store.acquire_lease(holder, ttl))
    }

    /// Extends `holder`'s lease at `epoch` to `ttl` from now; false when it is no longer
    /// theirs at that epoch (then stop writing). PostgreSQL only.
    pub fn renew_lease(&self, holder: &str, epoch: u64, ttl: Duration) -> Result<bool, StoreError> {
        on_backend!(self, store => store.renew_lease(holder, epoch, ttl))
    }

    /// Gives the lease up (a clean shutdown), so that a standby need not wait for it to
    /// expire; false when it was not `holder`'s at `epoch`. PostgreSQL only.
    pub fn release_lease(&self, holder: &str, epoch: u64) -> Result<bool, StoreError> {
        on_backend!(self, store => store.release_lease(holder, epoch))
    }

    /// The lease as it stands, if it was ever taken. PostgreSQL only.
    pub fn lease(&self) -> Result<Option<LeaseStatus>, StoreError> {
        on_backend!(self, store => store.lease())
    }
}
