//! Checking a store before the bot trusts it: the schema version (and moving an older layout
//! to this one), then one decoding pass over the counters, the locks and the unfinished runs
//! (records and plans). Finished runs and the audit log are checked when read: decoding them
//! all would make start-up grow with the history. `opsbot store check` and a backup's
//! self-check decode them all (see [`Sled::summary`]).

use opsbot_commands::audit::AuditEvent;
use opsbot_commands::maintenance::MaintenanceNotice;
use opsbot_commands::name::RunId;
use opsbot_commands::plan::Plan;
use serde::Deserialize;
use sled::{Transactional, Tree};

use crate::error::StoreError;
use crate::record::RunRecord;
use crate::sled::audit::audit_index_keys;
use crate::sled::compact::PendingArchive;
use crate::sled::keys::{
    self, AUDIT, AUDIT_BY_RUN, AUDIT_BY_TIME, FINISHED, INDEX, LOCKS, MAINTENANCE, META,
    NEXT_AUDIT, NEXT_RUN, PENDING_ARCHIVE, PLANS, RUN_LOGS, RUNS, SCHEMA, UNFINISHED,
};
use crate::sled::{SCHEMA_VERSION, Sled, settle};
use crate::transition;

/// A run record as schema 1 kept it: the whole run, its plan inside; read in one pass. A record
/// already moved (by a move a crash interrupted) has no plan.
#[derive(Deserialize)]
struct Schema1Record {
    plan: Option<Plan>,
    #[serde(flatten)]
    record: RunRecord,
}

/// What a store (or a backup) holds, once every record in it decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// The runs in the store, each decoded (compaction archives the old ones, so there may be
    /// fewer than `last_run`).
    pub runs: usize,
    pub unfinished: usize,
    /// The last run id handed out (0: none).
    pub last_run: u64,
    /// The audit entries in the store, each decoded.
    pub audit_entries: usize,
    /// The last audit sequence number (0: none).
    pub last_audit: u64,
    pub log_lines: usize,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "runs: {} ({} unfinished", self.runs, self.unfinished)?;
        if self.last_run > 0 {
            write!(f, ", last r-{}", self.last_run)?;
        }
        write!(f, "), audit entries: {}", self.audit_entries)?;
        if self.last_audit > 0 {
            write!(f, " (last #{})", self.last_audit)?;
        }
        write!(f, ", run log lines: {}", self.log_lines)
    }
}

impl Sled {
    /// Writes the schema version into a new store; moves an older layout to this one; refuses
    /// one from a newer opsbot, and one that has records but no version (not a store this code
    /// wrote).
    pub(crate) fn check_schema(&self) -> Result<(), StoreError> {
        if let Some(bytes) = self.meta.get(SCHEMA)? {
            let found: u32 = self.decode(META, SCHEMA, &bytes)?;
            if found > SCHEMA_VERSION {
                return Err(StoreError::NewerVersion {
                    path: self.path().to_owned(),
                    tree: META,
                    key: keys::render(META, SCHEMA),
                    found,
                    supported: SCHEMA_VERSION,
                });
            }
            if found < 2 {
                self.separate_plans()?;
            }
            if found < 3 {
                self.build_index()?;
            }
            if found < SCHEMA_VERSION {
                self.meta.insert(
                    SCHEMA,
                    transition::encode("the schema version", &SCHEMA_VERSION)?,
                )?;
                self.flush()?;
            }
            return Ok(());
        }
        let trees = [
            &self.meta,
            &self.runs,
            &self.plans,
            &self.locks,
            &self.audit,
            &self.run_logs,
            &self.deliveries,
            &self.index,
        ];
        if trees.iter().any(|tree| !tree.is_empty()) {
            return Err(self.corrupt(META, SCHEMA, "missing, although the store holds records"));
        }
        self.meta.insert(
            SCHEMA,
            transition::encode("the schema version", &SCHEMA_VERSION)?,
        )?;
        self.flush()
    }

    /// Schema 1 kept each run's plan in its record: moves every plan to the `plans` tree, one
    /// run at a time. Done again after a crash, it finds the plans already moved.
    fn separate_plans(&self) -> Result<(), StoreError> {
        for entry in self.runs.iter() {
            let (key, bytes) = entry?;
            let old: Schema1Record = self.decode(RUNS, &key, &bytes)?;
            let Some(plan) = old.plan else {
                continue;
            };
            let plan = transition::encode("a run's plan", &plan)?;
            let record = transition::encode("a run record", &old.record)?;
            settle((&self.runs, &self.plans).transaction(|(runs, plans)| {
                plans.insert(&*key, plan.as_slice())?;
                runs.insert(&*key, record.as_slice())?;
                Ok(())
            }))?;
        }
        tracing::info!(path = %self.path().display(), "run plans kept apart from run states");
        Ok(())
    }

    /// Schema 2 had no `index` tree: files every run and audit entry in it, a batch at a time.
    /// Done again after a crash, it files the same keys again.
    fn build_index(&self) -> Result<(), StoreError> {
        const BATCH: usize = 1000;
        let mut batch = sled::Batch::default();
        let mut pending = 0;
        let flush_batch = |batch: &mut sled::Batch, pending: &mut usize| {
            *pending = 0;
            self.index.apply_batch(std::mem::take(batch))
        };
        for entry in self.runs.iter() {
            let (key, bytes) = entry?;
            batch.insert(
                keys::record_index_key(&self.decode_record(&key, &bytes)?),
                &[],
            );
            pending += 1;
            if pending == BATCH {
                flush_batch(&mut batch, &mut pending)?;
            }
        }
        for entry in self.audit.iter() {
            let (key, bytes) = entry?;
            let event: AuditEvent = self.decode(AUDIT, &key, &bytes)?;
            let seq = keys::key_number(&key)
                .ok_or_else(|| self.corrupt(AUDIT, &key, "its key is not a number"))?;
            for index in audit_index_keys(seq, event.at, event.run) {
                batch.insert(index, &[]);
                pending += 1;
            }
            if pending >= BATCH {
                flush_batch(&mut batch, &mut pending)?;
            }
        }
        flush_batch(&mut batch, &mut pending)?;
        tracing::info!(path = %self.path().display(), "runs and audit entries indexed by time");
        Ok(())
    }

    /// Decodes the counters, locks and unfinished runs once (each run whole: its record, its
    /// plan, and checked consistent in itself), and checks that the counters are ahead of what
    /// they number (a counter behind would make the next write collide with a record). Reads
    /// nothing that grows with the finished history. Returns how many runs were ever created
    /// and how many are unfinished.
    pub(crate) fn validate(&self) -> Result<(usize, usize), StoreError> {
        for key in [SCHEMA, NEXT_RUN, NEXT_AUDIT] {
            if let Some(bytes) = self.meta.get(key)? {
                self.decode::<u64>(META, key, &bytes)?;
            }
        }
        if let Some(bytes) = self.meta.get(MAINTENANCE)? {
            self.decode::<MaintenanceNotice>(META, MAINTENANCE, &bytes)?;
        }
        if let Some(bytes) = self.meta.get(PENDING_ARCHIVE)? {
            self.decode::<PendingArchive>(META, PENDING_ARCHIVE, &bytes)?;
        }
        for entry in self.locks.iter() {
            let (key, bytes) = entry?;
            self.decode::<RunId>(LOCKS, &key, &bytes)?;
        }
        // Whole, as the bot resumes them; their plans stay in the cache for their steps.
        let unfinished = self.unfinished_runs()?.len();
        let runs = usize::try_from(self.counter(NEXT_RUN)? - 1).unwrap_or(usize::MAX);
        self.check_counter(NEXT_RUN, &self.runs, RUNS)?;
        // A plan is written with its record, under the same id: one at or past the counter
        // (left by a repair by hand) would make the next `create_run` refuse its id.
        self.check_counter(NEXT_RUN, &self.plans, PLANS)?;
        self.check_counter(NEXT_AUDIT, &self.audit, AUDIT)?;
        Ok((runs, unfinished))
    }

    /// Checks that `counter` is past the last key of `tree` (whose records it numbers).
    pub(crate) fn check_counter(
        &self,
        counter: &[u8],
        tree: &Tree,
        name: &str,
    ) -> Result<(), StoreError> {
        let Some((last, _)) = tree.last()? else {
            return Ok(());
        };
        let next = self.counter(counter)?;
        match keys::key_number(&last) {
            Some(last) if last < next => Ok(()),
            _ => Err(self.corrupt(
                META,
                counter,
                &format!(
                    "it is {next}, not past the last {} {}",
                    keys::noun(name),
                    keys::render(name, &last)
                ),
            )),
        }
    }

    /// Decodes every record: the runs, each whole with its plan (finished ones too, which an
    /// open does not read), every audit entry and run log line; and checks the index both
    /// ways, each run and audit entry filed where it belongs and each index key pointing at a
    /// record, so that a listing of a checked store never meets a dangling key.
    pub(crate) fn summary(&self) -> Result<Summary, StoreError> {
        let (_, unfinished) = self.validate()?;
        let held = self.held()?;
        let mut runs = 0;
        for entry in self.runs.iter() {
            let (key, bytes) = entry?;
            let run = self.decode_run(&key, &bytes)?;
            self.check_filed(RUNS, &key, [keys::run_index_key(&run)])?;
            runs += 1;
        }
        let mut audit_entries = 0;
        for entry in self.audit.iter() {
            let (key, bytes) = entry?;
            let event: AuditEvent = self.decode(AUDIT, &key, &bytes)?;
            let seq = keys::key_number(&key)
                .ok_or_else(|| self.corrupt(AUDIT, &key, "its key is not a number"))?;
            self.check_filed(AUDIT, &key, audit_index_keys(seq, event.at, event.run))?;
            audit_entries += 1;
        }
        let mut log_lines = 0;
        for entry in self.run_logs.iter() {
            let (key, bytes) = entry?;
            self.decode::<String>(RUN_LOGS, &key, &bytes)?;
            log_lines += 1;
        }
        for key in self.index.iter().keys() {
            self.check_index_key(&key?)?;
        }
        Ok(Summary {
            runs,
            unfinished,
            last_run: held.last_run,
            audit_entries,
            last_audit: held.last_audit,
            log_lines,
        })
    }

    /// Checks that the record `key` of `tree` is in the index under each of `filed`.
    fn check_filed(
        &self,
        tree: &'static str,
        key: &[u8],
        filed: impl IntoIterator<Item = Vec<u8>>,
    ) -> Result<(), StoreError> {
        for index in filed {
            if !self.index.contains_key(&index)? {
                let detail = format!("the index lacks its {}", keys::render(INDEX, &index));
                return Err(self.corrupt(tree, key, &detail));
            }
        }
        Ok(())
    }

    /// Checks that the index key `key` points at a record.
    fn check_index_key(&self, key: &[u8]) -> Result<(), StoreError> {
        let (tree, name, noun) = match key.first() {
            Some(&(UNFINISHED | FINISHED)) => (&self.runs, RUNS, "run"),
            Some(&(AUDIT_BY_TIME | AUDIT_BY_RUN)) => (&self.audit, AUDIT, "audit entry"),
            _ => return Err(self.corrupt(INDEX, key, "it is not an index key")),
        };
        let record = keys::indexed_number(key)
            .map(keys::number_key)
            .ok_or_else(|| self.corrupt(INDEX, key, "it is too short"))?;
        if tree.contains_key(record)? {
            return Ok(());
        }
        let detail = format!("there is no {noun} {}", keys::render(name, &record));
        Err(self.corrupt(INDEX, key, &detail))
    }
}
