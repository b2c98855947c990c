//! What chat and the console list, on PostgreSQL: each listing one indexed query that reads
//! only the page it returns (see the indexes in `migrations/0001_initial.sql`), ordered as
//! sled's listings are.

use opsbot_commands::audit::AuditEvent;
use opsbot_commands::name::RunId;
use opsbot_commands::page::Page;
use opsbot_commands::run::Run;
use time::OffsetDateTime;
use tokio_postgres::Row;

use super::pool::params;
use super::{Postgres, number, sql_number};
use crate::error::StoreError;
use crate::listing::{AuditQuery, Listing};

/// Audit entries an export reads at a time.
const EXPORT_BATCH: i64 = 500;

impl Postgres {
    pub(crate) fn unfinished_runs(&self) -> Result<Vec<Run>, StoreError> {
        let rows = self.read(|conn| {
            conn.query(
                "SELECT id, record::text, plan::text FROM runs WHERE finished_at IS NULL \
                 ORDER BY id",
                params![],
            )
        })?;
        self.decode_runs(&rows)
    }

    pub(crate) fn recent_runs(
        &self,
        since: OffsetDateTime,
        page: Page,
        per_page: usize,
    ) -> Result<Listing<Run>, StoreError> {
        let skip = page.skip(per_page);
        let rows = self.read(|conn| {
            conn.query(
                "SELECT id, record::text, plan::text FROM runs \
                 WHERE finished_at IS NULL OR finished_at >= $1 \
                 ORDER BY id DESC OFFSET $2 LIMIT $3",
                params![since, count(skip), count(per_page).saturating_add(1)],
            )
        })?;
        // The row past the page says only that there is more: it is not decoded.
        let more = rows.len() > per_page;
        let items = self.decode_runs(&rows[..rows.len().min(per_page)])?;
        Ok(Listing { items, more })
    }

    pub(crate) fn suggested_run_ids(&self, limit: usize) -> Result<Vec<RunId>, StoreError> {
        self.read(|conn| {
            let rows = conn.query(
                "SELECT id FROM runs ORDER BY finished_at IS NULL DESC, id DESC LIMIT $1",
                params![count(limit)],
            )?;
            Ok(rows
                .iter()
                .map(|row| RunId::new(number(row.get(0))))
                .collect())
        })
    }

    pub(crate) fn runs(&self) -> Result<Vec<Run>, StoreError> {
        let rows = self.read(|conn| {
            conn.query(
                "SELECT id, record::text, plan::text FROM runs ORDER BY id DESC",
                params![],
            )
        })?;
        self.decode_runs(&rows)
    }

    pub(crate) fn audit(&self) -> Result<Vec<AuditEvent>, StoreError> {
        let rows = self.read(|conn| {
            conn.query("SELECT seq, event::text FROM audit ORDER BY seq", params![])
        })?;
        self.decode_audit(&rows)
    }

    pub(crate) fn audit_page(
        &self,
        query: AuditQuery,
        page: Page,
        per_page: usize,
    ) -> Result<Listing<AuditEvent>, StoreError> {
        let skip = page.skip(per_page);
        let rows = self.read(|conn| {
            conn.query(
                "SELECT seq, event::text FROM audit \
                 WHERE ($1::timestamptz IS NULL OR at >= $1) AND ($2::bigint IS NULL OR run = $2) \
                 ORDER BY at DESC, seq DESC OFFSET $3 LIMIT $4",
                params![
                    query.since,
                    query.run.map(|run| sql_number(run.get())),
                    count(skip),
                    count(per_page).saturating_add(1)
                ],
            )
        })?;
        let more = rows.len() > per_page;
        let items = self.decode_audit(&rows[..rows.len().min(per_page)])?;
        Ok(Listing { items, more })
    }

    /// Oldest first, [`EXPORT_BATCH`] entries at a time, each batch after the last one read
    /// (by time then sequence), so that entries appended meanwhile are met in order.
    pub(crate) fn audit_events(
        &self,
        query: AuditQuery,
    ) -> impl Iterator<Item = Result<AuditEvent, StoreError>> + '_ {
        let mut after: Option<(OffsetDateTime, i64)> = None;
        let mut batch = std::vec::IntoIter::default();
        let mut done = false;
        std::iter::from_fn(move || {
            loop {
                if let Some(event) = batch.next() {
                    return Some(Ok(event));
                }
                if done {
                    return None;
                }
                let rows = self.read(|conn| {
                    conn.query(
                        "SELECT seq, event::text, at FROM audit \
                         WHERE ($1::timestamptz IS NULL OR at >= $1) \
                           AND ($2::bigint IS NULL OR run = $2) \
                           AND ($3::timestamptz IS NULL OR (at, seq) > ($3, $4)) \
                         ORDER BY at, seq LIMIT $5",
                        params![
                            query.since,
                            query.run.map(|run| sql_number(run.get())),
                            after.map(|(at, _)| at),
                            after.map_or(0, |(_, seq)| seq),
                            EXPORT_BATCH
                        ],
                    )
                });
                let rows = match rows {
                    Ok(rows) => rows,
                    Err(error) => {
                        done = true;
                        return Some(Err(error));
                    }
                };
                done = (rows.len() as i64) < EXPORT_BATCH;
                after = rows.last().map(|row| (row.get(2), row.get(0)));
                match self.decode_audit(&rows) {
                    Ok(events) => batch = events.into_iter(),
                    Err(error) => {
                        done = true;
                        return Some(Err(error));
                    }
                }
            }
        })
    }

    fn decode_runs(&self, rows: &[Row]) -> Result<Vec<Run>, StoreError> {
        rows.iter().map(|row| self.decode_run(row, 0)).collect()
    }

    /// Audit entries from rows of `seq, event::text`.
    fn decode_audit(&self, rows: &[Row]) -> Result<Vec<AuditEvent>, StoreError> {
        rows.iter()
            .map(|row| {
                let seq: i64 = row.get(0);
                self.decode("audit", &format!("#{seq}"), row.get(1))
            })
            .collect()
    }
}

/// A count for `OFFSET`/`LIMIT`.
fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
