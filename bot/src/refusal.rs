//! What the engine says no with. A `Refusal` is product copy for the person who asked; an
//! internal error is logged in full and shown only as "internal error".

use opsbot_commands::approval::ApprovalRefusal;
use opsbot_commands::booking::BookingRefusal;
use opsbot_commands::name::{CloudName, ClusterName, RunId};
use opsbot_commands::planner::PlanError;
use opsbot_commands::runbook::RunbookError;
use opsbot_commands::schedule::{ScheduleName, StandingRefusal};
use opsbot_commands::target::Target;
use opsbot_state::StoreError;

use crate::backend::BackendError;

/// A request the engine will not carry out, and why, in words for the operator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("unknown cluster `{name}`; configured: {known}")]
    UnknownCluster { name: ClusterName, known: String },
    #[error("unknown cloud `{name}`; configured: {known}")]
    UnknownCloud { name: CloudName, known: String },
    #[error("no run {run}; /run list shows the recent ones")]
    NoSuchRun { run: RunId },
    #[error("{target} is busy with run {holder}; wait for it, or /run cancel id:{holder}")]
    Busy { target: Target, holder: RunId },
    #[error("{0}")]
    Plan(PlanError),
    #[error("run {run} already finished ({state}); nothing to cancel")]
    AlreadyFinished { run: RunId, state: &'static str },
    #[error("run {run} is not waiting for a manual step; /run status id:{run} shows where it is")]
    NotAwaitingOperator { run: RunId },
    #[error("{0}")]
    Approval(ApprovalRefusal),
    #[error("only operators may do that; ask an operator")]
    NotOperator,
    /// The surface account maps to no configured person.
    #[error("{0}")]
    UnknownPerson(#[from] opsbot_commands::people::UnknownPerson),
    /// A command typed in a chat channel opsbot does not serve; `served` names those it does.
    #[error("opsbot does not serve this channel; use {served}")]
    WrongChannel { served: String },
    #[error("{0}")]
    Backend(BackendError),
    #[error("{0}")]
    Runbook(#[from] RunbookError),
    #[error("internal error: a request for hosts that names no runbook; nothing was done")]
    NotARunbook,
    #[error("unknown schedule `{name}`; configured: {known}")]
    UnknownSchedule { name: ScheduleName, known: String },
    #[error("{0}")]
    Standing(StandingRefusal),
    #[error("{0}")]
    Booking(#[from] BookingRefusal),
}

impl Refusal {
    /// Refusals that say no to a person rather than to their input: who may do what, where, and
    /// the two-person rule. Each is recorded in the audit log with the person, the surface
    /// account and the reason.
    pub fn is_audited(&self) -> bool {
        match self {
            Self::NotOperator
            | Self::UnknownPerson(_)
            | Self::WrongChannel { .. }
            | Self::Approval(_)
            | Self::Standing(_) => true,
            Self::UnknownCluster { .. }
            | Self::UnknownCloud { .. }
            | Self::NoSuchRun { .. }
            | Self::Busy { .. }
            | Self::Plan(_)
            | Self::AlreadyFinished { .. }
            | Self::NotAwaitingOperator { .. }
            | Self::Backend(_)
            | Self::Runbook(_)
            | Self::NotARunbook
            | Self::UnknownSchedule { .. }
            | Self::Booking(_) => false,
        }
    }

    /// A short name of the refusal, from a closed set: the `reason` label of the refusal
    /// metric.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::UnknownCluster { .. } => "unknown_cluster",
            Self::UnknownCloud { .. } => "unknown_cloud",
            Self::NoSuchRun { .. } => "no_such_run",
            Self::Busy { .. } => "busy",
            Self::Plan(_) => "plan",
            Self::AlreadyFinished { .. } => "already_finished",
            Self::NotAwaitingOperator { .. } => "not_awaiting_operator",
            Self::Approval(refusal) => match refusal {
                ApprovalRefusal::OwnRun { .. } => "self_approval",
                ApprovalRefusal::NotApprover => "not_approver",
                ApprovalRefusal::OlderMessage { .. } => "older_message",
                ApprovalRefusal::StaleDigest { .. } => "stale_digest",
                ApprovalRefusal::Expired { .. } => "approval_expired",
                ApprovalRefusal::NoApprovalNeeded { .. } => "no_approval_needed",
                ApprovalRefusal::ConfirmOnly { .. } => "confirm_only",
                ApprovalRefusal::NotRequester { .. } => "not_requester",
                ApprovalRefusal::NeedsApprover { .. } => "needs_approver",
                ApprovalRefusal::Decided { .. } => "already_decided",
                ApprovalRefusal::NotYet { .. } => "approval_not_yet",
                ApprovalRefusal::Legacy { .. } => "legacy_run",
                ApprovalRefusal::NotCovered { .. } => "not_covered",
                ApprovalRefusal::NotDestructive { .. } => "not_destructive",
            },
            Self::NotOperator => "not_operator",
            Self::UnknownPerson(_) => "unknown_person",
            Self::WrongChannel { .. } => "wrong_channel",
            Self::Backend(_) => "backend",
            Self::Runbook(_) => "runbook",
            Self::NotARunbook => "not_a_runbook",
            Self::UnknownSchedule { .. } => "unknown_schedule",
            Self::Booking(_) => "booking",
            Self::Standing(refusal) => match refusal {
                StandingRefusal::OwnRequest { .. } => "self_approval",
                StandingRefusal::NotApprover => "not_approver",
                StandingRefusal::StaleDigest { .. } => "stale_digest",
                StandingRefusal::Expired { .. } => "approval_expired",
                StandingRefusal::NoBounds { .. }
                | StandingRefusal::Open { .. }
                | StandingRefusal::NotOpen { .. }
                | StandingRefusal::UntilPast { .. }
                | StandingRefusal::UntilTooFar { .. }
                | StandingRefusal::NoUntil
                | StandingRefusal::NothingAsked { .. } => "standing_approval",
            },
        }
    }
}

/// Either a refusal for the operator or an internal failure for the log.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error("the store failed: {0}")]
    Store(#[from] StoreError),
}

impl From<RunbookError> for EngineError {
    fn from(error: RunbookError) -> Self {
        Self::Refused(Refusal::Runbook(error))
    }
}

impl From<BackendError> for EngineError {
    fn from(error: BackendError) -> Self {
        Self::Refused(Refusal::Backend(error))
    }
}
