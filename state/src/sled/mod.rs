//! The embedded backend: the store on sled, in a directory with its marker beside it.
//!
//! Its modules live here apart from `postgres` and from what both backends share
//! (`transition`, `record`, `codec`), so that each backend reads as one whole and a rule both
//! must keep is visibly kept once. This file opens the database (checked by `check` before the
//! bot trusts it) and holds the transaction plumbing (counters, audit appends, cluster locks)
//! that every sled write shares.

mod archive;
mod audit;
pub(crate) mod backup;
mod check;
mod compact;
mod deliveries;
mod dump;
mod files;
pub(crate) mod keys;
mod lease;
mod listing;
mod locks;
mod marker;
mod notice;
mod runs;
mod safekeeping;
mod schedules;

pub use archive::ArchivePaths;
pub use backup::{Restored, check, restore, store_in};
pub use check::Summary;
pub use compact::Compacted;
pub use files::wait_until_free;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use opsbot_commands::plan::Plan;
use opsbot_commands::run::Run;
use serde::de::DeserializeOwned;
use sled::transaction::{ConflictableTransactionError, ConflictableTransactionResult};
use sled::transaction::{TransactionError, TransactionalTree};
use sled::{IVec, Tree};

use crate::codec::{self, DecodeError};
use crate::error::StoreError;
use crate::record::{PlanCache, RunRecord};
use crate::sled::marker::Keeper;
use crate::transition;
use keys::{AUDIT, DELIVERIES, INDEX, LOCKS, META, PLANS, RUN_LOGS, RUNS};

/// The layout of trees and keys this opsbot understands: 3 adds the time-ordered `index` tree
/// of runs and audit entries; 2 keeps each run's plan apart from its state (1 kept them in one
/// record, rewritten whole by every transition).
pub(crate) const SCHEMA_VERSION: u32 = 3;

/// What sled may keep of the store in memory. Its default is 1 GiB, and it keeps every page it
/// writes until then: the bot grew by the size of each run it executed (about 5 KiB with its
/// audit entries and log), for as long as it ran. The bot reads the unfinished runs and the
/// newest history; older pages are read from the file again, which only `/run list` of an old
/// range and the audit export do.
const CACHE_BYTES: u64 = 1024 * 1024;

/// The durable store: runs, the audit log, one lock per cluster, run logs. Every write is one
/// sled transaction followed by a flush, so that a write that returned survives a SIGKILL.
/// A cluster's lock is held exactly while its run is unfinished: it is taken when the run is
/// created and released by the transition that finishes it, in the same transaction.
/// Clones share the same database (sled handles are cheap clones).
#[derive(Clone)]
pub(crate) struct Sled {
    /// What audit entries are stamped with.
    pub(crate) now: crate::Now,
    pub(crate) db: sled::Db,
    pub(crate) meta: Tree,
    pub(crate) runs: Tree,
    pub(crate) plans: Tree,
    pub(crate) locks: Tree,
    pub(crate) audit: Tree,
    pub(crate) run_logs: Tree,
    pub(crate) deliveries: Tree,
    pub(crate) index: Tree,
    path: Arc<PathBuf>,
    /// Where compaction archives to (see `archive`), beside the store.
    pub(crate) archives: Arc<ArchivePaths>,
    /// Serializes `create_run`, so that the id its `build` closure is given is the id the
    /// transaction allocates (sled's file lock already keeps other processes out).
    pub(crate) creating: Arc<Mutex<()>>,
    /// When old delivery ids were last swept out (Unix seconds; 0: not since opening).
    pub(crate) last_sweep: Arc<AtomicU64>,
    pub(crate) plan_cache: Arc<PlanCache>,
    /// The marker beside the store (see `marker`), moved forward by every flush.
    marker: Arc<Keeper>,
    /// Every write holds it shared, a backup and [`Sled::close`] exclusively (see
    /// `safekeeping`). `true` once closed: every write after it is refused.
    writes: Arc<RwLock<bool>>,
}

/// Not derived: sled's own `Debug` would print the whole database.
impl fmt::Debug for Sled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sled").field("path", &self.path).finish()
    }
}

impl Sled {
    /// Opens (or creates) the store at `path` and checks it: the schema version, the counters,
    /// the locks and every unfinished run (its record and its plan) are decoded once, so that
    /// a store the bot cannot resume from stops it at start-up with a clear message. Finished
    /// runs, the audit log and run logs are not scanned (they grow with the history); they are
    /// checked when read.
    /// Before sled opens it (sled writes as it opens), its files are checked against its
    /// marker; its counters right after, before anything is written (see `safekeeping`).
    pub fn open(path: &Path) -> Result<Sled, StoreError> {
        let started = Instant::now();
        let (marker, expected) = safekeeping::before_open(path)?;
        let db = sled::Config::new()
            .path(path)
            .cache_capacity(CACHE_BYTES)
            .open()
            .map_err(|error| match error {
                // sled reports its file lock as `Other`, naming it only in the message.
                sled::Error::Io(io) if io.to_string().contains("could not acquire lock") => {
                    StoreError::InUse {
                        path: path.to_owned(),
                    }
                }
                other => StoreError::Sled(other),
            })?;
        safekeeping::has_records(&db, path, expected.as_ref())?;
        let store = Sled {
            now: crate::Now::system(),
            meta: db.open_tree(META)?,
            runs: db.open_tree(RUNS)?,
            plans: db.open_tree(PLANS)?,
            locks: db.open_tree(LOCKS)?,
            audit: db.open_tree(AUDIT)?,
            run_logs: db.open_tree(RUN_LOGS)?,
            deliveries: db.open_tree(DELIVERIES)?,
            index: db.open_tree(INDEX)?,
            db,
            path: Arc::new(path.to_owned()),
            archives: Arc::new(ArchivePaths::of(path)?),
            creating: Arc::new(Mutex::new(())),
            last_sweep: Arc::new(AtomicU64::new(0)),
            plan_cache: Arc::new(PlanCache::default()),
            marker: Arc::new(Keeper::new(path, marker, expected)),
            writes: Arc::new(RwLock::new(false)),
        };
        if let Some(expected) = &expected {
            store.check_held(expected)?;
        }
        store.check_schema()?;
        let (runs, unfinished) = store.validate()?;
        // A store that had no marker gets its first one here.
        store.marker.advance(&store.held()?)?;
        tracing::info!(
            path = %path.display(),
            runs,
            unfinished,
            elapsed_ms = started.elapsed().as_millis(),
            "store opened"
        );
        Ok(store)
    }

    /// The value of a counter outside a transaction; counters start at 1.
    pub(crate) fn counter(&self, key: &[u8]) -> Result<u64, StoreError> {
        match self.meta.get(key)? {
            Some(bytes) => self.decode(META, key, &bytes),
            None => Ok(1),
        }
    }

    /// Makes everything written so far durable: every write calls it before returning,
    /// because the engine relies on a returned write to be there after a crash. Then moves the
    /// marker forward to what the flush made durable (read before it). A marker that cannot be
    /// written is only warned about: the write is durable all the same, and a marker behind
    /// the store is what it is by design between writes (it never claims more than the store
    /// holds); the next flush, or the next open, writes it again or stops the bot.
    pub(crate) fn flush(&self) -> Result<(), StoreError> {
        let held = self.held()?;
        self.db.flush()?;
        if let Err(error) = self.marker.advance(&held) {
            tracing::warn!(%error, "the store's marker lags behind the store");
        }
        Ok(())
    }

    /// Where the store is, for logs.
    pub(crate) fn describe(&self) -> String {
        format!("sled {}", self.path.display())
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn corrupt(&self, tree: &'static str, key: &[u8], detail: &str) -> StoreError {
        StoreError::Corrupt {
            path: self.path().to_owned(),
            tree,
            key: keys::render(tree, key),
            detail: detail.to_owned(),
        }
    }

    pub(crate) fn decode<T: DeserializeOwned>(
        &self,
        tree: &'static str,
        key: &[u8],
        bytes: &[u8],
    ) -> Result<T, StoreError> {
        codec::decode(bytes).map_err(|error| match error {
            DecodeError::Corrupt(detail) => self.corrupt(tree, key, &detail),
            DecodeError::Newer(found) => StoreError::NewerVersion {
                path: self.path().to_owned(),
                tree,
                key: keys::render(tree, key),
                found,
                supported: codec::FORMAT,
            },
        })
    }

    /// Decodes a run record (without its plan) filed under `key`, and checks it is filed under
    /// its own id.
    pub(crate) fn decode_record(&self, key: &[u8], bytes: &[u8]) -> Result<RunRecord, StoreError> {
        let record: RunRecord = self.decode(RUNS, key, bytes)?;
        if keys::run_key(record.id()) != key {
            return Err(self.corrupt(RUNS, key, &format!("it holds run {}", record.id())));
        }
        Ok(record)
    }

    /// The plan of run `id`, from the cache or else read with `read` (see [`PlanRead`]). Only an
    /// unfinished run's plan is put in the cache (`keep`): it is read at every step of the run,
    /// whereas a finished run's is read once by a listing, which would otherwise push the live
    /// runs' plans out.
    fn plan<E: From<StoreError>>(
        &self,
        record: &RunRecord,
        read: impl PlanRead<E>,
    ) -> Result<Arc<Plan>, E> {
        let (id, keep) = (record.id(), !record.is_finished());
        if let Some(plan) = self.plan_cache.get(id, record.digest()) {
            return Ok(plan);
        }
        let key = keys::run_key(id);
        let Some(bytes) = read(&key)? else {
            return Err(self.corrupt(RUNS, &key, "its plan is missing").into());
        };
        let plan = Arc::new(self.decode(PLANS, &key, &bytes)?);
        if keep {
            self.plan_cache.put(id, record.digest(), Arc::clone(&plan));
        }
        Ok(plan)
    }

    /// The whole run of a record (as [`Sled::decode_record`] returns it, filed under `key`),
    /// checked: consistent in itself (see [`Run::inconsistency`]), so that no run task ever
    /// works from a record that breaks it. The plan is cached only while the run is unfinished.
    ///
    /// The record and the plan are two reads. A booked run's plan is replaced at its time, in
    /// the transaction that rewrites its record, so the plan read after a record of a run still
    /// ahead of its time may already be the new one: the record is read again until it is the
    /// one the plan was read with.
    pub(crate) fn with_plan(&self, key: &[u8], record: RunRecord) -> Result<Run, StoreError> {
        let mut record = record;
        loop {
            let plan = self.plan(&record, |key: &[u8]| {
                Ok::<_, StoreError>(self.plans.get(key)?)
            })?;
            if record.is_ahead() && !record.is_finished() {
                let again = match self.runs.get(key)? {
                    Some(bytes) => self.decode_record(key, &bytes)?,
                    None => record.clone(),
                };
                if again != record {
                    record = again;
                    continue;
                }
            }
            return self.joined(key, record, plan);
        }
    }

    /// [`Sled::with_plan`], reading the plan (when it is not cached) with `read`.
    fn with_plan_read_by<E: From<StoreError>>(
        &self,
        key: &[u8],
        record: RunRecord,
        read: impl PlanRead<E>,
    ) -> Result<Run, E> {
        let plan = self.plan(&record, read)?;
        self.joined(key, record, plan).map_err(E::from)
    }

    /// The run of a record and its plan, or the damage that keeps them from making one.
    fn joined(&self, key: &[u8], record: RunRecord, plan: Arc<Plan>) -> Result<Run, StoreError> {
        record
            .with(plan)
            .map_err(|wrong| self.corrupt(RUNS, key, &wrong.to_string()))
    }

    /// Decodes a stored run record and joins it with its plan.
    pub(crate) fn decode_run(&self, key: &[u8], bytes: &[u8]) -> Result<Run, StoreError> {
        let record = self.decode_record(key, bytes)?;
        self.with_plan(key, record)
    }

    /// Takes the next number of a counter inside a transaction.
    pub(crate) fn take_next<E: From<StoreError>>(
        &self,
        meta: &TransactionalTree,
        key: &[u8],
    ) -> ConflictableTransactionResult<u64, E> {
        let next: u64 = match meta.get(key)? {
            Some(bytes) => self.decode(META, key, &bytes).map_err(abort)?,
            None => 1,
        };
        let after = next
            .checked_add(1)
            .ok_or_else(|| abort(self.corrupt(META, key, "the counter is exhausted")))?;
        meta.insert(key, transition::encode("a counter", &after).map_err(abort)?)?;
        Ok(next)
    }
}

/// How a plan missing from the cache is read, by its key: from the `plans` tree, or inside a
/// transaction from the transaction's view of it. sled holds every other read of the database
/// until a transaction ends, so a transaction that read the tree itself would never end.
pub(crate) trait PlanRead<E>: FnOnce(&[u8]) -> Result<Option<IVec>, E> {}

impl<E, F: FnOnce(&[u8]) -> Result<Option<IVec>, E>> PlanRead<E> for F {}

/// Aborts a transaction with a store error.
pub(crate) fn abort<E: From<StoreError>>(error: StoreError) -> ConflictableTransactionError<E> {
    ConflictableTransactionError::Abort(E::from(error))
}

/// The result of a transaction that aborts only with store errors.
pub(crate) fn settle<T>(result: Result<T, TransactionError<StoreError>>) -> Result<T, StoreError> {
    result.map_err(|error| match error {
        TransactionError::Abort(error) => error,
        TransactionError::Storage(error) => StoreError::Sled(error),
    })
}
