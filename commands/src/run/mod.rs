//! A procedure run: its plan, who asked, where it is, and every step's state. This is the record
//! the store keeps; its transitions are methods here so that the rules live in one place.
//!
//! Each planned step has its one state: the states are made with the plan and changed in place,
//! one step at a time, so no code can leave a run with one state more or less than its plan
//! has steps:
//!
//! ```compile_fail,E0616
//! # use opsbot_commands::run::Run;
//! fn forget_the_last(run: &mut Run) {
//!     run.steps.pop();
//! }
//! ```
//!
//! ```compile_fail,E0599
//! # use opsbot_commands::run::Run;
//! fn forget_the_last(run: &mut Run) {
//!     run.steps_mut().pop();
//! }
//! ```
//!
//! nor give it another plan under the same states (only a booked run's whole re-plan, which
//! makes new states, is a method):
//!
//! ```compile_fail,E0616
//! # use std::sync::Arc;
//! # use opsbot_commands::{plan::Plan, run::Run};
//! fn swap(run: &mut Run, other: Arc<Plan>) {
//!     run.plan = other;
//! }
//! ```
//!
//! and a stored record becomes a run only through [`Run::joined`], which checks it:
//!
//! ```compile_fail,E0451
//! # use std::sync::Arc;
//! # use opsbot_commands::{plan::Plan, run::{Record, Run}};
//! fn unchecked(record: Record, plan: Arc<Plan>) -> Run {
//!     let Record { id, digest, requester, channel, created_at, state, steps, approval, cancel,
//!         progress_message, captured, scheduled, booking } = record;
//!     Run { id, plan, digest, requester, channel, created_at, state, steps, approval, cancel,
//!         progress_message, captured, scheduled, booking }
//! }
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::approval::ApprovalGrant;
use crate::booking::Booking;
use crate::name::RunId;
use crate::people::PersonRef;
use crate::plan::{Action, Kind, Plan, PlanDigest, StepRef, Targeted};
use crate::schedule::standing::Scheduled;

mod phase;
mod record;
mod step;

pub use phase::{Outcome, RunState};
pub use record::{Inconsistent, Record};
pub use step::StepState;

/// Where a run reports: a channel id of the front end that started it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ChannelId(pub String);

impl ChannelId {
    /// The console's one channel, the same on every bot.
    pub const CONSOLE: &str = "console";

    /// The console's channel.
    pub fn console() -> Self {
        Self(Self::CONSOLE.to_owned())
    }

    /// Whether this is the console's channel.
    pub fn is_console(&self) -> bool {
        self.0 == Self::CONSOLE
    }
}

/// The one progress message of a run, kept so that a restarted bot edits the same message.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MessageId(pub String);

/// An operator asked the run to stop; the engine honours it at the next safe point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CancelRequest {
    pub by: PersonRef,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
}

/// The durable record of one run. Its plan and its steps' states are private: the states are
/// made with the plan, one per step, and change one step at a time, so that a run whose steps
/// are not its plan's cannot be made; a stored one becomes a run only through
/// [`Run::joined`] (or its decoder, which is that), checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "record::Whole")]
pub struct Run {
    pub id: RunId,
    /// Shared: a plan never changes once its run exists (it is what was approved), and a
    /// prune's plan names thousands of indices that every transition need not copy.
    plan: Arc<Plan>,
    pub digest: PlanDigest,
    pub requester: PersonRef,
    pub channel: ChannelId,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// Stored as the two fields `finished_at` and `state` of earlier versions.
    #[serde(flatten)]
    pub state: RunState,
    /// One entry per plan step, in order.
    steps: Vec<StepState>,
    pub approval: Option<ApprovalGrant>,
    pub cancel: Option<CancelRequest>,
    pub progress_message: Option<MessageId>,
    /// Values runbook steps captured from their output, for the steps after them. Kept with the
    /// run so that a step resumed after a restart still has them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub captured: BTreeMap<String, String>,
    /// The schedule's fire that created the run, and the standing approval it runs under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled: Option<Scheduled>,
    /// The time the run was booked for, if it was booked ahead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub booking: Option<Booking>,
}

impl Run {
    /// A new run of `plan`. One that needs approval before its first step starts by waiting for
    /// it until `expires_at`; a runbook with a later gate waits there (see [`Plan::approval_at`]).
    pub fn new(
        id: RunId,
        plan: Plan,
        requester: PersonRef,
        channel: ChannelId,
        now: OffsetDateTime,
        approval_ttl: time::Duration,
    ) -> Self {
        let state = if plan.asks_before_start() {
            RunState::AwaitingApproval {
                expires_at: now + approval_ttl,
            }
        } else {
            RunState::Running
        };
        Self {
            id,
            digest: plan.digest(),
            steps: vec![StepState::Pending; plan.len()],
            plan: Arc::new(plan),
            requester,
            channel,
            created_at: now,
            state,
            approval: None,
            cancel: None,
            progress_message: None,
            captured: BTreeMap::new(),
            scheduled: None,
            booking: None,
        }
    }

    /// A run booked for `at`: its approval is asked for now (and must come before `at`), and
    /// then it waits for its time.
    pub fn booked(
        id: RunId,
        plan: Plan,
        requester: PersonRef,
        channel: ChannelId,
        now: OffsetDateTime,
        approval_ttl: time::Duration,
        at: OffsetDateTime,
    ) -> Self {
        let mut run = Self::new(
            id,
            plan,
            requester,
            channel,
            now,
            approval_ttl.min(at - now),
        );
        run.booking = Some(Booking::new(at));
        if run.state == RunState::Running {
            run.state = RunState::Booked;
        }
        run
    }

    /// The plan the run carries out: what was shown and approved.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The plan, shared: what the store's cache of live runs' plans keeps.
    pub fn shared_plan(&self) -> &Arc<Plan> {
        &self.plan
    }

    /// Every step's state, in the plan's order: one per planned step.
    pub fn steps(&self) -> &[StepState] {
        &self.steps
    }

    /// Every step's state, to change in place: a slice, so never one more or one less than the
    /// plan has.
    pub fn steps_mut(&mut self) -> &mut [StepState] {
        &mut self.steps
    }

    /// Every planned step with its state, in order.
    pub fn planned_steps(&self) -> impl Iterator<Item = (StepRef<'_>, &StepState)> {
        self.plan.steps().zip(&self.steps)
    }

    /// A booked run's plan made again at its time, when it differs from the approved one: the
    /// new plan and its digest, every step pending, the old plan's approval gone.
    pub fn replan(&mut self, plan: Arc<Plan>) {
        self.digest = plan.digest();
        self.steps = vec![StepState::Pending; plan.len()];
        self.plan = plan;
        self.approval = None;
    }

    /// Where the run stands, in a few words for lists: its phase, told more exactly while it
    /// waits for a person (`waiting for an operator at step 3`, `awaiting confirmation`).
    pub fn label(&self) -> String {
        match self.awaiting_operator() {
            Some(step) if self.state == RunState::Running => {
                format!("waiting for an operator at step {}", step + 1)
            }
            _ if self.awaits_confirmation() => "awaiting confirmation".to_owned(),
            _ => self.state.label().to_owned(),
        }
    }

    /// True while the run waits for its requester to confirm its plan (the `confirm` policy).
    pub fn awaits_confirmation(&self) -> bool {
        matches!(self.state, RunState::AwaitingApproval { .. }) && self.plan.needs_confirmation()
    }

    /// True while a booked run waits for its time: it holds no lock, and an approval lets it
    /// wait on instead of running.
    pub fn is_ahead(&self) -> bool {
        self.booking.is_some_and(|booking| booking.is_ahead())
    }

    /// Whether the run holds its target's lock: from its creation (or, when booked, from its
    /// time) until it finishes.
    pub fn holds_lock(&self) -> bool {
        !self.state.is_finished() && !self.is_ahead()
    }

    /// Since when the run has been under way: its creation, or the moment a booked run's time
    /// came. What "running 3m" and "succeeded in 3m" count from.
    pub fn started_at(&self) -> OffsetDateTime {
        self.booking
            .and_then(|booking| booking.reached)
            .unwrap_or(self.created_at)
    }

    /// The state an approval moves the run to: running, or booked while its time is ahead.
    pub fn approved_state(&self) -> RunState {
        if self.is_ahead() {
            RunState::Booked
        } else {
            RunState::Running
        }
    }

    /// A run of a schedule's fire. Under a standing approval that covers its plan it starts
    /// right away; otherwise it waits for an ordinary approval like any other run.
    pub fn scheduled(
        id: RunId,
        plan: Plan,
        requester: PersonRef,
        channel: ChannelId,
        now: OffsetDateTime,
        approval_ttl: time::Duration,
        scheduled: Scheduled,
    ) -> Self {
        let mut run = Self::new(id, plan, requester, channel, now, approval_ttl);
        run.scheduled = Some(scheduled);
        // Confirming is the requester's, and the schedule's operators made it theirs.
        if matches!(run.state, RunState::AwaitingApproval { .. })
            && (run.plan.needs_confirmation() || crate::approval::holds(&run).is_ok())
        {
            run.state = RunState::Running;
        }
        run
    }

    /// Why a schedule's run waits for an approval, when it does: the bound its plan exceeds, or
    /// the standing approval it lacks.
    pub fn scheduled_wait(&self) -> Option<String> {
        let waiting = matches!(self.state, RunState::AwaitingApproval { .. });
        let scheduled = self.scheduled.as_ref().filter(|_| waiting)?;
        scheduled.uncovered(&self.plan, self.created_at)
    }

    /// The first step that is not done: where execution continues.
    pub fn cursor(&self) -> Option<usize> {
        self.steps
            .iter()
            .position(|s| !matches!(s, StepState::Done { .. }))
    }

    /// The manual step an operator must confirm, if the run waits on one.
    pub fn awaiting_operator(&self) -> Option<usize> {
        self.steps
            .iter()
            .position(|s| matches!(s, StepState::AwaitingOperator { .. }))
    }

    /// Steps that must still run before the run ends early (cancelled or failed): those that
    /// undo a change an earlier step made or may have made, and are not done yet.
    pub fn cleanup_steps(&self) -> Vec<usize> {
        match self.plan.targeted() {
            Targeted::Cluster { steps, .. } => self.undoing(steps),
            Targeted::Cloud { steps, .. } => self.undoing(steps),
            Targeted::Hosts { steps } => self.undoing(steps),
        }
    }

    fn undoing<K: Kind>(&self, steps: &[Action<K>]) -> Vec<usize> {
        let touched = |index: usize| !matches!(self.steps.get(index), Some(StepState::Pending));
        let done = |index: usize| matches!(self.steps.get(index), Some(StepState::Done { .. }));
        steps
            .iter()
            .enumerate()
            .filter(|&(index, action)| {
                let Action::Safe(undo) = action else {
                    return false;
                };
                !done(index)
                    && steps[..index]
                        .iter()
                        .enumerate()
                        .any(|(earlier, change)| touched(earlier) && K::undoes(undo, change))
            })
            .map(|(index, _)| index)
            .collect()
    }

    /// Ends the run with `outcome` at `now`.
    pub fn finish(&mut self, outcome: Outcome, now: OffsetDateTime) {
        self.state = RunState::Finished { at: now, outcome };
    }

    /// When the run finished, if it has.
    pub fn finished_at(&self) -> Option<OffsetDateTime> {
        self.state.finished_at()
    }

    /// How the run ended, if it has.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.state.outcome()
    }
}
