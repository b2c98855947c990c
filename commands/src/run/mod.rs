//! A procedure run: its plan, who asked, where it is, and every step's state. This is the record
//! the store keeps; its transitions are methods here so that the rules live in one place.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::approval::ApprovalGrant;
use crate::booking::Booking;
use crate::name::RunId;
use crate::people::PersonRef;
use crate::plan::{Action, Kind, Plan, PlanDigest, Targeted};
use crate::schedule::standing::Scheduled;

mod phase;

pub use phase::{Outcome, RunState};

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

/// One step's state. `Started` is written (and flushed) before the side effect: a run found with
/// a started step after a crash settles it by observing the world, never by replaying blindly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum StepState {
    Pending,
    Started {
        #[serde(with = "time::serde::rfc3339")]
        at: OffsetDateTime,
    },
    /// A manual step: an operator was asked to act and to confirm with `/run done`.
    AwaitingOperator {
        #[serde(with = "time::serde::rfc3339")]
        since: OffsetDateTime,
        prompt: String,
    },
    Done {
        #[serde(with = "time::serde::rfc3339")]
        at: OffsetDateTime,
        note: String,
        /// Of a chunk of index deletions: how many of its indices its own DELETE removed (the
        /// others were gone already, or re-created since the plan and kept). The report counts
        /// these, the cluster's answer per index, never the chunk's size.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        deleted: Option<usize>,
    },
    Failed {
        #[serde(with = "time::serde::rfc3339")]
        at: OffsetDateTime,
        error: String,
        /// The server refused the step's change before acting on it: nothing of the step was
        /// done, which the run's report says instead of "may be partly done".
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        unchanged: bool,
    },
}

impl StepState {
    /// A step done, with what it observed or did in words.
    pub fn done(at: OffsetDateTime, note: impl Into<String>) -> Self {
        Self::Done {
            at,
            note: note.into(),
            deleted: None,
        }
    }
}

/// An operator asked the run to stop; the engine honours it at the next safe point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CancelRequest {
    pub by: PersonRef,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
}

/// The durable record of one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    pub id: RunId,
    /// Shared: a plan never changes once its run exists (it is what was approved), and a
    /// prune's plan names thousands of indices that every transition need not copy.
    pub plan: Arc<Plan>,
    pub digest: PlanDigest,
    pub requester: PersonRef,
    pub channel: ChannelId,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// Stored as the two fields `finished_at` and `state` of earlier versions.
    #[serde(flatten)]
    pub state: RunState,
    /// One entry per plan step, in order.
    pub steps: Vec<StepState>,
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

    /// What is wrong with a stored record, if anything: its steps must match its plan's, and a
    /// destructive step may have begun only under an approval of its digest by someone other
    /// than the requester (a finished run's finish time is checked by its decoder). A run task trusts these (it indexes steps
    /// by the plan's), so the store refuses a record that breaks them. The digest itself is not
    /// recomputed: it is what was shown and approved, and a later opsbot may write the same plan
    /// differently.
    pub fn inconsistency(&self) -> Option<String> {
        if self.steps.len() != self.plan.len() {
            return Some(format!(
                "it has {} step states for {} planned steps",
                self.steps.len(),
                self.plan.len()
            ));
        }
        match self.state {
            RunState::Booked if !self.is_ahead() => {
                return Some("it is booked but has no booked time ahead".to_owned());
            }
            RunState::Running if self.is_ahead() => {
                return Some("it is running before its booked time".to_owned());
            }
            _ => {}
        }
        // The engine's own check, so that the store and the engine cannot disagree.
        let approved = crate::approval::holds(self).is_ok();
        if let RunState::AwaitingApproval { .. } = self.state {
            if !self.plan.needs_approval() && !self.plan.needs_confirmation() {
                return Some("it awaits approval of a plan that needs none".to_owned());
            }
            if approved {
                return Some("it awaits an approval it already has".to_owned());
            }
        }
        let begun_destructive = self
            .plan
            .steps()
            .zip(&self.steps)
            .position(|(step, state)| {
                step.is_destructive() && !matches!(state, StepState::Pending)
            });
        if let Some(step) = begun_destructive.filter(|_| !approved) {
            return Some(format!(
                "destructive step {} has begun without an approval of this plan by a second person",
                step + 1
            ));
        }
        None
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
