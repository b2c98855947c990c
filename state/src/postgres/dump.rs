//! The PostgreSQL side of a copy (see `dump` and `copy`): the export reads runs and the audit
//! log a page at a time by key (however long the history, no page is read twice or skipped,
//! and only one is in memory), the other tables (bounded by the configuration, or by a day
//! of deliveries) whole; each row is decoded as a read decodes it. The import writes a batch
//! of entries as one serializable transaction, into the tables of the schema its migrations
//! made.

use std::collections::VecDeque;

use opsbot_commands::name::RunId;
use time::OffsetDateTime;
use tokio_postgres::Row;

use super::pool::{Conn, Fail, params};
use super::{Postgres, number, sql_number, text};
use crate::dump::{Counters, Entry, micros, storable_line};
use crate::error::StoreError;
use crate::record::RunRecord;
use crate::transition::encode;

type Result<T> = std::result::Result<T, StoreError>;

/// Rows read per page of runs or audit entries.
const PAGE: i64 = 500;

impl Postgres {
    pub(crate) fn export(&self) -> impl Iterator<Item = Result<Entry>> + '_ {
        let head = std::iter::once_with(|| {
            let mut entries = vec![Entry::Counters(self.counters()?)];
            entries.extend(self.maintenance_notice()?.map(Entry::Notice));
            Ok(entries)
        });
        let runs = Paged::new(
            self,
            "SELECT r.id, r.record::text, r.plan::text, r.created_at, r.finished_at, s.lines, \
                 s.bytes \
             FROM runs r LEFT JOIN run_log_sizes s ON s.run = r.id \
             WHERE r.id > $1 ORDER BY r.id LIMIT $2",
            Self::export_run,
        );
        let locks = std::iter::once_with(|| {
            let sql = "SELECT key, run FROM locks ORDER BY key COLLATE \"C\"";
            let rows = self.read(|conn| conn.query(sql, params![]))?;
            Ok(rows
                .iter()
                .map(|row| Entry::Lock {
                    key: row.get(0),
                    run: RunId::new(number(row.get(1))),
                })
                .collect())
        });
        let audit = Paged::new(
            self,
            "SELECT seq, at, run, event::text FROM audit WHERE seq > $1 ORDER BY seq LIMIT $2",
            |store, row| Ok(vec![store.export_audit(row)?]),
        );
        let rest = std::iter::once_with(|| {
            let sql = "SELECT id, floor(extract(epoch FROM at))::bigint FROM deliveries \
                       ORDER BY id COLLATE \"C\"";
            let rows = self.read(|conn| conn.query(sql, params![]))?;
            let mut entries: Vec<Entry> = rows
                .iter()
                .map(|row| Entry::Delivery {
                    id: row.get(0),
                    at: number(row.get(1)),
                })
                .collect();
            let sql = "SELECT schedule, record::text FROM fires ORDER BY schedule COLLATE \"C\"";
            for row in self.read(|conn| conn.query(sql, params![]))? {
                let schedule: String = row.get(0);
                let record = self.decode("fires", &schedule, row.get(1))?;
                entries.push(Entry::Fire { schedule, record });
            }
            let sql = "SELECT schedule, pause::text FROM pauses ORDER BY schedule COLLATE \"C\"";
            for row in self.read(|conn| conn.query(sql, params![]))? {
                let schedule: String = row.get(0);
                let pause = self.decode("pauses", &schedule, row.get(1))?;
                entries.push(Entry::Pause { schedule, pause });
            }
            entries.extend(self.standing_approvals()?.into_iter().map(Entry::Standing));
            Ok(entries)
        });
        let whole = |entries: Result<Vec<Entry>>| match entries {
            Ok(entries) => entries.into_iter().map(Ok).collect(),
            Err(error) => vec![Err(error)],
        };
        head.flat_map(whole)
            .chain(runs)
            .chain(locks.flat_map(whole))
            .chain(audit)
            .chain(rest.flat_map(whole))
    }

    fn counters(&self) -> Result<Counters> {
        let rows = self.read(|conn| conn.query("SELECT name, next FROM counters", params![]))?;
        let next = |name: &str| {
            rows.iter()
                .find(|row| row.get::<_, &str>(0) == name)
                .map_or(1, |row| number(row.get(1)))
        };
        Ok(Counters {
            next_run: next("run"),
            next_audit: next("audit"),
            next_standing: next("standing"),
        })
    }

    /// A run (decoded and checked as [`Postgres::run`] does) filed as its columns file it,
    /// and its log if it has one.
    fn export_run(&self, row: &Row) -> Result<Vec<Entry>> {
        let run = self.decode_run(row, 0)?;
        let id = run.id;
        let mut entries = vec![Entry::Run {
            run: Box::new(run),
            created_at: row.get(3),
            finished_at: row.get(4),
        }];
        if let Some(count) = row.get::<_, Option<i64>>(5) {
            let lines: Vec<String> = self.read(|conn| {
                let sql = "SELECT text FROM run_logs WHERE run = $1 ORDER BY line";
                let rows = conn.query(sql, params![sql_number(id.get())])?;
                Ok(rows.iter().map(|row| row.get(0)).collect())
            })?;
            if lines.len() as u64 != number(count) {
                let detail = format!("it counts {count} lines; the log has {}", lines.len());
                return Err(self.corrupt("run_log_sizes", &id.to_string(), &detail));
            }
            entries.push(Entry::RunLog {
                run: id,
                lines,
                bytes: number(row.get(6)),
            });
        }
        Ok(entries)
    }

    /// An audit entry, whose `at` and `run` columns (what listings filter on) must say what
    /// its event says.
    fn export_audit(&self, row: &Row) -> Result<Entry> {
        let seq = number(row.get(0));
        let key = format!("#{seq}");
        let event: opsbot_commands::audit::AuditEvent = self.decode("audit", &key, row.get(3))?;
        let (at, run): (OffsetDateTime, Option<i64>) = (row.get(1), row.get(2));
        if at != micros(event.at) || run != event.run.map(|run| sql_number(run.get())) {
            let detail = "its at and run columns contradict its event";
            return Err(self.corrupt("audit", &key, detail));
        }
        Ok(Entry::Audit { seq, event })
    }

    /// Writes `batch` in one serializable transaction.
    pub(crate) fn import_batch(&self, batch: &[Entry]) -> Result<()> {
        self.write(|conn| batch.iter().try_for_each(|entry| insert(conn, entry)))
    }
}

/// Writes one entry's rows, as the store's own writes make them.
fn insert(conn: &mut Conn<'_>, entry: &Entry) -> std::result::Result<(), Fail> {
    match entry {
        Entry::Counters(counters) => {
            for (name, next) in [
                ("run", counters.next_run),
                ("audit", counters.next_audit),
                ("standing", counters.next_standing),
            ] {
                conn.execute(
                    "UPDATE counters SET next = $2 WHERE name = $1",
                    params![name, sql_number(next)],
                )?;
            }
        }
        Entry::Notice(notice) => {
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('maintenance_notice', $1::text::jsonb)",
                params![envelope("the maintenance notice", notice)?],
            )?;
        }
        Entry::Run {
            run,
            created_at,
            finished_at,
        } => {
            let what = format!("run {}", run.id);
            conn.execute(
                "INSERT INTO runs (id, rev, record, plan, created_at, finished_at) \
                 VALUES ($1, 1, $2::text::jsonb, $3::text::jsonb, $4, $5)",
                params![
                    sql_number(run.id.get()),
                    envelope(&what, &RunRecord::of(run))?,
                    envelope(&what, run.plan())?,
                    *created_at,
                    *finished_at
                ],
            )?;
        }
        Entry::RunLog { run, lines, bytes } => {
            let id = sql_number(run.get());
            let kept: Vec<String> = lines
                .iter()
                .map(|l| storable_line(l).into_owned())
                .collect();
            conn.execute(
                "INSERT INTO run_logs (run, line, text) \
                 SELECT $1, n, t FROM unnest($2::text[]) WITH ORDINALITY AS u(t, n)",
                params![id, kept],
            )?;
            conn.execute(
                "INSERT INTO run_log_sizes (run, lines, bytes) VALUES ($1, $2, $3)",
                params![id, sql_number(lines.len() as u64), sql_number(*bytes)],
            )?;
        }
        Entry::Lock { key, run } => {
            conn.execute(
                "INSERT INTO locks (key, run) VALUES ($1, $2)",
                params![key.clone(), sql_number(run.get())],
            )?;
        }
        Entry::Audit { seq, event } => {
            conn.execute(
                "INSERT INTO audit (seq, at, run, event) VALUES ($1, $2, $3, $4::text::jsonb)",
                params![
                    sql_number(*seq),
                    event.at,
                    event.run.map(|run| sql_number(run.get())),
                    envelope(&format!("audit entry #{seq}"), event)?
                ],
            )?;
        }
        Entry::Delivery { id, at } => {
            let at = OffsetDateTime::from_unix_timestamp(sql_number(*at)).map_err(|error| {
                StoreError::Unencodable {
                    what: format!("the time of delivery {id}"),
                    detail: error.to_string(),
                }
            })?;
            conn.execute(
                "INSERT INTO deliveries (id, at) VALUES ($1, $2)",
                params![id.clone(), at],
            )?;
        }
        Entry::Fire { schedule, record } => {
            conn.execute(
                "INSERT INTO fires (schedule, record) VALUES ($1, $2::text::jsonb)",
                params![schedule.clone(), envelope("a schedule's fire", record)?],
            )?;
        }
        Entry::Pause { schedule, pause } => {
            conn.execute(
                "INSERT INTO pauses (schedule, pause) VALUES ($1, $2::text::jsonb)",
                params![schedule.clone(), envelope("a schedule's pause", pause)?],
            )?;
        }
        Entry::Standing(standing) => {
            conn.execute(
                "INSERT INTO standing (id, rev, record) VALUES ($1, 1, $2::text::jsonb)",
                params![
                    sql_number(standing.id.get()),
                    envelope("a standing approval", standing)?
                ],
            )?;
        }
    }
    Ok(())
}

/// A value as its envelope, for a `jsonb` column (written as `$n::text::jsonb`).
fn envelope<T: serde::Serialize>(what: &str, value: &T) -> Result<String> {
    Ok(text(encode(what, value)?))
}

/// Rows of a table read a page at a time after the last key read (keyset paging): `sql`
/// takes the last key (`$1`, the first column, a `bigint`) and the page size (`$2`).
struct Paged<'a, F> {
    store: &'a Postgres,
    sql: &'static str,
    after: i64,
    ready: VecDeque<Result<Entry>>,
    done: bool,
    entries: F,
}

impl<'a, F: FnMut(&Postgres, &Row) -> Result<Vec<Entry>>> Paged<'a, F> {
    fn new(store: &'a Postgres, sql: &'static str, entries: F) -> Self {
        Self {
            store,
            sql,
            after: 0,
            ready: VecDeque::new(),
            done: false,
            entries,
        }
    }
}

impl<F: FnMut(&Postgres, &Row) -> Result<Vec<Entry>>> Iterator for Paged<'_, F> {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Result<Entry>> {
        while self.ready.is_empty() && !self.done {
            let (sql, after) = (self.sql, self.after);
            let rows = self
                .store
                .read(|conn| conn.query(sql, params![after, PAGE]));
            let rows = match rows {
                Ok(rows) => rows,
                Err(error) => {
                    self.done = true;
                    return Some(Err(error));
                }
            };
            self.done = (rows.len() as i64) < PAGE;
            for row in &rows {
                self.after = row.get(0);
                match (self.entries)(self.store, row) {
                    Ok(entries) => self.ready.extend(entries.into_iter().map(Ok)),
                    Err(error) => {
                        self.ready.push_back(Err(error));
                        self.done = true;
                        break;
                    }
                }
            }
        }
        self.ready.pop_front()
    }
}
