//! Schedules' durable state on PostgreSQL: the last fire of each (taken once, in the
//! transaction of the run it creates), pauses, and standing approvals (see sled's
//! `schedules`).

use std::sync::PoisonError;

use opsbot_commands::people::Speaker;
use opsbot_commands::schedule::{FireRecord, Pause, ScheduleName, StandingApproval, StandingId};
use time::OffsetDateTime;

use super::pool::{Conn, Fail, params};
use super::{Postgres, number, sql_number, text};
use crate::error::{StoreError, UpdateError};
use crate::transition;

impl Postgres {
    pub(crate) fn last_fire(
        &self,
        schedule: &ScheduleName,
    ) -> Result<Option<FireRecord>, StoreError> {
        let row = self.read(|conn| {
            conn.query_opt(
                "SELECT record::text FROM fires WHERE schedule = $1",
                params![schedule.to_string()],
            )
        })?;
        row.map(|row| self.decode("fires", schedule.as_str(), row.get(0)))
            .transpose()
    }

    /// Inside a transaction: refuses a fire at or before the one recorded, and records this
    /// one (`record`, encoded).
    pub(super) fn take_fire(
        &self,
        conn: &mut Conn<'_>,
        schedule: &ScheduleName,
        record: &str,
        at: OffsetDateTime,
    ) -> Result<(), Fail> {
        let name = schedule.to_string();
        let row = conn.query_opt(
            "SELECT record::text FROM fires WHERE schedule = $1 FOR UPDATE",
            params![name.clone()],
        )?;
        if let Some(row) = row {
            let last: FireRecord = self.decode("fires", &name, row.get(0))?;
            if last.at >= at {
                return Err(StoreError::AlreadyFired {
                    schedule: name,
                    at: opsbot_commands::render::utc(at),
                }
                .into());
            }
        }
        conn.execute(
            "INSERT INTO fires (schedule, record) VALUES ($1, $2::text::jsonb) \
             ON CONFLICT (schedule) DO UPDATE SET record = excluded.record",
            params![name, record.to_owned()],
        )?;
        Ok(())
    }

    pub(crate) fn record_fire(
        &self,
        schedule: &ScheduleName,
        record: &FireRecord,
    ) -> Result<(), StoreError> {
        let encoded = text(transition::encode("a schedule's fire", record)?);
        let event = transition::fire_is_audited(record)
            .then(|| {
                Self::encode_audit(
                    "the audit event of a fire",
                    &transition::fired_event(self.now.get(), schedule, record, None),
                )
            })
            .transpose()?;
        self.write(|conn| {
            self.take_fire(conn, schedule, &encoded, record.at)?;
            event
                .iter()
                .try_for_each(|event| self.put_audit(conn, event))
        })
    }

    pub(crate) fn pause(&self, schedule: &ScheduleName) -> Result<Option<Pause>, StoreError> {
        let row = self.read(|conn| {
            conn.query_opt(
                "SELECT pause::text FROM pauses WHERE schedule = $1",
                params![schedule.to_string()],
            )
        })?;
        row.map(|row| self.decode("pauses", schedule.as_str(), row.get(0)))
            .transpose()
    }

    pub(crate) fn set_pause(
        &self,
        schedule: &ScheduleName,
        pause: Option<&Pause>,
        actor: &Speaker,
    ) -> Result<Option<Pause>, StoreError> {
        let name = schedule.to_string();
        let encoded = pause
            .map(|pause| transition::encode("a schedule's pause", pause).map(text))
            .transpose()?;
        let event = Self::encode_audit(
            "the audit event of a pause",
            &transition::pause_event(self.now.get(), schedule, pause.is_some(), actor),
        )?;
        let before = self.write(|conn| {
            let before = conn.query_opt(
                "SELECT pause::text FROM pauses WHERE schedule = $1 FOR UPDATE",
                params![name.clone()],
            )?;
            match &encoded {
                Some(pause) => conn.execute(
                    "INSERT INTO pauses (schedule, pause) VALUES ($1, $2::text::jsonb) \
                     ON CONFLICT (schedule) DO UPDATE SET pause = excluded.pause",
                    params![name.clone(), pause.clone()],
                )?,
                None => conn.execute(
                    "DELETE FROM pauses WHERE schedule = $1",
                    params![name.clone()],
                )?,
            };
            self.put_audit(conn, &event)?;
            Ok(before.map(|row| row.get::<_, String>(0)))
        })?;
        before
            .map(|text| self.decode("pauses", &name, &text))
            .transpose()
    }

    pub(crate) fn standing_approvals(&self) -> Result<Vec<StandingApproval>, StoreError> {
        let rows = self.read(|conn| {
            conn.query(
                "SELECT id, record::text FROM standing ORDER BY id",
                params![],
            )
        })?;
        rows.iter()
            .map(|row| self.decode_standing(StandingId::new(number(row.get(0))), row.get(1)))
            .collect()
    }

    /// A standing approval from its row, checked to be filed under its own id.
    fn decode_standing(&self, id: StandingId, text: &str) -> Result<StandingApproval, StoreError> {
        let key = id.to_string();
        let standing: StandingApproval = self.decode("standing", &key, text)?;
        if standing.id != id {
            return Err(self.corrupt("standing", &key, &format!("it holds {}", standing.id)));
        }
        Ok(standing)
    }

    pub(crate) fn create_standing<E>(
        &self,
        actor: &Speaker,
        build: impl FnOnce(StandingId) -> Result<StandingApproval, E>,
    ) -> Result<StandingApproval, UpdateError<E>> {
        let _one_at_a_time = self
            .inner
            .creating
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let id = StandingId::new(self.counter("standing")?);
        let standing = build(id).map_err(UpdateError::Refused)?;
        let record = text(transition::encode("a standing approval", &standing)?);
        let event = Self::encode_audit(
            "the audit event of a standing approval",
            &transition::standing_event(
                self.now.get(),
                &standing,
                actor,
                transition::standing_created(&standing),
            ),
        )?;
        self.write(|conn| {
            if self.take_next(conn, "standing")? != id.get() {
                return Err(self.contended(format!("it created {id} first")).into());
            }
            conn.execute(
                "INSERT INTO standing (id, rev, record) VALUES ($1, 1, $2::text::jsonb)",
                params![sql_number(id.get()), record.clone()],
            )?;
            self.put_audit(conn, &event)
        })?;
        Ok(standing)
    }

    pub(crate) fn update_standing<E>(
        &self,
        id: StandingId,
        actor: &Speaker,
        mut change: impl FnMut(&mut StandingApproval) -> Result<Option<String>, E>,
    ) -> Result<StandingApproval, UpdateError<E>> {
        loop {
            let row = self.read(|conn| {
                conn.query_opt(
                    "SELECT rev, record::text FROM standing WHERE id = $1",
                    params![sql_number(id.get())],
                )
            })?;
            let row = row.ok_or_else(|| StoreError::NoStanding { id: id.to_string() })?;
            let rev: i64 = row.get(0);
            let before = self.decode_standing(id, row.get(1))?;
            let mut after = before.clone();
            let Some(what) = change(&mut after).map_err(UpdateError::Refused)? else {
                return Ok(before);
            };
            after.id = id;
            let record = text(transition::encode("a standing approval", &after)?);
            let event = Self::encode_audit(
                "the audit event of a standing approval",
                &transition::standing_event(self.now.get(), &after, actor, what),
            )?;
            let swapped = self.write(|conn| {
                let changed = conn.execute(
                    "UPDATE standing SET rev = rev + 1, record = $3::text::jsonb \
                     WHERE id = $1 AND rev = $2",
                    params![sql_number(id.get()), rev, record.clone()],
                )?;
                if changed == 0 {
                    return Ok(false);
                }
                self.put_audit(conn, &event)?;
                Ok(true)
            })?;
            if swapped {
                return Ok(after);
            }
        }
    }
}
