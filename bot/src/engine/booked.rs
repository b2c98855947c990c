//! A booked run's wait for its time: reminders on the way, then planning it again. The plan
//! approved at booking is what was shown; the cluster may have changed in between (a node
//! gone, more indices old enough), so the run goes ahead only if the new plan is the same one,
//! and otherwise waits for a fresh approval of what it will do now.

use std::sync::Arc;
use std::time::Duration;

use opsbot_commands::audit::AuditKind;
use opsbot_commands::booking;
use opsbot_commands::name::RunId;
use opsbot_commands::plan::Plan;
use opsbot_commands::run::{Outcome, Run, RunState};
use opsbot_state::{StoreError, UpdateError};
use time::OffsetDateTime;

use super::{EngineError, Inner, drive};
use crate::clock::span;

/// How often a booked run whose time came looks again at a busy target or a target that did
/// not answer, until `[scheduling] lock_wait` after its time.
pub(super) const LOOK_AGAIN: Duration = Duration::from_secs(30);

/// What the wait of a booked run leads to.
pub(super) enum Wait {
    /// Sleep until then (a reminder or the time itself), or until someone acts on the run.
    Until(OffsetDateTime),
    /// The time came: plan it again.
    Due,
}

/// Sends the reminder due now, if any (once: announcements are keyed, and the store remembers
/// the keys sent across restarts), and says how long to wait.
pub(super) fn wait(inner: &Inner, run: &Run, now: OffsetDateTime) -> Wait {
    let leads = &inner.scheduling.reminders;
    if let Some(reminder) = booking::reminder_due(run, leads, now) {
        inner.progress.announce(reminder, run.channel.clone());
    }
    match booking::next_wake(run, leads, now) {
        Some(wake) if wake > now => Wait::Until(wake),
        _ => Wait::Due,
    }
}

/// What came of planning a booked run at its time.
pub(super) enum Arrival {
    /// The run goes on (or waits for a fresh approval), or ended; its record says which.
    Settled,
    /// The target is busy or did not answer; look again after [`LOOK_AGAIN`].
    LookAgain,
}

/// Plans the run again at its time and makes the one transition that ends its wait: running
/// under its approval if the plan is the same, waiting for a fresh approval if it changed. A
/// busy or silent target is looked at again until `lock_wait` after the time; then the run
/// fails saying so, having done nothing.
pub(super) async fn arrive(inner: &Inner, run: &Run) -> Result<Arrival, StoreError> {
    let Some(at) = run.booking.map(|b| b.at) else {
        return Ok(Arrival::Settled);
    };
    let now = inner.clock.now();
    let lock_wait = span(inner.scheduling.lock_wait);
    let why = match inner.targets.plan(run.plan().request(), at).await {
        Ok(plan) if plan.is_empty() => {
            let notes = plan.notes().join("; ");
            let error = format!(
                "at its booked time there was nothing to do ({notes}); nothing was changed"
            );
            drive::finish(inner, run.id, move |_| Outcome::Failed {
                error: error.clone(),
            })
            .await?;
            return Ok(Arrival::Settled);
        }
        Ok(plan) => match replan(inner, run.id, plan, now).await {
            Ok(()) => return Ok(Arrival::Settled),
            Err(UpdateError::Store(StoreError::Locked { target, holder })) => {
                format!("{target} was busy with run {holder}")
            }
            Err(UpdateError::Store(error)) => return Err(error),
            Err(UpdateError::Refused(never)) => match never {},
        },
        Err(EngineError::Refused(refusal)) => refusal.to_string(),
        Err(EngineError::Store(error)) => return Err(error),
    };
    if now < at + lock_wait {
        tracing::info!(%why, "booked time reached; looking again");
        return Ok(Arrival::LookAgain);
    }
    let error = format!(
        "{why} from its booked time {} until {}; nothing was done: book it again",
        opsbot_commands::render::utc(at),
        opsbot_commands::render::utc(now)
    );
    drive::finish(inner, run.id, move |_| Outcome::Failed {
        error: error.clone(),
    })
    .await?;
    Ok(Arrival::Settled)
}

/// The transition at the booked time, applied only while the run still waits for it (a
/// cancel that landed first stands).
async fn replan(
    inner: &Inner,
    id: RunId,
    plan: Plan,
    now: OffsetDateTime,
) -> Result<(), UpdateError<std::convert::Infallible>> {
    let approval_ttl = span(inner.config.approval_ttl);
    let plan = Arc::new(plan);
    let updated = inner.writes.update_run(id, None, move |run| {
        if run.state != RunState::Booked {
            return Ok(vec![]);
        }
        if let Some(booking) = &mut run.booking {
            booking.reached = Some(now);
        }
        let changed = plan.digest() != run.digest;
        if changed {
            run.replan(Arc::clone(&plan));
        }
        run.state = if changed && plan.asks_before_start() {
            RunState::AwaitingApproval {
                expires_at: now + approval_ttl,
            }
        } else {
            RunState::Running
        };
        Ok(vec![AuditKind::BookedTimeReached {
            digest: run.digest.as_str().to_owned(),
            changed,
        }])
    });
    let run = updated.await?;
    tracing::info!(state = run.state.label(), "booked time reached");
    inner.progress.changed(&run);
    Ok(())
}

#[cfg(test)]
mod tests;
