//! What people decide about a run: cancel (or withdraw), confirm a manual step, approve, reject.
//! Each is one compare-and-swap in the store, checked against the run as it is when it lands,
//! so that the first decision wins and the engine's own transitions (expiry) cannot undo it.

use opsbot_commands::approval::{self, ApprovalGrant, ApprovalRefusal, Rejection};
use opsbot_commands::audit::AuditKind;
use opsbot_commands::name::{Reason, RunId};
use opsbot_commands::people::Actor;
use opsbot_commands::render;
use opsbot_commands::run::{CancelRequest, Outcome, Run, RunState, StepState};
use time::OffsetDateTime;

use super::{Engine, require_operator};
use crate::refusal::{EngineError, Refusal};

impl Engine {
    /// Asks a run to stop at its next safe point. Any operator may cancel any unfinished run.
    /// A run still waiting for approval or for its booked time has run nothing, so it ends at
    /// once, in this one transition: withdrawn when its requester cancels it before approval,
    /// cancelled otherwise.
    pub async fn cancel(&self, actor: &Actor, id: RunId) -> Result<Run, EngineError> {
        require_operator(actor)?;
        let now = self.0.clock.now();
        let by = actor.person.clone();
        let updated = self.0.update(id, actor, move |run| {
            if run.state.is_finished() {
                return Err(Refusal::AlreadyFinished {
                    run: run.id,
                    state: run.state.label(),
                });
            }
            if run.cancel.is_some() {
                return Ok(vec![]);
            }
            if run.state == RunState::Booked {
                run.finish(
                    Outcome::Cancelled {
                        by: by.clone(),
                        note: "cancelled before its booked time; nothing was done".to_owned(),
                    },
                    now,
                );
                return Ok(vec![
                    AuditKind::CancelRequested,
                    AuditKind::RunFinished {
                        state: run.state.label().to_owned(),
                    },
                ]);
            }
            let awaiting = matches!(run.state, RunState::AwaitingApproval { .. });
            if awaiting && run.cleanup_steps().is_empty() {
                if by.is_certainly(&run.requester) {
                    run.finish(
                        Outcome::Withdrawn {
                            by: by.clone(),
                            reason: None,
                        },
                        now,
                    );
                    return Ok(vec![
                        AuditKind::Withdrawn { reason: None },
                        AuditKind::RunFinished {
                            state: run.state.label().to_owned(),
                        },
                    ]);
                }
                let untouched = run.steps().iter().all(|s| matches!(s, StepState::Pending));
                let note = if untouched {
                    "cancelled before approval; nothing was done".to_owned()
                } else {
                    render::aftermath(run, None)
                };
                run.finish(
                    Outcome::Cancelled {
                        by: by.clone(),
                        note,
                    },
                    now,
                );
                return Ok(vec![
                    AuditKind::CancelRequested,
                    AuditKind::RunFinished {
                        state: run.state.label().to_owned(),
                    },
                ]);
            }
            run.cancel = Some(CancelRequest {
                by: by.clone(),
                at: now,
            });
            Ok(vec![AuditKind::CancelRequested])
        });
        let run = updated.await?;
        self.0.wake(id);
        Ok(run)
    }

    /// An operator confirms the manual step a run waits for.
    pub async fn confirm(&self, actor: &Actor, id: RunId) -> Result<Run, EngineError> {
        require_operator(actor)?;
        let now = self.0.clock.now();
        let note = format!("done by {}", actor.name());
        let updated = self.0.update(id, actor, move |run| {
            let Some(step) = run.awaiting_operator().filter(|_| !run.state.is_finished()) else {
                return Err(Refusal::NotAwaitingOperator { run: run.id });
            };
            run.steps_mut()[step] = StepState::done(now, note.clone());
            Ok(vec![AuditKind::OperatorConfirmed { step }])
        });
        let run = updated.await?;
        self.0.wake(id);
        Ok(run)
    }

    /// A second operator approves the plan whose digest (or its shown prefix) is `shown`.
    pub async fn approve(&self, actor: &Actor, id: RunId, shown: &str) -> Result<Run, EngineError> {
        let event = |digest| AuditKind::ApprovalGranted { digest };
        self.agree(actor, id, shown, approval::approve, event).await
    }

    /// The requester confirms their own plan, whose digest (or its shown prefix) is `shown`
    /// (the `confirm` policy).
    pub async fn confirm_plan(
        &self,
        actor: &Actor,
        id: RunId,
        shown: &str,
    ) -> Result<Run, EngineError> {
        require_operator(actor)?;
        let event = |digest| AuditKind::Confirmed { digest };
        self.agree(actor, id, shown, approval::confirm, event).await
    }

    /// Records the agreement `check` grants (an approval or a confirmation) as one transition,
    /// audited as `event` with the plan's short digest, and lets the run go on.
    async fn agree(
        &self,
        actor: &Actor,
        id: RunId,
        shown: &str,
        check: fn(&Run, &Actor, &str, OffsetDateTime) -> Result<ApprovalGrant, ApprovalRefusal>,
        event: fn(String) -> AuditKind,
    ) -> Result<Run, EngineError> {
        let now = self.0.clock.now();
        let (person, shown) = (actor.clone(), shown.to_owned());
        let updated = self.0.update(id, actor, move |run| {
            let grant = check(run, &person, &shown, now).map_err(Refusal::Approval)?;
            let digest = grant.digest.short().to_owned();
            run.approval = Some(grant);
            run.state = run.approved_state();
            Ok(vec![event(digest)])
        });
        let run = updated.await?;
        self.0.wake(id);
        Ok(run)
    }

    /// A second operator rejects, saying why; the requester withdraws their own plan the same
    /// way.
    pub async fn reject(
        &self,
        actor: &Actor,
        id: RunId,
        reason: &Reason,
    ) -> Result<Run, EngineError> {
        let now = self.0.clock.now();
        let (rejecter, reason) = (actor.clone(), reason.to_string());
        let updated = self.0.update(id, actor, move |run| {
            let reason = reason.clone();
            let (outcome, event) =
                match approval::reject(run, &rejecter, now).map_err(Refusal::Approval)? {
                    Rejection::Rejected => (
                        Outcome::Rejected {
                            by: rejecter.person.clone(),
                            reason: reason.clone(),
                        },
                        AuditKind::Rejected { reason },
                    ),
                    Rejection::Withdrawn => (
                        Outcome::Withdrawn {
                            by: rejecter.person.clone(),
                            reason: Some(reason.clone()),
                        },
                        AuditKind::Withdrawn {
                            reason: Some(reason),
                        },
                    ),
                };
            let label = outcome.label().to_owned();
            run.finish(outcome, now);
            Ok(vec![event, AuditKind::RunFinished { state: label }])
        });
        let run = updated.await?;
        self.0.wake(id);
        Ok(run)
    }
}
