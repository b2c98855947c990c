//! The engine's side of schedules: a fire becomes a run created together with the fire's
//! record (or a recorded outcome without a run), and standing approvals are asked for, approved
//! and voided here, each a compare-and-swap in the store with its audit event.

use opsbot_commands::people::{Actor, Speaker};
use opsbot_commands::run::Run;
use opsbot_commands::schedule::{
    FireOutcome, FireRecord, Pause, Schedule, ScheduleName, StandingApproval, StandingRefusal,
    StandingState,
    standing::{Scheduled, StandingGrant},
};
use opsbot_state::{StoreError, UpdateError};
use time::OffsetDateTime;

use super::{Engine, require_operator, store_only};
use crate::clock::span;
use crate::refusal::{EngineError, Refusal};

impl Engine {
    /// The configured schedule called `name`.
    pub fn schedule(&self, name: &ScheduleName) -> Result<&Schedule, Refusal> {
        self.0
            .schedules
            .iter()
            .find(|s| &s.name == name)
            .ok_or_else(|| Refusal::UnknownSchedule {
                name: name.clone(),
                known: self
                    .0
                    .schedules
                    .iter()
                    .map(|s| s.name.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// The standing approval of `schedule` that is asked for or in force at `now`, if any.
    pub fn live_standing(
        &self,
        schedule: &ScheduleName,
        now: OffsetDateTime,
    ) -> Result<Option<StandingApproval>, StoreError> {
        Ok(self
            .0
            .store
            .standing_approvals()?
            .into_iter()
            .rev()
            .find(|s| &s.schedule == schedule && s.is_live(now)))
    }

    /// Fires `schedule` for its fire at `fire_at`: plans now, and creates the run and the
    /// fire's record in one transaction (a plan with nothing to do records only the fire). The
    /// run goes ahead under the schedule's standing approval when that covers its plan, and
    /// waits for an ordinary approval otherwise, saying why. `None`: this fire was already
    /// recorded (by this bot before a restart). A busy target is [`Refusal::Busy`], one that
    /// did not answer [`Refusal::Backend`]: neither is recorded, the scheduler tries again.
    pub async fn fire(
        &self,
        schedule: &Schedule,
        fire_at: OffsetDateTime,
    ) -> Result<Option<FireOutcome>, EngineError> {
        let now = self.0.clock.now();
        if self.0.store.pause(&schedule.name)?.is_some() {
            return self.record(schedule, fire_at, FireOutcome::Paused).await;
        }
        let mut plan = match self.0.targets.plan(&schedule.request, now).await {
            Ok(plan) => plan,
            // A target that did not answer may answer in a moment: the scheduler tries again.
            Err(error @ EngineError::Refused(Refusal::Backend(_))) => return Err(error),
            Err(error) => {
                let error = error.to_string();
                return self
                    .record(schedule, fire_at, FireOutcome::Failed { error })
                    .await;
            }
        };
        if plan.is_empty() {
            let note = plan.notes().first().cloned().unwrap_or_default();
            return self
                .record(schedule, fire_at, FireOutcome::NothingToDo { note })
                .await;
        }
        let grant = self
            .live_standing(&schedule.name, now)?
            .and_then(|standing| standing.grant(&schedule.digest(), now));
        let scheduled = Scheduled {
            schedule: schedule.name.clone(),
            fire_at,
            standing: grant,
        };
        if plan.needs_approval() {
            let covered = || scheduled.standing.as_ref().map(StandingGrant::describe);
            if let Some(note) = scheduled.uncovered(&plan, now).or_else(covered) {
                plan.note_first(note);
            }
        }
        let ttl = span(self.0.config.approval_ttl);
        let (requester, channel) = (schedule.name.as_requester(), schedule.channel.clone());
        let created = self
            .0
            .writes
            .create_fired_run(
                move |id| Run::scheduled(id, plan, requester, channel, now, ttl, scheduled),
                schedule.name.clone(),
                fire_at,
            )
            .await;
        match created {
            Ok(run) => {
                tracing::info!(run = %run.id, schedule = %schedule.name, "scheduled run created");
                self.spawn(run.id);
                Ok(Some(FireOutcome::Started {
                    run: run.id,
                    waits: run.scheduled_wait(),
                }))
            }
            Err(StoreError::AlreadyFired { .. }) => Ok(None),
            Err(StoreError::Locked { target, holder }) => {
                Err(Refusal::Busy { target, holder }.into())
            }
            Err(other) => Err(other.into()),
        }
    }

    /// Records a fire that made no run; `None` if it was already recorded.
    pub async fn record(
        &self,
        schedule: &Schedule,
        at: OffsetDateTime,
        outcome: FireOutcome,
    ) -> Result<Option<FireOutcome>, EngineError> {
        let record = FireRecord {
            at,
            outcome: outcome.clone(),
        };
        match self
            .0
            .writes
            .record_fire(schedule.name.clone(), record)
            .await
        {
            Ok(()) => Ok(Some(outcome)),
            Err(StoreError::AlreadyFired { .. }) => Ok(None),
            Err(other) => Err(other.into()),
        }
    }

    /// Pauses (`true`) or resumes a schedule; `false` when it already was so.
    pub async fn set_paused(
        &self,
        actor: &Actor,
        name: &ScheduleName,
        paused: bool,
    ) -> Result<bool, EngineError> {
        require_operator(actor)?;
        self.schedule(name)?;
        let was = self.0.store.pause(name)?.is_some();
        if was == paused {
            return Ok(false);
        }
        let pause = paused.then(|| Pause {
            by: actor.person.clone(),
            at: self.0.clock.now(),
        });
        self.0
            .writes
            .set_pause(name.clone(), pause, actor.speaker())
            .await?;
        Ok(true)
    }

    /// `/schedule approve` without a digest: asks for a standing approval of the schedule as
    /// configured now, or shows the request already open.
    pub async fn ask_standing(
        &self,
        actor: &Actor,
        name: &ScheduleName,
    ) -> Result<(StandingApproval, bool), EngineError> {
        require_operator(actor)?;
        let schedule = self.schedule(name)?.clone();
        let now = self.0.clock.now();
        if let Some(open) = self.live_standing(name, now)? {
            return Ok((open, false));
        }
        let ttl = span(self.0.scheduling.standing_request_ttl);
        let asker = actor.clone();
        let created = self
            .0
            .writes
            .create_standing(actor.speaker(), move |id| {
                StandingApproval::ask(id, &schedule, &asker, now, now + ttl)
            })
            .await
            .map_err(standing_error)?;
        Ok((created, true))
    }

    /// `/schedule approve` with a digest: a second person approves the open request.
    pub async fn approve_standing(
        &self,
        actor: &Actor,
        name: &ScheduleName,
        shown: &str,
        until: Option<OffsetDateTime>,
    ) -> Result<StandingApproval, EngineError> {
        let until = until.ok_or(Refusal::Standing(StandingRefusal::NoUntil))?;
        let now = self.0.clock.now();
        let open = self
            .live_standing(name, now)?
            .filter(|s| matches!(s.state, StandingState::Asked { .. }));
        let Some(open) = open else {
            self.schedule(name)?;
            return Err(Refusal::Standing(StandingRefusal::NothingAsked {
                schedule: name.clone(),
            })
            .into());
        };
        let approver = actor.clone();
        let shown = shown.to_owned();
        self.0
            .writes
            .update_standing(open.id, actor.speaker(), move |standing| {
                standing.state = standing.approve(&approver, &shown, until, now)?;
                Ok(Some(format!(
                    "approved standing approval {} until {}",
                    standing.id,
                    opsbot_commands::render::utc(until)
                )))
            })
            .await
            .map_err(standing_error)
    }

    /// At start-up: voids every standing approval in force whose schedule's command or bounds
    /// changed in the config (or whose schedule is gone). Returns them, to say so.
    pub async fn void_changed_standing(&self) -> Result<Vec<StandingApproval>, EngineError> {
        let now = self.0.clock.now();
        let mut voided = Vec::new();
        for standing in self.0.store.standing_approvals()? {
            if !standing.is_live(now) {
                continue;
            }
            let digest = self.schedule(&standing.schedule).ok().map(Schedule::digest);
            if digest.as_ref() == Some(&standing.digest) {
                continue;
            }
            let actor = Speaker::from(&standing.schedule.as_requester());
            let updated = self
                .0
                .writes
                .update_standing(standing.id, actor, move |s| {
                    if !s.is_live(now) {
                        return Ok::<_, std::convert::Infallible>(None);
                    }
                    s.state = StandingState::Voided { at: now };
                    Ok(Some(format!(
                        "voided standing approval {}: the schedule's command or bounds changed \
                         in the config",
                        s.id
                    )))
                })
                .await
                .map_err(store_only)?;
            voided.push(updated);
        }
        Ok(voided)
    }
}

fn standing_error(error: UpdateError<StandingRefusal>) -> EngineError {
    match error {
        UpdateError::Refused(refusal) => Refusal::Standing(refusal).into(),
        UpdateError::Store(error) => error.into(),
    }
}
