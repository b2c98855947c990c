//! The PostgreSQL backend: the store as tables in one schema of a database operators already
//! run and back up, for an opsbot on more than one machine (one active under a lease, see
//! `lease`). Records are the same versioned JSON envelopes sled keeps, decoded by the same
//! code; every write is one serializable transaction (run again from its start after a
//! serialization conflict), checked against the lease epoch first when the store is fenced.
//!
//! This file opens the store (migrating and checking it) and holds the transaction plumbing
//! every write shares; `pool` bridges the synchronous API to tokio-postgres.

mod audit;
mod chat;
mod config;
mod dump;
mod lease;
mod listing;
mod migrate;
mod pool;
mod runs;
mod schedules;
mod sled_only;

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use opsbot_commands::audit::AuditEvent;
use opsbot_commands::name::RunId;
use opsbot_commands::run::Run;
use serde::de::DeserializeOwned;
use tokio_postgres::Row;

use crate::codec::{self, DecodeError};
use crate::error::StoreError;
use crate::record::{PlanCache, RunRecord};
use crate::transition;

pub use config::PgConfig;
pub use lease::LeaseStatus;
use pool::{Conn, Fail, Pool, params};

/// How often a transaction is run again after serialization conflicts before giving up: far
/// more than the few writers of one active instance ever collide.
const RETRIES: usize = 50;

/// The store on PostgreSQL. Clones share the connections, the runtime they run on, and the
/// fence.
#[derive(Clone)]
pub(crate) struct Postgres {
    inner: Arc<Inner>,
    /// What audit entries are stamped with.
    pub(crate) now: crate::Now,
}

/// Not derived: the plan cache would print every live run's plan.
impl std::fmt::Debug for Postgres {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Postgres")
            .field("place", &self.place())
            .field("fence", &self.inner.fence.load(Ordering::Relaxed))
            .finish()
    }
}

struct Inner {
    pool: Pool,
    /// Serializes creations in this process, so that the id a `build` closure is given is the
    /// id its transaction allocates (another process allocating it first is refused).
    creating: Mutex<()>,
    plan_cache: PlanCache,
    /// When old delivery ids were last swept out (Unix seconds; 0: not since opening).
    last_sweep: AtomicI64,
    /// The lease epoch every write is checked against; 0: not fenced (epochs start at 1).
    fence: AtomicU64,
}

impl Postgres {
    /// Connects, migrates the schema (see `migrate`) and checks the store as sled's `open`
    /// does: every unfinished run decoded whole and consistent, the maintenance notice
    /// decoded, and the counters ahead of what they number, so that a store the bot cannot
    /// resume from stops it at start-up. The finished history is checked when read.
    pub(crate) fn open(config: &PgConfig) -> Result<Self, StoreError> {
        let started = Instant::now();
        let store = Self {
            now: crate::Now::system(),
            inner: Arc::new(Inner {
                pool: Pool::new(config)?,
                creating: Mutex::new(()),
                plan_cache: PlanCache::default(),
                last_sweep: AtomicI64::new(0),
                fence: AtomicU64::new(0),
            }),
        };
        let version = migrate::migrate(&store, &config.schema)?;
        // Whole, as the bot resumes them; their plans stay in the cache for their steps.
        let unfinished = store.unfinished_runs()?.len();
        store.maintenance_notice()?;
        let runs = store.check_counters()?;
        tracing::info!(
            place = %store.describe(),
            schema_version = version,
            runs,
            unfinished,
            elapsed_ms = started.elapsed().as_millis(),
            "store opened"
        );
        Ok(store)
    }

    pub(crate) fn describe(&self) -> String {
        self.place().to_owned()
    }

    pub(crate) fn close(&self) {
        self.inner.pool.close();
    }

    fn place(&self) -> &str {
        &self.inner.pool.place
    }

    pub(crate) fn fence(&self, epoch: u64) -> Result<(), StoreError> {
        self.inner.fence.store(epoch, Ordering::SeqCst);
        tracing::info!(epoch, "store writes fenced by the lease epoch");
        Ok(())
    }

    /// Statements outside a transaction (reads, and the lease's single statements).
    fn read<T>(
        &self,
        body: impl FnOnce(&mut Conn<'_>) -> Result<T, Fail>,
    ) -> Result<T, StoreError> {
        let mut conn = self.inner.pool.conn()?;
        match body(&mut conn) {
            Ok(value) => Ok(value),
            Err(Fail::Store(error)) => Err(error),
            // A lone statement conflicts only with itself: not retried, reported.
            Err(Fail::Retry) => Err(StoreError::Postgres {
                place: self.describe(),
                detail: "a read conflicted with a write".to_owned(),
            }),
        }
    }

    /// Runs `body` in one serializable transaction, checked against the fence first, and
    /// commits it; after a serialization conflict, runs it again from its start (so `body`
    /// must do only SQL and what can be done twice).
    fn write<T>(
        &self,
        mut body: impl FnMut(&mut Conn<'_>) -> Result<T, Fail>,
    ) -> Result<T, StoreError> {
        for _ in 0..RETRIES {
            let mut conn = self.inner.pool.conn()?;
            let attempt = conn
                .begin()
                .and_then(|()| self.check_fence(&mut conn))
                .and_then(|()| body(&mut conn))
                .and_then(|value| conn.commit().map(|()| value));
            match attempt {
                Ok(value) => return Ok(value),
                Err(Fail::Retry) => {
                    tracing::debug!("serialization conflict; running the transaction again");
                    conn.rollback();
                }
                Err(Fail::Store(error)) => {
                    conn.rollback();
                    return Err(error);
                }
            }
        }
        Err(StoreError::Postgres {
            place: self.describe(),
            detail: format!("a write conflicted with others {RETRIES} times in a row"),
        })
    }

    /// Takes the next number of counter `name` inside a transaction.
    fn take_next(&self, conn: &mut Conn<'_>, name: &'static str) -> Result<u64, Fail> {
        let row = conn.query_opt(
            "UPDATE counters SET next = next + 1 WHERE name = $1 RETURNING next - 1",
            params![name],
        )?;
        match row {
            Some(row) => Ok(number(row.get(0))),
            None => Err(self.corrupt("counters", name, "it is missing").into()),
        }
    }

    /// The value of counter `name` outside a transaction.
    fn counter(&self, name: &'static str) -> Result<u64, StoreError> {
        self.read(|conn| {
            let row = conn.query_opt("SELECT next FROM counters WHERE name = $1", params![name])?;
            Ok(row.map_or(1, |row| number(row.get(0))))
        })
    }

    /// Checks that the counters are past what they number (a counter behind, set back by
    /// hand, would make the next write collide with a record); returns how many runs were
    /// ever created.
    fn check_counters(&self) -> Result<u64, StoreError> {
        let row = self.read(|conn| {
            let sql = "SELECT (SELECT next FROM counters WHERE name = 'run'), \
                       (SELECT coalesce(max(id), 0) FROM runs), \
                       (SELECT next FROM counters WHERE name = 'audit'), \
                       (SELECT coalesce(max(seq), 0) FROM audit)";
            conn.query_opt(sql, params![])
        })?;
        let Some(row) = row else {
            return Err(self.corrupt("counters", "run", "it is missing"));
        };
        let get = |i: usize| row.get::<_, Option<i64>>(i).map(number);
        for (name, next, last) in [("run", get(0), get(1)), ("audit", get(2), get(3))] {
            match (next, last) {
                (Some(next), Some(last)) if last < next => {}
                (next, last) => {
                    let detail = format!("it is {next:?}, not past the last one, {last:?}");
                    return Err(self.corrupt("counters", name, &detail));
                }
            }
        }
        Ok(get(0).unwrap_or(1).saturating_sub(1))
    }

    fn contended(&self, detail: String) -> StoreError {
        StoreError::Contended {
            place: self.describe(),
            detail,
        }
    }

    pub(crate) fn corrupt(&self, table: &'static str, key: &str, detail: &str) -> StoreError {
        StoreError::CorruptRow {
            place: self.describe(),
            table,
            key: key.to_owned(),
            detail: detail.to_owned(),
        }
    }

    /// Decodes a stored envelope (as `::text`) of row `key` of `table`.
    fn decode<T: DeserializeOwned>(
        &self,
        table: &'static str,
        key: &str,
        text: &str,
    ) -> Result<T, StoreError> {
        codec::decode(text.as_bytes()).map_err(|error| match error {
            DecodeError::Corrupt(detail) => self.corrupt(table, key, &detail),
            DecodeError::Newer(found) => StoreError::NewerRow {
                place: self.describe(),
                what: format!("its {table} row {key}"),
                found,
                supported: codec::FORMAT,
            },
        })
    }

    /// A run from its row (`id, record::text, plan::text` from column `at`), checked as sled
    /// checks one: filed under its own id and consistent in itself. An unfinished run's plan
    /// is shared from the cache, as sled's is.
    fn decode_run(&self, row: &Row, at: usize) -> Result<Run, StoreError> {
        let id = RunId::new(number(row.get(at)));
        let key = id.to_string();
        let record: RunRecord = self.decode("runs", &key, row.get(at + 1))?;
        if record.id() != id {
            return Err(self.corrupt("runs", &key, &format!("it holds run {}", record.id())));
        }
        let cache = &self.inner.plan_cache;
        let plan = match cache.get(id, record.digest()) {
            Some(plan) => plan,
            None => {
                let plan = Arc::new(self.decode("runs", &key, row.get(at + 2))?);
                if !record.is_finished() {
                    cache.put(id, record.digest(), Arc::clone(&plan));
                }
                plan
            }
        };
        record
            .with(plan)
            .map_err(|wrong| self.corrupt("runs", &key, &wrong.to_string()))
    }

    /// Encodes an audit event (outside the transaction, which may run more than once).
    fn encode_audit(what: &str, event: &AuditEvent) -> Result<Audited, StoreError> {
        Ok(Audited {
            at: event.at,
            run: event.run.map(|run| sql_number(run.get())),
            text: String::from_utf8_lossy(&transition::encode(what, event)?).into_owned(),
        })
    }
}

/// An audit event encoded for the `audit` table.
#[derive(Clone)]
struct Audited {
    at: time::OffsetDateTime,
    run: Option<i64>,
    text: String,
}

/// A number the store keeps (an id, a count) as PostgreSQL's `bigint` holds it; never negative
/// in a store this code wrote.
fn number(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// A number for a `bigint` column; ids are far below `i64::MAX`.
fn sql_number(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// An envelope as text for a `jsonb` column (written as `$n::text::jsonb`).
fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).into_owned()
}
