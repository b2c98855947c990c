//! Runs on PostgreSQL: created under their cluster's lock, changed by compare-and-swap on
//! their `rev`, each write with its audit events in one transaction (see sled's `runs` for the
//! same rules; what is written is decided by `transition`, shared with it).

use std::sync::{Arc, PoisonError};

use opsbot_commands::audit::AuditKind;
use opsbot_commands::name::RunId;
use opsbot_commands::people::Speaker;
use opsbot_commands::run::Run;
use opsbot_commands::schedule::ScheduleName;
use opsbot_commands::target::Target;
use time::OffsetDateTime;

use super::pool::{Conn, Fail, params};
use super::{Audited, Postgres, number, sql_number, text};
use crate::error::{StoreError, UpdateError};
use crate::transition::{self, Transition};

impl Postgres {
    /// Creates a run (see `Store::create_run`), and with `fire` records a schedule's fire in
    /// the same transaction (see `Store::create_fired_run`).
    pub(crate) fn create(
        &self,
        build: impl FnOnce(RunId) -> Run,
        actor: Option<&Speaker>,
        fire: Option<(&ScheduleName, OffsetDateTime)>,
    ) -> Result<Run, StoreError> {
        let _one_at_a_time = self
            .inner
            .creating
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let id = RunId::new(self.counter("run")?);
        let creation = transition::creation(self.now.get(), id, build, actor, fire)?;
        let what = format!("run {id}");
        let requested =
            Self::encode_audit(&format!("the audit event of {what}"), &creation.requested)?;
        let fired = creation
            .fire
            .as_ref()
            .map(|fire| {
                let event = Self::encode_audit(&format!("the fire of {what}"), &fire.event)?;
                Ok::<_, StoreError>((fire, text(fire.record.clone()), event))
            })
            .transpose()?;
        let (record, plan) = (text(creation.record), text(creation.plan));
        let run = creation.run;
        self.write(|conn| {
            let allocated = self.take_next(conn, "run")?;
            if allocated != id.get() {
                return Err(self.contended(format!("it created run {id} first")).into());
            }
            self.sync_lock(conn, &run)?;
            conn.execute(
                "INSERT INTO runs (id, rev, record, plan, created_at, finished_at) \
                 VALUES ($1, 1, $2::text::jsonb, $3::text::jsonb, $4, $5)",
                params![
                    sql_number(id.get()),
                    record.clone(),
                    plan.clone(),
                    run.created_at,
                    run.finished_at()
                ],
            )?;
            if let Some((fire, record, event)) = &fired {
                self.take_fire(conn, &fire.schedule, record, fire.at)?;
                self.put_audit(conn, event)?;
            }
            self.put_audit(conn, &requested)
        })?;
        if !run.state.is_finished() {
            self.inner
                .plan_cache
                .put(id, &run.digest, Arc::clone(run.shared_plan()));
        }
        Ok(run)
    }

    pub(crate) fn run(&self, id: RunId) -> Result<Option<Run>, StoreError> {
        self.stored(id).map(|stored| stored.map(|(_, run)| run))
    }

    /// Run `id` with its `rev`.
    fn stored(&self, id: RunId) -> Result<Option<(i64, Run)>, StoreError> {
        let row = self.read(|conn| {
            conn.query_opt(
                "SELECT rev, id, record::text, plan::text FROM runs WHERE id = $1",
                params![sql_number(id.get())],
            )
        })?;
        row.map(|row| Ok((row.get(0), self.decode_run(&row, 1)?)))
            .transpose()
    }

    pub(crate) fn was_created(&self, id: RunId) -> Result<bool, StoreError> {
        Ok((1..self.counter("run")?).contains(&id.get()))
    }

    pub(crate) fn update_run<E>(
        &self,
        id: RunId,
        actor: Option<&Speaker>,
        mut change: impl FnMut(&mut Run) -> Result<Vec<AuditKind>, E>,
    ) -> Result<Run, UpdateError<E>> {
        loop {
            let (rev, before) = self.stored(id)?.ok_or(StoreError::NotFound { run: id })?;
            let Transition {
                after,
                record,
                plan,
                events,
            } = match transition::transition(self.now.get(), id, &before, actor, &mut change)? {
                Ok(transition) => transition,
                Err(unchanged) => return Ok(unchanged),
            };
            let what = format!("an audit event of run {id}");
            let events = events
                .iter()
                .map(|event| Self::encode_audit(&what, event))
                .collect::<Result<Vec<_>, _>>()?;
            let (record, plan) = (text(record), plan.map(text));
            let swapped = self.write(|conn| {
                let changed = conn.execute(
                    "UPDATE runs SET rev = rev + 1, record = $3::text::jsonb, \
                         plan = coalesce($4::text::jsonb, plan), finished_at = $5 \
                     WHERE id = $1 AND rev = $2",
                    params![
                        sql_number(id.get()),
                        rev,
                        record.clone(),
                        plan.clone(),
                        after.finished_at()
                    ],
                )?;
                if changed == 0 {
                    return Ok(false);
                }
                self.sync_lock(conn, &after)?;
                events
                    .iter()
                    .try_for_each(|event| self.put_audit(conn, event))?;
                Ok(true)
            })?;
            if !swapped {
                continue;
            }
            if after.state.is_finished() {
                self.inner.plan_cache.forget(id);
            } else if plan.is_some() {
                self.inner
                    .plan_cache
                    .put(id, &after.digest, Arc::clone(after.shared_plan()));
            }
            return Ok(after);
        }
    }

    pub(crate) fn lock_holder(&self, target: &Target) -> Result<Option<RunId>, StoreError> {
        self.read(|conn| {
            for key in target.lock_keys() {
                let row =
                    conn.query_opt("SELECT run FROM locks WHERE key = $1", params![key.clone()])?;
                if let Some(row) = row {
                    let holder = RunId::new(number(row.get(0)));
                    if self.is_live(conn, holder, &key)? {
                        return Ok(Some(holder));
                    }
                }
            }
            Ok(None)
        })
    }

    /// Makes the locks agree with `run` as it is about to be written: an unfinished run holds
    /// its target's locks, a finished one (or a booked one before its time) none. A lock held
    /// by another live run refuses the write with [`StoreError::Locked`].
    fn sync_lock(&self, conn: &mut Conn<'_>, run: &Run) -> Result<(), Fail> {
        let target = run.plan().request().target();
        let id = sql_number(run.id.get());
        if !run.holds_lock() {
            conn.execute(
                "DELETE FROM locks WHERE key = ANY($1) AND run = $2",
                params![target.lock_keys(), id],
            )?;
            return Ok(());
        }
        for key in target.lock_keys() {
            let row = conn.query_opt(
                "SELECT run FROM locks WHERE key = $1 FOR UPDATE",
                params![key.clone()],
            )?;
            if let Some(row) = row {
                let holder = RunId::new(number(row.get(0)));
                if holder == run.id {
                    continue;
                }
                if self.is_live(conn, holder, &key)? {
                    return Err(StoreError::Locked { target, holder }.into());
                }
                tracing::warn!(%key, %holder, run = %run.id, "taking over a stale lock");
            }
            conn.execute(
                "INSERT INTO locks (key, run) VALUES ($1, $2) \
                 ON CONFLICT (key) DO UPDATE SET run = excluded.run",
                params![key, id],
            )?;
        }
        Ok(())
    }

    /// Whether the lock `key` held by `holder` still counts: a lock whose run is missing,
    /// finished or on another target (only after a repair by hand) is free.
    fn is_live(&self, conn: &mut Conn<'_>, holder: RunId, key: &str) -> Result<bool, Fail> {
        let Some(row) = conn.query_opt(
            "SELECT id, record::text, plan::text FROM runs WHERE id = $1",
            params![sql_number(holder.get())],
        )?
        else {
            return Ok(false);
        };
        let run = self.decode_run(&row, 0)?;
        Ok(run.holds_lock()
            && run
                .plan()
                .request()
                .target()
                .lock_keys()
                .iter()
                .any(|k| k == key))
    }

    /// Appends one audit event under the next sequence number, inside a transaction.
    pub(super) fn put_audit(&self, conn: &mut Conn<'_>, event: &Audited) -> Result<(), Fail> {
        let seq = self.take_next(conn, "audit")?;
        conn.execute(
            "INSERT INTO audit (seq, at, run, event) VALUES ($1, $2, $3, $4::text::jsonb)",
            params![sql_number(seq), event.at, event.run, event.text.clone()],
        )?;
        Ok(())
    }
}
