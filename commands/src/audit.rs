//! Audit events: what happened, when, by whom. The store appends them and never rewrites one.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::name::RunId;
use crate::run::UserRef;

/// One entry of the audit log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEvent {
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    pub run: Option<RunId>,
    /// Who caused it; `None` for the engine's own steps.
    pub actor: Option<UserRef>,
    pub event: AuditKind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AuditKind {
    /// A run was created from this command line and plan.
    RunRequested {
        command: String,
        digest: String,
    },
    /// A second operator approved the plan with this digest.
    ApprovalGranted {
        digest: String,
    },
    /// An approval or rejection was refused, and why.
    ApprovalRefused {
        reason: String,
    },
    /// A second operator rejected the plan.
    Rejected {
        reason: String,
    },
    /// An operator asked the run to stop.
    CancelRequested,
    /// An operator confirmed a manual step.
    OperatorConfirmed {
        step: usize,
    },
    /// The write-ahead record of a side effect about to be attempted.
    StepStarted {
        step: usize,
        action: String,
    },
    StepDone {
        step: usize,
        note: String,
    },
    StepFailed {
        step: usize,
        error: String,
    },
    /// The bot restarted and picked the run up again.
    Resumed {
        step: Option<usize>,
    },
    /// The run ended in this state.
    RunFinished {
        state: String,
    },
}
