//! The audit log (append-only: there is no method that rewrites or deletes an entry) and the
//! run logs that keep node control's command output.

use opsbot_commands::audit::AuditEvent;
use opsbot_commands::name::RunId;
use sled::Transactional;

use crate::error::StoreError;
use crate::keys::{self, AUDIT, RUN_LOGS};
use crate::store::{Store, abort, settle};

impl Store {
    /// Appends an event that is not part of a run transition (a refused approval, say), then
    /// flushes.
    pub fn append_audit(&self, event: &AuditEvent) -> Result<(), StoreError> {
        let bytes = self.encode("an audit event", event)?;
        let _writing = self.writing();
        settle(
            (&self.meta, &self.audit)
                .transaction(|(meta, audit)| self.put_audit(meta, audit, &bytes)),
        )?;
        self.flush()
    }

    /// The whole audit log, oldest first.
    pub fn audit(&self) -> Result<Vec<AuditEvent>, StoreError> {
        self.audit
            .iter()
            .map(|entry| {
                let (key, bytes) = entry?;
                self.decode(AUDIT, &key, &bytes)
            })
            .collect()
    }

    /// Appends the output lines of one command to a run's log, in one transaction and one
    /// flush: a command's output is kept whole or not at all, and costs one disk sync.
    pub fn append_run_log<S: AsRef<str>>(&self, run: RunId, lines: &[S]) -> Result<(), StoreError> {
        if lines.is_empty() {
            return Ok(());
        }
        let encoded = lines
            .iter()
            .map(|line| self.encode(&format!("a log line of run {run}"), &line.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        let run_key = keys::run_key(run);
        let _writing = self.writing();
        let line_counter = keys::next_log_line_key(run);
        let trees = (&self.meta, &self.runs, &self.run_logs);
        settle(trees.transaction(|(meta, runs, run_logs)| {
            if runs.get(run_key)?.is_none() {
                return Err(abort(StoreError::NotFound { run }));
            }
            for bytes in &encoded {
                let line = self.take_next(meta, &line_counter)?;
                run_logs.insert(&keys::log_key(run, line), bytes.as_slice())?;
            }
            Ok(())
        }))?;
        self.flush()
    }

    /// A run's log lines, in the order they were appended.
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
