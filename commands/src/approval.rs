//! The two-person rule. An approval is bound to the exact plan digest that was shown, may come
//! only from an approver who is not the requester, and only before the request expires.
//! [`Approved`] is the proof a destructive call requires; only the checks here construct it.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::name::RunId;
use crate::plan::PlanDigest;
use crate::run::{Actor, Run, RunState, UserRef};

/// The stored record of an approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalGrant {
    pub by: UserRef,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    /// The digest the approver was shown.
    pub digest: PlanDigest,
}

/// Why an approval (or rejection) was refused. The `Display` text is shown to the clicker only.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApprovalRefusal {
    #[error("you requested run {run}; another approver must approve it")]
    OwnRun { run: RunId },
    #[error("approving needs the approver role; ask an approver")]
    NotApprover,
    #[error(
        "the plan of run {run} changed since it was shown (digest {current}, you saw {shown}); \
         look at it again with /run status id:{run}"
    )]
    StaleDigest {
        run: RunId,
        shown: String,
        current: String,
    },
    #[error("the approval request of run {run} expired; request the run again")]
    Expired { run: RunId },
    #[error("run {run} is not waiting for approval (it is {state})")]
    NotAwaiting { run: RunId, state: &'static str },
}

/// What an approval attempt did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalOutcome {
    /// Record this grant; the run may start.
    Granted(ApprovalGrant),
    /// The run was already approved for this digest: approving twice is harmless.
    AlreadyApproved,
}

/// Proof that a run's destructive steps were approved for its current plan. It has no public
/// constructor: the engine gets one from [`Approved::verify`] and passes it to every destructive
/// call, so that such a call cannot be written without the check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approved {
    run: RunId,
    digest: PlanDigest,
}

impl Approved {
    /// Re-checks a run's stored grant (also after a restart): it must be for the run's digest,
    /// by someone other than the requester.
    pub fn verify(run: &Run) -> Result<Self, ApprovalRefusal> {
        let Some(grant) = &run.approval else {
            return Err(ApprovalRefusal::NotAwaiting {
                run: run.id,
                state: "not approved",
            });
        };
        if grant.by.id == run.requester.id {
            return Err(ApprovalRefusal::OwnRun { run: run.id });
        }
        if grant.digest != run.digest {
            return Err(ApprovalRefusal::StaleDigest {
                run: run.id,
                shown: grant.digest.short().to_owned(),
                current: run.digest.short().to_owned(),
            });
        }
        Ok(Self {
            run: run.id,
            digest: run.digest.clone(),
        })
    }

    pub fn run(&self) -> RunId {
        self.run
    }

    pub fn digest(&self) -> &PlanDigest {
        &self.digest
    }
}

/// Checks everything an approver must satisfy, in the order that gives the most useful refusal.
/// `shown` is the digest (or its prefix) the approver saw; `None` means the current plan, as
/// with a typed `/approve` right after `/run status` showed it.
pub fn approve(
    run: &Run,
    actor: &Actor,
    shown: Option<&str>,
    now: OffsetDateTime,
) -> Result<ApprovalOutcome, ApprovalRefusal> {
    check_decider(run, actor)?;
    if let Some(shown) = shown {
        if !run.digest.matches(shown) {
            return Err(ApprovalRefusal::StaleDigest {
                run: run.id,
                shown: shown.chars().take(PlanDigest::SHORT).collect(),
                current: run.digest.short().to_owned(),
            });
        }
    }
    match &run.state {
        RunState::AwaitingApproval { expires_at } if now >= *expires_at => {
            Err(ApprovalRefusal::Expired { run: run.id })
        }
        RunState::AwaitingApproval { .. } => Ok(ApprovalOutcome::Granted(ApprovalGrant {
            by: actor.user.clone(),
            at: now,
            digest: run.digest.clone(),
        })),
        _ if run
            .approval
            .as_ref()
            .is_some_and(|g| g.digest == run.digest) =>
        {
            Ok(ApprovalOutcome::AlreadyApproved)
        }
        state => Err(ApprovalRefusal::NotAwaiting {
            run: run.id,
            state: state.label(),
        }),
    }
}

/// Checks a rejection: the same people who may approve may reject, while the request is open.
pub fn reject(run: &Run, actor: &Actor, now: OffsetDateTime) -> Result<(), ApprovalRefusal> {
    check_decider(run, actor)?;
    match &run.state {
        RunState::AwaitingApproval { expires_at } if now >= *expires_at => {
            Err(ApprovalRefusal::Expired { run: run.id })
        }
        RunState::AwaitingApproval { .. } => Ok(()),
        state => Err(ApprovalRefusal::NotAwaiting {
            run: run.id,
            state: state.label(),
        }),
    }
}

fn check_decider(run: &Run, actor: &Actor) -> Result<(), ApprovalRefusal> {
    if actor.user.id == run.requester.id {
        return Err(ApprovalRefusal::OwnRun { run: run.id });
    }
    if !actor.roles.approver {
        return Err(ApprovalRefusal::NotApprover);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
