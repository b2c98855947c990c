//! Retention: the finished runs (record, plan and log) and the audit entries older than the
//! retention are appended to the archive files (see `archive`) and removed from the store, a
//! bounded batch at a time, so that the store's size stays flat however long the bot runs.
//! Unfinished runs are never touched.
//!
//! A batch is crash-safe in three durable steps: (1) the archives' lengths are recorded in the
//! store (`pending_archive`); (2) the batch is appended to the archives and fsynced; (3) one
//! transaction removes the batch and the record of (1). A crash before (3) leaves the record:
//! the next compaction cuts the archives back to those lengths and does the batch again, so
//! nothing is lost (the store still holds it) and nothing is archived twice.

use opsbot_commands::audit::AuditEvent;
use opsbot_commands::name::RunId;
use opsbot_commands::run::Run;
use serde::{Deserialize, Serialize};
use sled::transaction::ConflictableTransactionError;
use sled::{IVec, Transactional};
use time::OffsetDateTime;

use crate::error::StoreError;
use crate::export;
use crate::sled::Sled;
use crate::sled::archive::{self, ArchivePaths};
use crate::sled::audit::audit_index_keys;
use crate::sled::keys::{self, AUDIT, AUDIT_BY_TIME, FINISHED, INDEX, META, PENDING_ARCHIVE};
use crate::transition;

/// What a compaction archived and removed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Compacted {
    pub runs: usize,
    pub audit: usize,
}

/// The archives' lengths before a batch was appended, kept until the batch is removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PendingArchive {
    runs: u64,
    audit: u64,
}

/// A run as archived: whole (with its plan), and its log.
#[derive(Serialize)]
struct ArchivedRun<'a> {
    run: &'a Run,
    log: &'a [String],
}

/// A finished run read for archiving, with what must be unchanged when it is removed.
struct OldRun {
    run: Run,
    record: IVec,
    log_keys: Vec<IVec>,
    log: Vec<String>,
    log_counter: Option<IVec>,
}

struct OldAudit {
    seq: u64,
    event: AuditEvent,
}

/// One bounded batch: read, then archived, then removed.
pub(crate) struct Batch {
    runs: Vec<OldRun>,
    audit: Vec<OldAudit>,
}

impl Sled {
    /// Where this store's archives are.
    pub fn archive_paths(&self) -> Result<ArchivePaths, StoreError> {
        Ok(self.archives())
    }

    pub(crate) fn archives(&self) -> ArchivePaths {
        ArchivePaths::clone(&self.archives)
    }

    /// Archives then removes the runs that finished before `cutoff` and the audit entries
    /// stamped before it, `batch` runs and `batch` entries at a time, until none are left.
    /// First finishes a batch a crash interrupted. Stops early, to try again next time, when
    /// a run of the batch changed while it was archived.
    pub fn compact(&self, cutoff: OffsetDateTime, batch: usize) -> Result<Compacted, StoreError> {
        self.recover_archive()?;
        let mut done = Compacted::default();
        loop {
            let old = self.gather(cutoff, batch.max(1))?;
            if old.runs.is_empty() && old.audit.is_empty() {
                return Ok(done);
            }
            // A backup sees the archives and the store both before the batch or both after.
            let _writing = self.writing()?;
            let pending = self.archive(&old)?;
            if !self.remove(&old)? {
                self.cut_back(pending)?;
                return Ok(done);
            }
            done.runs += old.runs.len();
            done.audit += old.audit.len();
        }
    }

    /// Cuts back what a batch interrupted by a crash appended to the archives.
    fn recover_archive(&self) -> Result<(), StoreError> {
        let _writing = self.writing()?;
        match self.meta.get(PENDING_ARCHIVE)? {
            Some(bytes) => self.cut_back(self.decode(META, PENDING_ARCHIVE, &bytes)?),
            None => Ok(()),
        }
    }

    fn cut_back(&self, pending: PendingArchive) -> Result<(), StoreError> {
        let paths = self.archives();
        archive::truncate(&paths.runs, pending.runs)?;
        archive::truncate(&paths.audit, pending.audit)?;
        self.meta.remove(PENDING_ARCHIVE)?;
        self.flush()
    }

    /// Reads the oldest finished runs and audit entries before `cutoff`, up to `batch` each.
    fn gather(&self, cutoff: OffsetDateTime, batch: usize) -> Result<Batch, StoreError> {
        let runs = self
            .index
            .range(vec![FINISHED]..keys::finished_from(cutoff))
            .keys()
            .take(batch)
            .map(|key| self.old_run(&key?))
            .collect::<Result<_, _>>()?;
        let audit = self
            .index
            .range(vec![AUDIT_BY_TIME]..keys::audit_time_from(Some(cutoff)))
            .keys()
            .take(batch)
            .map(|key| self.old_audit(&key?))
            .collect::<Result<_, _>>()?;
        Ok(Batch { runs, audit })
    }

    fn old_run(&self, index_key: &[u8]) -> Result<OldRun, StoreError> {
        let id = RunId::new(
            keys::indexed_number(index_key)
                .ok_or_else(|| self.corrupt(INDEX, index_key, "it is too short"))?,
        );
        let key = keys::run_key(id);
        let Some(record) = self.runs.get(key)? else {
            return Err(self.corrupt(INDEX, index_key, &format!("there is no run {id}")));
        };
        let run = self.decode_run(&key, &record)?;
        let (mut log_keys, mut log) = (Vec::new(), Vec::new());
        for entry in self.run_logs.scan_prefix(key) {
            let (line_key, bytes) = entry?;
            log.push(self.decode(keys::RUN_LOGS, &line_key, &bytes)?);
            log_keys.push(line_key);
        }
        Ok(OldRun {
            log_counter: self.meta.get(keys::next_log_line_key(id))?,
            run,
            record,
            log_keys,
            log,
        })
    }

    fn old_audit(&self, index_key: &[u8]) -> Result<OldAudit, StoreError> {
        let seq = keys::indexed_number(index_key)
            .ok_or_else(|| self.corrupt(INDEX, index_key, "it is too short"))?;
        let key = keys::number_key(seq);
        let Some(bytes) = self.audit.get(key)? else {
            let detail = format!("there is no audit entry #{seq}");
            return Err(self.corrupt(INDEX, index_key, &detail));
        };
        Ok(OldAudit {
            seq,
            event: self.decode(AUDIT, &key, &bytes)?,
        })
    }

    /// Steps (1) and (2): records the archives' lengths, then appends the batch to them.
    fn archive(&self, batch: &Batch) -> Result<PendingArchive, StoreError> {
        let paths = self.archives();
        let pending = PendingArchive {
            runs: archive::length(&paths.runs)?,
            audit: archive::length(&paths.audit)?,
        };
        self.meta.insert(
            PENDING_ARCHIVE,
            transition::encode("the archive lengths", &pending)?,
        )?;
        self.flush()?;
        let runs: Vec<ArchivedRun<'_>> = batch
            .runs
            .iter()
            .map(|old| ArchivedRun {
                run: &old.run,
                log: &old.log,
            })
            .collect();
        archive::append(&paths.runs, &runs)?;
        // In the format `opsbot audit export` writes, so that one tool reads both.
        let events = batch
            .audit
            .iter()
            .map(|old| export::audit_event(&old.event))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| StoreError::Unencodable {
                what: "an audit entry".to_owned(),
                detail: error.to_string(),
            })?;
        archive::append(&paths.audit, &events)?;
        Ok(pending)
    }

    /// Step (3): removes the batch and the pending record in one transaction, unless a run
    /// of it changed since it was read (then nothing is removed and it returns false). The
    /// caller holds [`Sled::writing`] across (2) and (3).
    fn remove(&self, batch: &Batch) -> Result<bool, StoreError> {
        let trees = (
            &self.meta,
            &self.runs,
            &self.plans,
            &self.run_logs,
            &self.audit,
            &self.index,
        );
        let outcome = trees.transaction(|(meta, runs, plans, run_logs, audit, index)| {
            for old in &batch.runs {
                let id = old.run.id;
                let key = keys::run_key(id);
                let counter = keys::next_log_line_key(id);
                if runs.get(key)? != Some(old.record.clone())
                    || meta.get(&counter)? != old.log_counter
                {
                    return Err(ConflictableTransactionError::Abort(()));
                }
                runs.remove(&key)?;
                plans.remove(&key)?;
                meta.remove(counter)?;
                meta.remove(keys::log_bytes_key(id))?;
                index.remove(keys::run_index_key(&old.run))?;
                for line in &old.log_keys {
                    run_logs.remove(line)?;
                }
            }
            for old in &batch.audit {
                audit.remove(&keys::number_key(old.seq))?;
                for key in audit_index_keys(old.seq, old.event.at, old.event.run) {
                    index.remove(key)?;
                }
            }
            meta.remove(PENDING_ARCHIVE)?;
            Ok(())
        });
        match outcome {
            Ok(()) => {
                self.flush()?;
                Ok(true)
            }
            Err(sled::transaction::TransactionError::Abort(())) => Ok(false),
            Err(sled::transaction::TransactionError::Storage(error)) => Err(error.into()),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
