//! The audit log and run logs on PostgreSQL (see sled's `audit` for what they keep).

use opsbot_commands::audit::AuditEvent;
use opsbot_commands::name::RunId;

use super::pool::{Conn, Fail, params};
use super::{Postgres, number, sql_number};
use crate::error::StoreError;
use crate::transition;

/// A log line as a `text` column holds it: PostgreSQL's text cannot hold NUL, which command
/// output may (a binary file sent to a terminal); it is kept as the symbol for it, `␀`.
fn storable(line: &str) -> String {
    line.replace('\0', "\u{2400}")
}

impl Postgres {
    pub(crate) fn append_audit(&self, event: &AuditEvent) -> Result<(), StoreError> {
        let event = Self::encode_audit("an audit event", event)?;
        self.write(|conn| self.put_audit(conn, &event))
    }

    pub(crate) fn append_run_log<S: AsRef<str>>(
        &self,
        run: RunId,
        lines: &[S],
    ) -> Result<(), StoreError> {
        if lines.is_empty() {
            return Ok(());
        }
        let lines: Vec<(u64, String)> = lines
            .iter()
            .map(|line| (line.as_ref().len() as u64, storable(line.as_ref())))
            .collect();
        let note = transition::cap_note(run);
        let id = sql_number(run.get());
        self.write(|conn| {
            Self::check_exists(conn, run)?;
            let (count, size) = conn
                .query_opt(
                    "SELECT lines, bytes FROM run_log_sizes WHERE run = $1 FOR UPDATE",
                    params![id],
                )?
                .map_or((0, 0), |row| (number(row.get(0)), number(row.get(1))));
            let (kept, size) = transition::capped(size, &lines, &note);
            let kept: Vec<String> = kept.into_iter().cloned().collect();
            let total = count + kept.len() as u64;
            conn.execute(
                "INSERT INTO run_logs (run, line, text) \
                 SELECT $1, $2 + n, t FROM unnest($3::text[]) WITH ORDINALITY AS u(t, n)",
                params![id, sql_number(count), kept],
            )?;
            conn.execute(
                "INSERT INTO run_log_sizes (run, lines, bytes) VALUES ($1, $2, $3) \
                 ON CONFLICT (run) DO UPDATE SET lines = excluded.lines, bytes = excluded.bytes",
                params![id, sql_number(total), sql_number(size)],
            )?;
            Ok(())
        })
    }

    pub(crate) fn run_log(&self, run: RunId) -> Result<Vec<String>, StoreError> {
        self.read(|conn| {
            Self::check_exists(conn, run)?;
            let rows = conn.query(
                "SELECT text FROM run_logs WHERE run = $1 ORDER BY line",
                params![sql_number(run.get())],
            )?;
            Ok(rows.iter().map(|row| row.get(0)).collect())
        })
    }

    /// [`StoreError::NotFound`] unless run `run` is in the store.
    pub(super) fn check_exists(conn: &mut Conn<'_>, run: RunId) -> Result<(), Fail> {
        let found = conn.query_opt(
            "SELECT 1 FROM runs WHERE id = $1",
            params![sql_number(run.get())],
        )?;
        match found {
            Some(_) => Ok(()),
            None => Err(StoreError::NotFound { run }.into()),
        }
    }
}
