//! The audit log (append-only: there is no method that rewrites or deletes an entry) and the
//! run logs that keep node control's command output.

use opsbot_commands::audit::AuditEvent;
use opsbot_commands::name::RunId;
use sled::Transactional;

use crate::error::StoreError;
use crate::keys::{self, AUDIT, META, RUN_LOGS};
use crate::store::{Store, abort, settle};

/// The most bytes of lines one run's log holds: a few tracer outputs at their default bound.
/// Past it, a run's log would only grow the store, not help anyone read it.
pub const RUN_LOG_CAP: u64 = 16 << 20;

impl Store {
    /// Appends an event that is not part of a run transition (a refused approval, say), then
    /// flushes.
    pub fn append_audit(&self, event: &AuditEvent) -> Result<(), StoreError> {
        let bytes = self.encode("an audit event", event)?;
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
    /// flush: a command's output is kept whole or not at all, and costs one disk sync. A run's
    /// log holds at most [`RUN_LOG_CAP`] bytes of lines: the line that would pass it is
    /// replaced by a note saying so, and nothing is appended after it.
    pub fn append_run_log<S: AsRef<str>>(&self, run: RunId, lines: &[S]) -> Result<(), StoreError> {
        if lines.is_empty() {
            return Ok(());
        }
        let encoded = lines
            .iter()
            .map(|line| {
                let line = line.as_ref();
                let bytes = self.encode(&format!("a log line of run {run}"), &line)?;
                Ok((line.len() as u64, bytes))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let note = self.encode(
            &format!("the log cap note of run {run}"),
            &format!(
                "── the run log reached its cap of {} MiB: later output of {run} is not kept",
                RUN_LOG_CAP >> 20
            ),
        )?;
        let run_key = keys::run_key(run);
        let line_counter = keys::next_log_line_key(run);
        let size_key = keys::log_bytes_key(run);
        let trees = (&self.meta, &self.runs, &self.run_logs);
        settle(trees.transaction(|(meta, runs, run_logs)| {
            if runs.get(run_key)?.is_none() {
                return Err(abort(StoreError::NotFound { run }));
            }
            let mut size: u64 = match meta.get(&size_key)? {
                Some(bytes) => self.decode(META, &size_key, &bytes).map_err(abort)?,
                None => 0,
            };
            for (len, bytes) in &encoded {
                if size > RUN_LOG_CAP {
                    break;
                }
                let line = self.take_next(meta, &line_counter)?;
                size = size.saturating_add(*len);
                let kept = if size > RUN_LOG_CAP { &note } else { bytes };
                run_logs.insert(&keys::log_key(run, line), kept.as_slice())?;
            }
            meta.insert(
                size_key.as_slice(),
                self.encode("a counter", &size).map_err(abort)?,
            )?;
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
