//! The two-person rule. An approval is bound to the exact plan digest that was shown, may come
//! only from an approver who is not the requester (the same person on any surface), and only
//! while the request is open. Approve, reject, withdraw, cancel and expire are each one
//! transition that the store applies as a compare-and-swap: the first to land wins, and the
//! checks here tell everyone after it what happened instead. [`Approved`] is the proof a
//! destructive call requires; only [`Approved::verify`] constructs it.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::name::RunId;
use crate::people::{Actor, PersonRef};
use crate::plan::PlanDigest;
use crate::render::utc;
use crate::run::{Outcome, Run, RunState};

/// The stored record of an approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalGrant {
    pub by: PersonRef,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    /// The digest the approver was shown.
    pub digest: PlanDigest,
}

/// Why an approval, rejection or withdrawal was refused. The `Display` text is shown to the
/// person who tried, privately, and recorded in the audit log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApprovalRefusal {
    #[error(
        "you requested run {run}; another approver must approve it (to withdraw it: /reject \
         id:{run} reason:\"...\" or /run cancel id:{run})"
    )]
    OwnRun { run: RunId },
    #[error("approving needs the approver role; ask an approver")]
    NotApprover,
    /// A decision on a message of the run that no longer shows it (Matrix reactions): what
    /// it showed may not be the plan that would be approved.
    #[error(
        "that is an older message of run {run}: decide on its latest message, or with /run \
         status id:{run} and the command it shows"
    )]
    OlderMessage { run: RunId },
    #[error(
        "the plan of run {run} is not the one you name (its digest is {current}, you gave \
         {shown}); look at it again with /run status id:{run}"
    )]
    StaleDigest {
        run: RunId,
        shown: String,
        current: String,
    },
    #[error("the approval request of run {run} expired at {at}; request the run again")]
    Expired { run: RunId, at: String },
    #[error("run {run} needs no approval: its plan has no destructive step")]
    NoApprovalNeeded { run: RunId },
    #[error(
        "run {run} needs no approval: {requester}, who requested it, confirms its plan (the \
         `confirm` policy of {command})"
    )]
    ConfirmOnly {
        run: RunId,
        requester: String,
        command: String,
    },
    #[error(
        "only {requester}, who requested run {run}, confirms it; to stop it: /run cancel id:{run}"
    )]
    NotRequester { run: RunId, requester: String },
    #[error(
        "run {run} needs an approver's approval, not its requester's confirmation (/approve \
         id:{run})"
    )]
    NeedsApprover { run: RunId },
    /// Someone (or the clock) decided first; `what` says who and when.
    #[error("run {run} {what}")]
    Decided { run: RunId, what: String },
    #[error(
        "run {run} has not reached its approval gate yet; /run status id:{run} shows where it is"
    )]
    NotYet { run: RunId },
    #[error("run {run} is not covered by standing approval {standing}: {why}")]
    NotCovered {
        run: RunId,
        standing: crate::schedule::StandingId,
        why: String,
    },
    #[error("run {run} was requested before opsbot knew people by name; request it again")]
    Legacy { run: RunId },
    /// A proof asked for a step that is not destructive (the engine's mistake, never an
    /// operator's).
    #[error("internal error: step {step} of run {run} is not destructive; nothing was done")]
    NotDestructive { run: RunId, step: usize },
}

/// What a rejection does: an approver's refusal, or the requester taking their request back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    Rejected,
    Withdrawn,
}

/// Whether the run's approval holds for its current plan (also after a restart): a stored grant
/// for the run's digest by someone other than the requester, or, for a scheduled run without
/// one, a standing approval that covers its plan as it was created.
pub fn holds(run: &Run) -> Result<(), ApprovalRefusal> {
    let Some(grant) = &run.approval else {
        return standing(run);
    };
    if grant.by.same_person(&run.requester) {
        return Err(ApprovalRefusal::OwnRun { run: run.id });
    }
    if grant.digest != run.digest {
        return Err(ApprovalRefusal::StaleDigest {
            run: run.id,
            shown: grant.digest.short().to_owned(),
            current: run.digest.short().to_owned(),
        });
    }
    Ok(())
}

fn standing(run: &Run) -> Result<(), ApprovalRefusal> {
    let Some(grant) = run.scheduled.as_ref().and_then(|s| s.standing.as_ref()) else {
        return Err(ApprovalRefusal::NotYet { run: run.id });
    };
    grant
        .covers(run.plan(), run.created_at)
        .map_err(|why| ApprovalRefusal::NotCovered {
            run: run.id,
            standing: grant.id,
            why: why.to_string(),
        })
}

/// What already decided the run's approval request, in words after the run id: `is already
/// approved by bob at 2026-11-21 14:02 UTC`. `None` while the request is open.
pub fn decided(run: &Run) -> Option<String> {
    if let Some(grant) = run.approval.as_ref().filter(|g| g.digest == run.digest) {
        return Some(format!(
            "is already {} by {} at {}",
            crate::render::decided_how(run),
            grant.by.name,
            utc(grant.at)
        ));
    }
    let (at, outcome) = match &run.state {
        RunState::AwaitingApproval { .. } | RunState::Booked | RunState::Running => {
            return run.cancel.as_ref().map(|c| {
                format!(
                    "is being cancelled (asked by {} at {})",
                    c.by.name,
                    utc(c.at)
                )
            });
        }
        RunState::Finished { at, outcome } => (utc(*at), outcome),
    };
    Some(match outcome {
        Outcome::Rejected { by, .. } => format!("is already rejected by {} at {at}", by.name),
        Outcome::Withdrawn { by, .. } => format!("is already withdrawn by {} at {at}", by.name),
        Outcome::Cancelled { by, .. } => format!("is already cancelled by {} at {at}", by.name),
        Outcome::Expired if run.plan().needs_confirmation() => {
            format!("already expired at {at}: not confirmed in time")
        }
        Outcome::Expired => format!("already expired at {at}: nobody approved in time"),
        Outcome::Succeeded | Outcome::Failed { .. } => {
            format!("has already finished ({})", outcome.label())
        }
    })
}

/// The checks every decision shares: the plan needs approval, nobody decided yet, the run waits
/// for it. Returns when the request expires.
fn open(run: &Run) -> Result<OffsetDateTime, ApprovalRefusal> {
    if !run.plan().needs_approval() && !run.plan().needs_confirmation() {
        return Err(ApprovalRefusal::NoApprovalNeeded { run: run.id });
    }
    if let Some(what) = decided(run) {
        return Err(ApprovalRefusal::Decided { run: run.id, what });
    }
    match run.state {
        RunState::AwaitingApproval { expires_at } => Ok(expires_at),
        _ => Err(ApprovalRefusal::NotYet { run: run.id }),
    }
}

/// Checks everything an approver must satisfy, in the order that gives the most useful
/// refusal. `shown` is the digest (or its prefix of at least [`PlanDigest::SHORT`]) of the plan
/// the approver saw and approves.
pub fn approve(
    run: &Run,
    actor: &Actor,
    shown: &str,
    now: OffsetDateTime,
) -> Result<ApprovalGrant, ApprovalRefusal> {
    if run.plan().needs_confirmation() {
        let (group, sub) = run.plan().request().path();
        return Err(ApprovalRefusal::ConfirmOnly {
            run: run.id,
            requester: run.requester.name.to_string(),
            command: sub.map_or_else(|| format!("/{group}"), |sub| format!("/{group} {sub}")),
        });
    }
    let expires_at = open(run)?;
    if run.requester.is_legacy() {
        return Err(ApprovalRefusal::Legacy { run: run.id });
    }
    if actor.person.same_person(&run.requester) {
        return Err(ApprovalRefusal::OwnRun { run: run.id });
    }
    if !actor.roles.approver {
        return Err(ApprovalRefusal::NotApprover);
    }
    grant(run, actor, shown, now, expires_at)
}

/// The checks an approval and a confirmation share once the person may decide: the plan is
/// the one shown, and the request has not expired.
fn grant(
    run: &Run,
    actor: &Actor,
    shown: &str,
    now: OffsetDateTime,
    expires_at: OffsetDateTime,
) -> Result<ApprovalGrant, ApprovalRefusal> {
    if !run.digest.matches(shown) {
        return Err(ApprovalRefusal::StaleDigest {
            run: run.id,
            shown: crate::echo::visible(shown, PlanDigest::SHORT),
            current: run.digest.short().to_owned(),
        });
    }
    if now >= expires_at {
        return Err(ApprovalRefusal::Expired {
            run: run.id,
            at: utc(expires_at),
        });
    }
    Ok(ApprovalGrant {
        by: actor.person.clone(),
        at: now,
        digest: run.digest.clone(),
    })
}

/// Checks the requester's confirmation of their own plan (the `confirm` policy): the requester
/// alone, of the plan they were shown (`shown`, its digest or a prefix of it), before it expires.
pub fn confirm(
    run: &Run,
    actor: &Actor,
    shown: &str,
    now: OffsetDateTime,
) -> Result<ApprovalGrant, ApprovalRefusal> {
    if run.plan().needs_approval() {
        return Err(ApprovalRefusal::NeedsApprover { run: run.id });
    }
    let expires_at = open(run)?;
    if !actor.person.is_certainly(&run.requester) {
        return Err(ApprovalRefusal::NotRequester {
            run: run.id,
            requester: run.requester.name.to_string(),
        });
    }
    grant(run, actor, shown, now, expires_at)
}

/// Checks a rejection: an approver other than the requester rejects; the requester withdraws.
pub fn reject(run: &Run, actor: &Actor, now: OffsetDateTime) -> Result<Rejection, ApprovalRefusal> {
    let expires_at = open(run)?;
    if now >= expires_at {
        return Err(ApprovalRefusal::Expired {
            run: run.id,
            at: utc(expires_at),
        });
    }
    if actor.person.is_certainly(&run.requester) {
        return Ok(Rejection::Withdrawn);
    }
    if !actor.roles.approver {
        return Err(ApprovalRefusal::NotApprover);
    }
    Ok(Rejection::Rejected)
}

/// True when nobody decided in time: the one condition under which the engine expires a run.
pub fn expired(run: &Run, now: OffsetDateTime) -> bool {
    matches!(run.state, RunState::AwaitingApproval { expires_at } if now >= expires_at)
        && run.cancel.is_none()
}

mod proof;

pub use proof::{
    Approvable, Approved, ApprovedCommand, ApprovedConsumer, ApprovedIndices, ApprovedService,
    CloudAct, ClusterAct,
};

#[cfg(test)]
mod tests;
