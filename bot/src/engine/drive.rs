//! One run's task: load the run, decide what comes next, do it, record it; until it finishes.

use std::sync::Arc;

use opsbot_commands::approval;
use opsbot_commands::audit::AuditKind;
use opsbot_commands::cluster::Observation;
use opsbot_commands::name::RunId;
use opsbot_commands::render;
use opsbot_commands::request::ProcedureRequest;
use opsbot_commands::run::{Outcome, Run, RunState, StepState};
use time::OffsetDateTime;
use tracing::Instrument;

use super::booked;
use super::step::{self, StepOutcome};
use super::{Busy, Inner, store_only};
use crate::clock::span;

/// What the loop does next with a run, decided from its stored record alone.
enum Next {
    Finished,
    Cancel,
    AwaitApproval { expires_at: OffsetDateTime },
    AwaitTime,
    AwaitOperator,
    Step { index: usize, resumed: bool },
    Succeed,
}

fn next(run: &Run) -> Next {
    if run.state.is_finished() {
        return Next::Finished;
    }
    if run.cancel.is_some() {
        return Next::Cancel;
    }
    match run.state {
        RunState::AwaitingApproval { expires_at } => return Next::AwaitApproval { expires_at },
        RunState::Booked => return Next::AwaitTime,
        _ => {}
    }
    match run.cursor() {
        None => Next::Succeed,
        Some(index) => match &run.steps()[index] {
            StepState::AwaitingOperator { .. } => Next::AwaitOperator,
            StepState::Started { .. } => Next::Step {
                index,
                resumed: true,
            },
            StepState::Pending | StepState::Failed { .. } | StepState::Done { .. } => Next::Step {
                index,
                resumed: false,
            },
        },
    }
}

/// True when the run can go on without a person: its task is executing it, or is about to
/// (woken by an approval or a confirmation a moment ago).
pub(super) fn can_go_on(run: &Run) -> bool {
    !matches!(
        next(run),
        Next::Finished | Next::AwaitApproval { .. } | Next::AwaitTime | Next::AwaitOperator
    )
}

/// How often a run task that the store failed for a passing reason (see
/// `opsbot_state::StoreError::is_passing`) looks whether the store answers again, so that it
/// goes on within this of the store's return, whatever the outage lasted.
const STORE_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// The longest it waits before it tries its run again all the same.
const STORE_RETRY: std::time::Duration = std::time::Duration::from_secs(5);

pub(super) async fn drive(inner: Arc<Inner>, id: RunId, busy: Busy) {
    let procedure = match inner.store.run(id) {
        Ok(Some(run)) => run.plan().request().to_string(),
        _ => String::new(),
    };
    let span = tracing::info_span!("run", run = %id, %procedure);
    async move {
        let mut busy = Some(busy);
        loop {
            match drive_inner(&inner, id, &mut busy).await {
                Ok(()) => break,
                // The database did not answer, or this instance is not sure it may act: the run
                // is where its last write left it, so the task takes it up from there later, as
                // a restart would (not busy meanwhile: nothing moves).
                Err(error) if error.is_passing() => {
                    tracing::warn!(%error, "run task waits for the store");
                    park(&inner, &mut busy, store_back(&inner)).await;
                }
                Err(error) => {
                    tracing::error!(%error, "run task stopped on a store error; it resumes at the next start");
                    break;
                }
            }
        }
        inner.forget(id);
    }
    .instrument(span)
    .await;
}

async fn drive_inner(
    inner: &Inner,
    id: RunId,
    busy: &mut Option<Busy>,
) -> Result<(), opsbot_state::StoreError> {
    let waker = inner.waker(id);
    // Publish once on (re)start: after a restart this re-attaches to the run's message.
    if let Some(run) = inner.store.run(id)? {
        inner.progress.changed(&run);
    }
    loop {
        let Some(run) = inner.store.run(id)? else {
            return Ok(());
        };
        match next(&run) {
            Next::Finished => return Ok(()),
            Next::Cancel => {
                clean_up(inner, id, None, &waker).await?;
                let seen = seen(inner, &run).await;
                finish(inner, id, move |run| Outcome::Cancelled {
                    by: run
                        .cancel
                        .as_ref()
                        .map_or_else(|| run.requester.clone(), |c| c.by.clone()),
                    note: render::aftermath(run, seen.as_ref()),
                })
                .await?;
            }
            Next::AwaitApproval { expires_at } => {
                let now = inner.clock.now();
                if now >= expires_at {
                    expire(inner, id, now).await?;
                    continue;
                }
                park(inner, busy, async {
                    let _ = inner.clock.timeout_at(expires_at, waker.notified()).await;
                })
                .await;
            }
            Next::AwaitTime => {
                let now = inner.clock.now();
                let until = match booked::wait(inner, &run, now) {
                    booked::Wait::Until(wake) => wake,
                    booked::Wait::Due => match booked::arrive(inner, &run).await? {
                        booked::Arrival::Settled => continue,
                        booked::Arrival::LookAgain => now + booked::LOOK_AGAIN,
                    },
                };
                // The clock sleeps in naps: its wall time may be stepped while a booked run
                // waits for days.
                park(inner, busy, async {
                    let _ = inner.clock.timeout_at(until, waker.notified()).await;
                })
                .await;
            }
            Next::AwaitOperator => park(inner, busy, waker.notified()).await,
            Next::Succeed => {
                finish(inner, id, |_| Outcome::Succeeded).await?;
            }
            Next::Step { index, resumed } => {
                let action = render::step_label_at(run.plan(), index);
                let span = tracing::info_span!("step", step = index + 1, %action);
                let outcome = step::execute(inner, &run, index, resumed, &waker)
                    .instrument(span)
                    .await?;
                let mut ended = OnFailure::EndRun { seen: None };
                if outcome.failure().is_some() {
                    clean_up(inner, id, Some(index), &waker).await?;
                    ended = OnFailure::EndRun {
                        seen: seen(inner, &run).await,
                    };
                }
                record(inner, id, index, outcome, ended).await?;
            }
        }
    }
}

/// Waits for a person (an approver, an operator's manual step) without counting as busy, so
/// that the console's end of input does not wait for them.
/// Resolves once this instance may act and its store answers a read, or after
/// [`STORE_RETRY`].
async fn store_back(inner: &Inner) {
    let deadline = inner.clock.instant() + STORE_RETRY;
    loop {
        inner.clock.sleep(STORE_POLL).await;
        if inner.clock.instant() >= deadline {
            return;
        }
        // Not acting: the lease keeper sees to that; a read would not help.
        if inner.tenure.check().is_err() {
            continue;
        }
        let store = inner.store.clone();
        // The read blocks while the database hangs: off the async threads.
        let answered = tokio::task::spawn_blocking(move || store.maintenance_notice().is_ok());
        if answered.await.unwrap_or(false) {
            return;
        }
    }
}

async fn park(inner: &Inner, busy: &mut Option<Busy>, until: impl Future<Output = ()>) {
    busy.take();
    until.await;
    *busy = Some(Busy::new(&inner.busy));
}

/// Runs the steps that undo what must not outlive the run (a node's allocation exclusion)
/// before a cancel or a failure ends it; `failed` is the step that failed, not run again. Their
/// outcomes are recorded, so the aftermath says what was undone and what is still in place.
async fn clean_up(
    inner: &Inner,
    id: RunId,
    failed: Option<usize>,
    waker: &tokio::sync::Notify,
) -> Result<(), opsbot_state::StoreError> {
    let Some(run) = inner.store.run(id)? else {
        return Ok(());
    };
    for index in run.cleanup_steps() {
        if Some(index) == failed {
            continue;
        }
        let Some(run) = inner.store.run(id)? else {
            return Ok(());
        };
        // Started means a crash interrupted this very clean-up: settle it by observation.
        let resumed = matches!(run.steps()[index], StepState::Started { .. });
        let action = render::step_label_at(run.plan(), index);
        let span = tracing::info_span!("clean-up", step = index + 1, %action);
        let outcome = step::execute(inner, &run, index, resumed, waker)
            .instrument(span)
            .await?;
        record(inner, id, index, outcome, OnFailure::KeepRun).await?;
    }
    Ok(())
}

/// Whether a failed step ends the run (a step of the plan, with where the cluster's nodes stand
/// as it shows them) or not (a clean-up step, whose caller ends the run itself).
#[derive(Debug, Clone, PartialEq, Eq)]
enum OnFailure {
    EndRun { seen: Option<Observation> },
    KeepRun,
}

/// Where the nodes of a run stopping, starting or restarting a cluster stand as the cluster
/// shows them, for what such a run reports when it stops early; `None` for other runs (whose
/// report does not name the nodes, so they ask nothing of a cluster that may be down), and
/// when the cluster does not answer.
async fn seen(inner: &Inner, run: &Run) -> Option<Observation> {
    let (ProcedureRequest::ClusterStop { cluster }
    | ProcedureRequest::ClusterStart { cluster }
    | ProcedureRequest::ClusterRestart { cluster }) = run.plan().request()
    else {
        return None;
    };
    let cluster = inner.targets.clusters.get(cluster).ok()?;
    super::wait::nodes_now(cluster).await
}

/// Writes a step's outcome; a failure of a plan step also ends the run, saying what is left in
/// place.
async fn record(
    inner: &Inner,
    id: RunId,
    index: usize,
    outcome: StepOutcome,
    on_failure: OnFailure,
) -> Result<(), opsbot_state::StoreError> {
    let now = inner.clock.now();
    let approval_ttl = span(inner.config.approval_ttl);
    let failure = outcome.failure().map(str::to_owned);
    let updated = inner.writes.update_run(id, None, move |run| {
        Ok::<_, std::convert::Infallible>(match &outcome {
            StepOutcome::Done(note)
            | StepOutcome::Deleted { note, .. }
            | StepOutcome::Captured { note, .. } => {
                run.steps_mut()[index] = StepState::Done {
                    at: now,
                    note: note.clone(),
                    deleted: match &outcome {
                        StepOutcome::Deleted { deleted, .. } => Some(*deleted),
                        _ => None,
                    },
                };
                if let StepOutcome::Captured { values, .. } = &outcome {
                    run.captured.extend(values.clone());
                }
                vec![AuditKind::StepDone {
                    step: index,
                    note: note.clone(),
                }]
            }
            StepOutcome::AwaitApproval => {
                run.state = RunState::AwaitingApproval {
                    expires_at: now + approval_ttl,
                };
                vec![]
            }
            StepOutcome::AskOperator(prompt) => {
                run.steps_mut()[index] = StepState::AwaitingOperator {
                    since: now,
                    prompt: format!("{prompt}, then type /run done id:{}", run.id),
                };
                vec![]
            }
            StepOutcome::Cancelled => vec![],
            // A step a cancel interrupted fails like a clean-up step: the cancel ends the run.
            StepOutcome::Interrupted(error)
            | StepOutcome::Failed(error)
            | StepOutcome::Refused(error) => {
                run.steps_mut()[index] = StepState::Failed {
                    at: now,
                    error: error.clone(),
                    unchanged: matches!(outcome, StepOutcome::Refused(_)),
                };
                let failed = AuditKind::StepFailed {
                    step: index,
                    error: error.clone(),
                };
                let (StepOutcome::Failed(_) | StepOutcome::Refused(_), OnFailure::EndRun { seen }) =
                    (&outcome, &on_failure)
                else {
                    return Ok(vec![failed]);
                };
                let outcome = Outcome::Failed {
                    error: format!("{error}\n{}", render::aftermath(run, seen.as_ref())),
                };
                let label = outcome.label().to_owned();
                run.finish(outcome, now);
                vec![failed, AuditKind::RunFinished { state: label }]
            }
        })
    });
    let run = updated.await.map_err(store_only)?;
    if let Some(error) = failure {
        tracing::warn!(%error, "run failed");
    }
    inner.progress.changed(&run);
    Ok(())
}

/// Expires a run nobody approved in time: one compare-and-swap that applies only while the
/// request is still open, so an approval, rejection or cancel that landed first stands.
pub(super) async fn expire(
    inner: &Inner,
    id: RunId,
    now: OffsetDateTime,
) -> Result<(), opsbot_state::StoreError> {
    let updated = inner.writes.update_run(id, None, move |run| {
        if !approval::expired(run, now) {
            return Ok::<_, std::convert::Infallible>(vec![]);
        }
        run.finish(Outcome::Expired, now);
        Ok(vec![AuditKind::RunFinished {
            state: run.state.label().to_owned(),
        }])
    });
    let run = updated.await.map_err(store_only)?;
    if run.outcome() == Some(&Outcome::Expired) {
        tracing::info!("run expired: nobody approved in time");
    }
    inner.progress.changed(&run);
    Ok(())
}

/// Ends the run with the outcome `outcome` gives, unless it already ended.
pub(super) async fn finish(
    inner: &Inner,
    id: RunId,
    outcome: impl Fn(&Run) -> Outcome + Send + 'static,
) -> Result<(), opsbot_state::StoreError> {
    let now = inner.clock.now();
    let updated = inner.writes.update_run(id, None, move |run| {
        if run.state.is_finished() {
            return Ok::<_, std::convert::Infallible>(vec![]);
        }
        let outcome = outcome(run);
        let label = outcome.label().to_owned();
        run.finish(outcome, now);
        Ok(vec![AuditKind::RunFinished { state: label }])
    });
    let run = updated.await.map_err(store_only)?;
    tracing::info!(state = run.state.label(), "run finished");
    inner.progress.changed(&run);
    Ok(())
}
