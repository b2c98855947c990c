//! Schedules' durable state: the last fire of each (taken once: a fire is recorded in the same
//! transaction as the run it creates), pauses, and standing approvals. All of it lives in the
//! `meta` tree under its own key prefixes, so that a fire's record, its run, its cluster lock
//! and its audit events commit together (a transaction spans six trees at most).

use opsbot_commands::people::Speaker;
use opsbot_commands::schedule::{FireRecord, Pause, ScheduleName, StandingApproval, StandingId};
use sled::Transactional;
use sled::transaction::{ConflictableTransactionError, TransactionalTree};
use time::OffsetDateTime;

use crate::error::{StoreError, UpdateError};
use crate::sled::audit::AuditTrees;
use crate::sled::keys::META;
use crate::sled::runs::Abort;
use crate::sled::{Sled, abort, settle};
use crate::transition;

pub(super) const FIRE: &[u8] = b"fire/";
pub(super) const PAUSE: &[u8] = b"pause/";
pub(super) const STANDING: &[u8] = b"standing/";
pub(super) const NEXT_STANDING: &[u8] = b"next_standing_id";

pub(super) fn fire_key(schedule: &str) -> Vec<u8> {
    [FIRE, schedule.as_bytes()].concat()
}

pub(super) fn pause_key(schedule: &str) -> Vec<u8> {
    [PAUSE, schedule.as_bytes()].concat()
}

pub(super) fn standing_key(id: StandingId) -> Vec<u8> {
    [STANDING, &id.get().to_be_bytes()[..]].concat()
}

impl Sled {
    /// The last fire of `schedule` the store recorded.
    pub fn last_fire(&self, schedule: &ScheduleName) -> Result<Option<FireRecord>, StoreError> {
        let key = fire_key(schedule.as_str());
        self.meta
            .get(&key)?
            .map(|bytes| self.decode(META, &key, &bytes))
            .transpose()
    }

    /// Inside a transaction: refuses a fire at or before the one recorded, and records this one.
    pub(crate) fn take_fire<E: From<StoreError>>(
        &self,
        meta: &TransactionalTree,
        schedule: &ScheduleName,
        record: &[u8],
        at: OffsetDateTime,
    ) -> Result<(), ConflictableTransactionError<E>> {
        let key = fire_key(schedule.as_str());
        if let Some(bytes) = meta.get(&key)? {
            let last: FireRecord = self.decode(META, &key, &bytes).map_err(abort)?;
            if last.at >= at {
                return Err(abort(StoreError::AlreadyFired {
                    schedule: schedule.to_string(),
                    at: opsbot_commands::render::utc(at),
                }));
            }
        }
        meta.insert(key, record)?;
        Ok(())
    }

    /// Records a fire that created no run (nothing to do, paused, busy, missed, failed, or the
    /// scheduler's first look), audited unless it is the first look; refused with
    /// [`StoreError::AlreadyFired`] if a fire at or after `record.at` is recorded. Flushed.
    pub fn record_fire(
        &self,
        schedule: &ScheduleName,
        record: &FireRecord,
    ) -> Result<(), StoreError> {
        let bytes = transition::encode("a schedule's fire", record)?;
        let audited = transition::fire_is_audited(record);
        let entry = self.encode_audit(
            "the audit event of a fire",
            &transition::fired_event(self.now.get(), schedule, record, None),
        )?;
        let _writing = self.writing()?;
        settle(
            (&self.meta, &self.audit, &self.index).transaction(|(meta, audit, index)| {
                self.take_fire(meta, schedule, &bytes, record.at)?;
                if audited {
                    self.put_audit(&AuditTrees { meta, audit, index }, &entry)?;
                }
                Ok(())
            }),
        )?;
        self.flush()
    }

    /// Who paused `schedule`, if it is paused.
    pub fn pause(&self, schedule: &ScheduleName) -> Result<Option<Pause>, StoreError> {
        let key = pause_key(schedule.as_str());
        self.meta
            .get(&key)?
            .map(|bytes| self.decode(META, &key, &bytes))
            .transpose()
    }

    /// Pauses (`Some`) or resumes (`None`) `schedule`, with its audit event; flushed. Returns
    /// the pause it replaced.
    pub fn set_pause(
        &self,
        schedule: &ScheduleName,
        pause: Option<&Pause>,
        actor: &Speaker,
    ) -> Result<Option<Pause>, StoreError> {
        let key = pause_key(schedule.as_str());
        let bytes = pause
            .map(|pause| transition::encode("a schedule's pause", pause))
            .transpose()?;
        let entry = self.encode_audit(
            "the audit event of a pause",
            &transition::pause_event(self.now.get(), schedule, pause.is_some(), actor),
        )?;
        let _writing = self.writing()?;
        let before = settle((&self.meta, &self.audit, &self.index).transaction(
            |(meta, audit, index)| {
                let before = match &bytes {
                    Some(bytes) => meta.insert(key.as_slice(), bytes.as_slice())?,
                    None => meta.remove(key.as_slice())?,
                };
                self.put_audit(&AuditTrees { meta, audit, index }, &entry)?;
                Ok(before)
            },
        ))?;
        self.flush()?;
        before
            .map(|bytes| self.decode(META, &key, &bytes))
            .transpose()
    }

    /// Every standing approval, oldest first.
    pub fn standing_approvals(&self) -> Result<Vec<StandingApproval>, StoreError> {
        self.meta
            .scan_prefix(STANDING)
            .map(|entry| {
                let (key, bytes) = entry?;
                self.decode_standing(&key, &bytes)
            })
            .collect()
    }

    pub(super) fn decode_standing(
        &self,
        key: &[u8],
        bytes: &[u8],
    ) -> Result<StandingApproval, StoreError> {
        let standing: StandingApproval = self.decode(META, key, bytes)?;
        if standing_key(standing.id) != key {
            return Err(self.corrupt(META, key, &format!("it holds {}", standing.id)));
        }
        Ok(standing)
    }

    /// Creates a standing approval under the next id (sa-1, sa-2, ...), with its audit event
    /// (`what`, in words); `build` may refuse. Flushed.
    pub fn create_standing<E>(
        &self,
        actor: &Speaker,
        build: impl FnOnce(StandingId) -> Result<StandingApproval, E>,
    ) -> Result<StandingApproval, UpdateError<E>> {
        let _one_at_a_time = self
            .creating
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _writing = self.writing()?;
        let id = StandingId::new(self.counter(NEXT_STANDING)?);
        let standing = build(id).map_err(UpdateError::Refused)?;
        let key = standing_key(id);
        let bytes = transition::encode("a standing approval", &standing)?;
        let entry = self.encode_audit(
            "the audit event of a standing approval",
            &transition::standing_event(
                self.now.get(),
                &standing,
                actor,
                transition::standing_created(&standing),
            ),
        )?;
        settle(
            (&self.meta, &self.audit, &self.index).transaction(|(meta, audit, index)| {
                let allocated = self.take_next(meta, NEXT_STANDING)?;
                if allocated != id.get() || meta.get(&key)?.is_some() {
                    return Err(abort(self.corrupt(
                        META,
                        NEXT_STANDING,
                        "it points at an existing standing approval",
                    )));
                }
                meta.insert(key.as_slice(), bytes.as_slice())?;
                self.put_audit(&AuditTrees { meta, audit, index }, &entry)
            }),
        )?;
        self.flush()?;
        Ok(standing)
    }

    /// A compare-and-swap transition of standing approval `id`, like [`Sled::update_run`]:
    /// `change` returns what happened in words for the audit log (`None`: nothing to record);
    /// if the record changed in between, it is read again and `change` applied again. Flushed.
    pub fn update_standing<E>(
        &self,
        id: StandingId,
        actor: &Speaker,
        mut change: impl FnMut(&mut StandingApproval) -> Result<Option<String>, E>,
    ) -> Result<StandingApproval, UpdateError<E>> {
        let key = standing_key(id);
        let _writing = self.writing()?;
        loop {
            let stored = self
                .meta
                .get(&key)
                .map_err(StoreError::from)?
                .ok_or_else(|| StoreError::NoStanding { id: id.to_string() })?;
            let before = self.decode_standing(&key, &stored)?;
            let mut after = before.clone();
            let Some(what) = change(&mut after).map_err(UpdateError::Refused)? else {
                return Ok(before);
            };
            after.id = id;
            let bytes = transition::encode("a standing approval", &after)?;
            let entry = self.encode_audit(
                "the audit event of a standing approval",
                &transition::standing_event(self.now.get(), &after, actor, what),
            )?;
            let outcome =
                (&self.meta, &self.audit, &self.index).transaction(|(meta, audit, index)| {
                    if meta.get(&key)?.as_deref() != Some(&stored[..]) {
                        return Err(ConflictableTransactionError::Abort(Abort::Stale));
                    }
                    meta.insert(key.as_slice(), bytes.as_slice())?;
                    self.put_audit(&AuditTrees { meta, audit, index }, &entry)
                });
            if Abort::swapped(outcome)?.is_some() {
                self.flush()?;
                return Ok(after);
            }
        }
    }
}
