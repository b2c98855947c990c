//! The audit log (append-only: no method rewrites an entry; only compaction removes the
//! entries past the retention, after archiving them) and the run logs that keep node
//! control's command output.

use opsbot_commands::audit::AuditEvent;
use opsbot_commands::name::RunId;
use sled::Transactional;
use sled::transaction::{ConflictableTransactionResult, TransactionalTree};
use time::OffsetDateTime;

use crate::error::StoreError;
use crate::sled::keys::{self, META, NEXT_AUDIT, RUN_LOGS};
use crate::sled::{Sled, abort, settle};
use crate::transition;

/// An audit event encoded for the `audit` tree, with what its index keys are made of.
pub(crate) struct Entry {
    at: OffsetDateTime,
    run: Option<RunId>,
    bytes: Vec<u8>,
}

/// The transactional trees an audit append writes.
pub(crate) struct AuditTrees<'a> {
    pub(crate) meta: &'a TransactionalTree,
    pub(crate) audit: &'a TransactionalTree,
    pub(crate) index: &'a TransactionalTree,
}

/// The index keys of audit entry `seq`: in time order, and in its run's entries if it has one.
pub(crate) fn audit_index_keys(
    seq: u64,
    at: OffsetDateTime,
    run: Option<RunId>,
) -> impl Iterator<Item = Vec<u8>> {
    std::iter::once(keys::audit_time_key(at, seq))
        .chain(run.map(|run| keys::audit_run_key(run, at, seq)))
}

impl Sled {
    pub(crate) fn encode_audit(&self, what: &str, event: &AuditEvent) -> Result<Entry, StoreError> {
        Ok(Entry {
            at: event.at,
            run: event.run,
            bytes: transition::encode(what, event)?,
        })
    }

    /// Appends one encoded audit event under the next sequence number, and indexes it. An
    /// entry already there means the counter was set back by hand: refuse rather than
    /// overwrite the audit log.
    pub(crate) fn put_audit<E: From<StoreError>>(
        &self,
        trees: &AuditTrees<'_>,
        entry: &Entry,
    ) -> ConflictableTransactionResult<(), E> {
        let seq = self.take_next(trees.meta, NEXT_AUDIT)?;
        let key = keys::number_key(seq);
        if trees.audit.get(key)?.is_some() {
            let detail = format!("it points at the existing audit entry #{seq}");
            return Err(abort(self.corrupt(META, NEXT_AUDIT, &detail)));
        }
        trees.audit.insert(&key, entry.bytes.as_slice())?;
        for index in audit_index_keys(seq, entry.at, entry.run) {
            trees.index.insert(index, &[])?;
        }
        Ok(())
    }

    /// Appends an event that is not part of a run transition (a refused approval, say), then
    /// flushes.
    pub fn append_audit(&self, event: &AuditEvent) -> Result<(), StoreError> {
        let entry = self.encode_audit("an audit event", event)?;
        let _writing = self.writing()?;
        settle(
            (&self.meta, &self.audit, &self.index).transaction(|(meta, audit, index)| {
                let trees = AuditTrees { meta, audit, index };
                self.put_audit(&trees, &entry)
            }),
        )?;
        self.flush()
    }

    /// Appends the output lines of one command to a run's log, in one transaction and one
    /// flush: a command's output is kept whole or not at all, and costs one disk sync. A run's
    /// log holds at most [`crate::RUN_LOG_CAP`] bytes of lines: the line that would pass it is
    /// replaced by a note saying so, and nothing is appended after it.
    pub fn append_run_log<S: AsRef<str>>(&self, run: RunId, lines: &[S]) -> Result<(), StoreError> {
        if lines.is_empty() {
            return Ok(());
        }
        let encoded = lines
            .iter()
            .map(|line| {
                let line = line.as_ref();
                let bytes = transition::encode(&format!("a log line of run {run}"), &line)?;
                Ok((line.len() as u64, bytes))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let note = transition::encode(
            &format!("the log cap note of run {run}"),
            &transition::cap_note(run),
        )?;
        let run_key = keys::run_key(run);
        let _writing = self.writing()?;
        let line_counter = keys::next_log_line_key(run);
        let size_key = keys::log_bytes_key(run);
        let trees = (&self.meta, &self.runs, &self.run_logs);
        settle(trees.transaction(|(meta, runs, run_logs)| {
            if runs.get(run_key)?.is_none() {
                return Err(abort(StoreError::NotFound { run }));
            }
            let size: u64 = match meta.get(&size_key)? {
                Some(bytes) => self.decode(META, &size_key, &bytes).map_err(abort)?,
                None => 0,
            };
            let (kept, size) = transition::capped(size, &encoded, &note);
            for bytes in kept {
                let line = self.take_next(meta, &line_counter)?;
                run_logs.insert(&keys::log_key(run, line), bytes.as_slice())?;
            }
            meta.insert(
                size_key.as_slice(),
                transition::encode("a counter", &size).map_err(abort)?,
            )?;
            Ok(())
        }))?;
        self.flush()
    }

    /// A run's log lines, in the order they were appended: all of them, for `/run log`, its
    /// export and the archive.
    pub fn run_log(&self, run: RunId) -> Result<Vec<String>, StoreError> {
        if !self.runs.contains_key(keys::run_key(run))? {
            return Err(StoreError::NotFound { run });
        }
        self.run_logs
            .scan_prefix(keys::run_key(run))
            .map(|entry| {
                let (key, bytes) = entry?;
                self.decode(RUN_LOGS, &key, &bytes)
            })
            .collect()
    }
}
