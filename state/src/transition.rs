//! What every backend writes the same way, decided before any backend touches its storage: a
//! run's record and plan encoded and checked, the rule of what a transition may change, the
//! audit events stamped, the run-log cap. Kept out of the backends so that sled and PostgreSQL
//! cannot drift apart on what a store accepts.

use std::sync::Arc;

use opsbot_commands::audit::{AuditEvent, AuditKind};
use opsbot_commands::name::RunId;
use opsbot_commands::people::Speaker;
use opsbot_commands::run::Run;
use opsbot_commands::schedule::{FireOutcome, FireRecord, ScheduleName, StandingApproval};
use serde::Serialize;
use time::OffsetDateTime;

use crate::codec;
use crate::error::{StoreError, UpdateError};
use crate::record::RunRecord;

/// The most bytes of lines one run's log holds: a few tracer outputs at their default bound.
/// Past it, a run's log would only grow the store, not help anyone read it.
pub const RUN_LOG_CAP: u64 = 16 << 20;

/// Encodes a value in its versioned envelope (see `codec`); `what` names it in the error.
pub(crate) fn encode<T: Serialize>(what: &str, value: &T) -> Result<Vec<u8>, StoreError> {
    codec::encode(value).map_err(|error| StoreError::Unencodable {
        what: what.to_owned(),
        detail: error.to_string(),
    })
}

/// Encodes the record of a run about to be written (its plan apart, see `record`); a run that
/// breaks [`Run::inconsistency`] is never written, so a store never holds a record it would
/// refuse to read.
pub(crate) fn encode_run(run: &Run) -> Result<Vec<u8>, StoreError> {
    let what = format!("run {}", run.id);
    if let Some(wrong) = run.inconsistency() {
        return Err(StoreError::Unencodable {
            what,
            detail: wrong,
        });
    }
    encode(&what, &RunRecord::of(run))
}

/// A run about to be created, encoded, with the audit events of its creation.
pub(crate) struct Creation {
    pub(crate) run: Run,
    pub(crate) record: Vec<u8>,
    pub(crate) plan: Vec<u8>,
    /// The fire it is the run of, encoded, with its audit event.
    pub(crate) fire: Option<Fire>,
    pub(crate) requested: AuditEvent,
}

/// A schedule's fire to record.
pub(crate) struct Fire {
    pub(crate) schedule: ScheduleName,
    pub(crate) at: OffsetDateTime,
    pub(crate) record: Vec<u8>,
    pub(crate) event: AuditEvent,
}

/// Builds the run `create_run` writes under `id` (whatever id `build` gave it), encoded.
pub(crate) fn creation(
    at: OffsetDateTime,
    id: RunId,
    build: impl FnOnce(RunId) -> Run,
    actor: Option<&Speaker>,
    fire: Option<(&ScheduleName, OffsetDateTime)>,
) -> Result<Creation, StoreError> {
    let mut run = build(id);
    run.id = id;
    let what = format!("run {id}");
    let record = encode_run(&run)?;
    let plan = encode(&format!("the plan of {what}"), run.plan())?;
    let requested = AuditEvent {
        at,
        run: Some(id),
        actor: actor.cloned(),
        event: AuditKind::RunRequested {
            command: run.plan().request().to_string(),
            digest: run.digest.as_str().to_owned(),
        },
    };
    // Why a fire's run waits for an approval goes into the fire's record and its audit entry.
    let waits = run.scheduled_wait();
    let fire = fire
        .map(|(schedule, fire_at)| {
            let fired = FireRecord {
                at: fire_at,
                outcome: FireOutcome::Started { run: id, waits },
            };
            Ok::<_, StoreError>(Fire {
                schedule: schedule.clone(),
                at: fire_at,
                record: encode("a schedule's fire", &fired)?,
                event: fired_event(at, schedule, &fired, Some(id)),
            })
        })
        .transpose()?;
    Ok(Creation {
        run,
        record,
        plan,
        fire,
        requested,
    })
}

/// What `update_run` writes for one application of its change.
pub(crate) struct Transition {
    pub(crate) after: Run,
    pub(crate) record: Vec<u8>,
    /// The new plan of a booked run that reached its time; `None`: the plan is unchanged.
    pub(crate) plan: Option<Vec<u8>>,
    /// Stamped with one time, the run and the actor.
    pub(crate) events: Vec<AuditEvent>,
}

/// Applies `change` to a copy of `before` (run `id`, as stored) and encodes what is to be
/// written: `Ok(Err(run))` when it alters nothing and audits nothing (nothing is written). A
/// run's plan is what was approved: a change that replaces it is refused, except once for a
/// booked run reaching its time. The id is the key: a change cannot move a run to another.
pub(crate) fn transition<E>(
    at: OffsetDateTime,
    id: RunId,
    before: &Run,
    actor: Option<&Speaker>,
    change: &mut impl FnMut(&mut Run) -> Result<Vec<AuditKind>, E>,
) -> Result<Result<Transition, Run>, UpdateError<E>> {
    let mut after = before.clone();
    let kinds = change(&mut after).map_err(UpdateError::Refused)?;
    after.id = id;
    let replanned =
        !Arc::ptr_eq(after.shared_plan(), before.shared_plan()) && after.plan() != before.plan();
    let reaches_its_time = before.is_ahead() && !after.is_ahead();
    if replanned && !reaches_its_time {
        return Err(StoreError::Unencodable {
            what: format!("run {id}"),
            detail: "its plan changed; a run's plan is what was approved and never changes (a \
                     booked run's once, at its time)"
                .to_owned(),
        }
        .into());
    }
    if after == *before && kinds.is_empty() {
        return Ok(Err(after));
    }
    let plan = replanned
        .then(|| encode(&format!("the new plan of run {id}"), after.plan()))
        .transpose()?;
    let record = encode_run(&after)?;
    let events = kinds
        .into_iter()
        .map(|event| AuditEvent {
            at,
            run: Some(id),
            actor: actor.cloned(),
            event,
        })
        .collect();
    Ok(Ok(Transition {
        after,
        record,
        plan,
        events,
    }))
}

/// The audit event of a fire, for the transaction that records it.
pub(crate) fn fired_event(
    at: OffsetDateTime,
    schedule: &ScheduleName,
    record: &FireRecord,
    run: Option<RunId>,
) -> AuditEvent {
    AuditEvent {
        at,
        run,
        actor: Some(Speaker::from(&schedule.as_requester())),
        event: AuditKind::ScheduleFired {
            schedule: schedule.to_string(),
            fire_at: opsbot_commands::render::utc(record.at),
            outcome: record.outcome.describe(),
        },
    }
}

/// Whether a fire is audited: all but the scheduler's first look.
pub(crate) fn fire_is_audited(record: &FireRecord) -> bool {
    !matches!(record.outcome, FireOutcome::Armed)
}

/// The audit event of a schedule paused (`true`) or resumed.
pub(crate) fn pause_event(
    at: OffsetDateTime,
    schedule: &ScheduleName,
    paused: bool,
    actor: &Speaker,
) -> AuditEvent {
    AuditEvent {
        at,
        run: None,
        actor: Some(actor.clone()),
        event: AuditKind::ScheduleChanged {
            schedule: schedule.to_string(),
            what: if paused { "paused" } else { "resumed" }.to_owned(),
        },
    }
}

/// The audit event of a standing approval's change, `what` in words.
pub(crate) fn standing_event(
    at: OffsetDateTime,
    standing: &StandingApproval,
    actor: &Speaker,
    what: String,
) -> AuditEvent {
    AuditEvent {
        at,
        run: None,
        actor: Some(actor.clone()),
        event: AuditKind::ScheduleChanged {
            schedule: standing.schedule.to_string(),
            what,
        },
    }
}

/// What a standing approval's creation says in the audit log.
pub(crate) fn standing_created(standing: &StandingApproval) -> String {
    format!(
        "asked for standing approval {} (digest {})",
        standing.id,
        standing.digest.short()
    )
}

/// The line that replaces the one that would take run `run`'s log past [`RUN_LOG_CAP`].
pub(crate) fn cap_note(run: RunId) -> String {
    format!(
        "── the run log reached its cap of {} MiB: later output of {run} is not kept",
        RUN_LOG_CAP >> 20
    )
}

/// The lines of `lines` (each with its length) a log holding `size` bytes keeps, the one that
/// passes the cap replaced by `note`, and the size after them: a run's log holds at most
/// [`RUN_LOG_CAP`] bytes of lines, and nothing is appended after the note.
pub(crate) fn capped<'a, T>(size: u64, lines: &'a [(u64, T)], note: &'a T) -> (Vec<&'a T>, u64) {
    let mut size = size;
    let mut kept = Vec::new();
    for (len, line) in lines {
        if size > RUN_LOG_CAP {
            break;
        }
        size = size.saturating_add(*len);
        kept.push(if size > RUN_LOG_CAP { note } else { line });
    }
    (kept, size)
}
