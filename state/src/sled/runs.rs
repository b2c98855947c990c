//! Runs: creating one under its cluster's lock, and compare-and-swap transitions with their
//! audit events; each keeps the run's place in the time-ordered index (see `listing`).

use std::sync::PoisonError;

use opsbot_commands::audit::AuditKind;
use opsbot_commands::name::RunId;
use opsbot_commands::people::Speaker;
use opsbot_commands::run::Run;
use opsbot_commands::schedule::ScheduleName;
use opsbot_commands::target::Target;
use sled::Transactional;
use sled::transaction::{ConflictableTransactionError, TransactionError};
use time::OffsetDateTime;

use crate::error::{StoreError, UpdateError};
use crate::sled::audit::AuditTrees;
use crate::sled::keys::{self, NEXT_RUN};
use crate::sled::{Sled, abort, settle};
use crate::transition;

/// Why an `update_run` transaction gave up.
pub(crate) enum Abort {
    Sled(StoreError),
    /// The run changed since it was read: read it again and re-apply the change.
    Stale,
}

impl Abort {
    /// What a compare-and-swap transaction came to: `None` when the record changed since it
    /// was read (read it again and apply the change again).
    pub(crate) fn swapped<T>(
        outcome: Result<T, TransactionError<Self>>,
    ) -> Result<Option<T>, StoreError> {
        match outcome {
            Ok(value) => Ok(Some(value)),
            Err(TransactionError::Abort(Self::Stale)) => Ok(None),
            Err(TransactionError::Abort(Self::Sled(error))) => Err(error),
            Err(TransactionError::Storage(error)) => Err(StoreError::Sled(error)),
        }
    }
}

impl From<StoreError> for Abort {
    fn from(error: StoreError) -> Self {
        Self::Sled(error)
    }
}

impl Sled {
    /// Creates a run (see `Store::create_run`), and with `fire` records a schedule's fire in
    /// the same transaction (see `Store::create_fired_run`).
    pub(crate) fn create(
        &self,
        build: impl FnOnce(RunId) -> Run,
        actor: Option<&Speaker>,
        fire: Option<(&ScheduleName, OffsetDateTime)>,
    ) -> Result<Run, StoreError> {
        let _one_at_a_time = self.creating.lock().unwrap_or_else(PoisonError::into_inner);
        let _writing = self.writing()?;
        let id = RunId::new(self.counter(NEXT_RUN)?);
        let transition::Creation {
            run,
            record,
            plan,
            fire,
            requested,
        } = transition::creation(self.now.get(), id, build, actor, fire)?;
        let what = format!("run {id}");
        let requested = self.encode_audit(&format!("the audit event of {what}"), &requested)?;
        let fired = fire
            .map(|fire| {
                let event = self.encode_audit(&format!("the fire of {what}"), &fire.event)?;
                Ok::<_, StoreError>((fire, event))
            })
            .transpose()?;
        let key = keys::run_key(id);
        let filed = keys::run_index_key(&run);
        let trees = (
            &self.meta,
            &self.runs,
            &self.plans,
            &self.locks,
            &self.audit,
            &self.index,
        );
        settle(
            trees.transaction(|(meta, runs, plans, locks, audit, index)| {
                let allocated = self.take_next(meta, NEXT_RUN)?;
                if allocated != id.get() || runs.get(key)?.is_some() || plans.get(key)?.is_some() {
                    let detail = format!("run {id} was being created under it");
                    return Err(abort(self.corrupt(keys::META, NEXT_RUN, &detail)));
                }
                self.sync_lock(runs, plans, locks, &run)?;
                plans.insert(&key, plan.as_slice())?;
                runs.insert(&key, record.as_slice())?;
                index.insert(filed.as_slice(), &[])?;
                let trees = AuditTrees { meta, audit, index };
                if let Some((fire, event)) = &fired {
                    self.take_fire(meta, &fire.schedule, &fire.record, fire.at)?;
                    self.put_audit(&trees, event)?;
                }
                self.put_audit(&trees, &requested)
            }),
        )?;
        self.flush()?;
        if !run.state.is_finished() {
            self.plan_cache
                .put(id, &run.digest, std::sync::Arc::clone(run.shared_plan()));
        }
        Ok(run)
    }

    /// The run with this id, if there is one.
    pub fn run(&self, id: RunId) -> Result<Option<Run>, StoreError> {
        let key = keys::run_key(id);
        match self.runs.get(key)? {
            Some(bytes) => self.decode_run(&key, &bytes).map(Some),
            None => Ok(None),
        }
    }

    /// Whether run `id` was ever created, though compaction may have archived it since: ids
    /// are handed out densely and never taken back, so a run's audit entries stay its own
    /// after it left the store.
    pub fn was_created(&self, id: RunId) -> Result<bool, StoreError> {
        Ok((1..self.counter(NEXT_RUN)?).contains(&id.get()))
    }

    /// Applies a transition as a compare-and-swap: reads the run, applies `change` to a copy,
    /// and writes the copy in one transaction with the audit events `change` returned (stamped
    /// with now, the run and `actor`) and the lock change it implies (a run that became
    /// finished releases its cluster). If the run changed in between, it is read again and
    /// `change` applied again, so no concurrent transition is lost. Then flushes: the engine
    /// writes "step started" here right before the side effect. A refusal from `change`
    /// writes nothing; a change that alters nothing and audits nothing writes nothing either.
    /// The id is the key, so a change cannot move a run to another id.
    pub fn update_run<E>(
        &self,
        id: RunId,
        actor: Option<&Speaker>,
        mut change: impl FnMut(&mut Run) -> Result<Vec<AuditKind>, E>,
    ) -> Result<Run, UpdateError<E>> {
        let key = keys::run_key(id);
        let _writing = self.writing()?;
        loop {
            let stored = self
                .runs
                .get(key)
                .map_err(StoreError::from)?
                .ok_or(StoreError::NotFound { run: id })?;
            let before = self.decode_run(&key, &stored)?;
            let transition::Transition {
                after,
                record,
                plan,
                events,
            } = match transition::transition(self.now.get(), id, &before, actor, &mut change)? {
                Ok(transition) => transition,
                Err(unchanged) => return Ok(unchanged),
            };
            let what = format!("run {id}");
            let events = events
                .iter()
                .map(|event| self.encode_audit(&format!("an audit event of {what}"), event))
                .collect::<Result<Vec<_>, _>>()?;
            // A run that finished moves from the unfinished index to the finished one.
            let (was_filed, filed) = (keys::run_index_key(&before), keys::run_index_key(&after));
            // `plans` is read for the plan of a run holding this run's lock, and written only
            // when a booked run is planned again.
            let trees = (
                &self.meta,
                &self.runs,
                &self.plans,
                &self.locks,
                &self.audit,
                &self.index,
            );
            let outcome = trees.transaction(|(meta, runs, plans, locks, audit, index)| {
                if runs.get(key)?.as_deref() != Some(&stored[..]) {
                    return Err(ConflictableTransactionError::Abort(Abort::Stale));
                }
                self.sync_lock(runs, plans, locks, &after)?;
                if let Some(plan) = &plan {
                    plans.insert(&key, plan.as_slice())?;
                }
                runs.insert(&key, record.as_slice())?;
                if was_filed != filed {
                    index.remove(was_filed.as_slice())?;
                    index.insert(filed.as_slice(), &[])?;
                }
                let trees = AuditTrees { meta, audit, index };
                events
                    .iter()
                    .try_for_each(|event| self.put_audit(&trees, event))
            });
            if Abort::swapped(outcome)?.is_none() {
                continue;
            }
            self.flush()?;
            if after.state.is_finished() {
                self.plan_cache.forget(id);
            } else if plan.is_some() {
                self.plan_cache.put(
                    id,
                    &after.digest,
                    std::sync::Arc::clone(after.shared_plan()),
                );
            }
            return Ok(after);
        }
    }

    /// The run holding one of `target`'s locks. A lock left pointing at a finished, missing or
    /// other-target run (possible only after a repair by hand) counts as free.
    pub fn lock_holder(&self, target: &Target) -> Result<Option<RunId>, StoreError> {
        for key in target.lock_keys() {
            let Some(bytes) = self.locks.get(key.as_bytes())? else {
                continue;
            };
            let holder: RunId = self.decode(keys::LOCKS, key.as_bytes(), &bytes)?;
            let record = self.runs.get(keys::run_key(holder))?;
            let read_plan = |key: &[u8]| Ok::<_, StoreError>(self.plans.get(key)?);
            if self.is_live(holder, record, &key, read_plan)? {
                return Ok(Some(holder));
            }
        }
        Ok(None)
    }
}
