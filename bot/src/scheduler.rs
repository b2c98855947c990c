//! The scheduler: one task per configured schedule, each going by the engine's clock. A task
//! reads its schedule's last recorded fire from the store, sleeps until the next cron time
//! after it, and fires; the store records each fire once (with its run, in one transaction), so
//! a bot killed at any instant neither skips nor doubles a fire. A fire found late at start-up
//! runs once if it is within `[scheduling] lateness`, and is reported as missed otherwise.

use std::time::Duration;

use opsbot_commands::maintenance::Announcement;
use opsbot_commands::schedule::{FireOutcome, Schedule};
use time::OffsetDateTime;
use tokio::task::JoinHandle;

use crate::clock::span;
use crate::engine::Engine;
use crate::refusal::{EngineError, Refusal};

/// How often a fire whose target is busy looks again, until `[scheduling] lock_wait`, besides
/// each time one of this bot's runs finishes.
const BUSY_LOOK: Duration = Duration::from_secs(30);
/// How long a task waits after a store failure before it looks again.
const AFTER_FAILURE: Duration = Duration::from_secs(60);
/// Most missed fires counted in one report (a minutely schedule down for a year).
const MOST_MISSED: usize = 100_000;

/// Voids the standing approvals the config no longer matches (saying so), then starts one task
/// per schedule. The tasks end when aborted.
pub async fn spawn(engine: &Engine) -> Result<Vec<JoinHandle<()>>, EngineError> {
    for voided in engine.void_changed_standing().await? {
        let text = format!(
            "⏰ standing approval {} of schedule {} is void: the schedule's command or bounds \
             changed in the config; its runs wait for an approval until /schedule approve \
             name:{} is approved again",
            voided.id, voided.schedule, voided.schedule
        );
        tracing::warn!(standing = %voided.id, schedule = %voided.schedule, "standing approval voided");
        announce(
            engine,
            &voided.schedule,
            &format!("void/{}", voided.id),
            text,
        );
    }
    let now = engine.clock().now();
    for schedule in engine.schedules().iter() {
        for change in schedule.cron.clock_changes(now) {
            tracing::warn!(schedule = %schedule.name, "a clock change moves a fire: {change}");
        }
    }
    Ok(engine
        .schedules()
        .iter()
        .cloned()
        .map(|schedule| tokio::spawn(keep(engine.clone(), schedule)))
        .collect())
}

async fn keep(engine: Engine, schedule: Schedule) {
    let clock = engine.clock();
    loop {
        let next = match look(&engine, &schedule).await {
            Ok(next) => next,
            Err(error) => {
                tracing::error!(schedule = %schedule.name, %error, "schedule could not fire");
                clock.now() + AFTER_FAILURE
            }
        };
        clock.sleep_until(next).await;
    }
}

/// One look at a schedule: fires what is due, and returns when to look next.
async fn look(engine: &Engine, schedule: &Schedule) -> Result<OffsetDateTime, EngineError> {
    let clock = engine.clock();
    let now = clock.now();
    let Some(last) = engine.store().last_fire(&schedule.name)? else {
        // The first look ever: only fires from now on count.
        engine.record(schedule, now, FireOutcome::Armed).await?;
        return Ok(now);
    };
    let Some(due) = schedule.cron.next_after(last.at) else {
        return Ok(now + time::Duration::days(1));
    };
    if due > now {
        return Ok(due);
    }
    let lateness = span(engine.scheduling().lateness);
    if now - due > lateness {
        // Only the fires older than the lateness are missed: a later one (the bot came back
        // half an hour after today's fire, down since yesterday's) runs at the next look.
        let missed: Vec<_> = schedule
            .cron
            .fires_after(last.at)
            .take_while(|at| now - *at > lateness)
            .take(MOST_MISSED)
            .collect();
        let latest = missed.last().copied().unwrap_or(due);
        if engine
            .record(schedule, latest, FireOutcome::Missed)
            .await?
            .is_some()
        {
            let text = format!(
                "⏰ schedule {} missed {} fire(s), from {} to {}: opsbot was down longer than \
                 [scheduling] lateness; nothing was run for them",
                schedule.name,
                missed.len(),
                schedule.cron.local(due),
                schedule.cron.local(latest)
            );
            announce(engine, &schedule.name, &format!("missed/{latest}"), text);
        }
        return Ok(now);
    }
    fire(engine, schedule, due).await?;
    Ok(clock.now())
}

/// Fires `due`, waiting (bounded) while the target is busy with another run, and trying again
/// while it does not answer, until the fire is `[scheduling] lateness` old.
async fn fire(
    engine: &Engine,
    schedule: &Schedule,
    due: OffsetDateTime,
) -> Result<(), EngineError> {
    let clock = engine.clock();
    let lock_wait = span(engine.scheduling().lock_wait);
    let give_up = clock.now() + lock_wait;
    let lateness = span(engine.scheduling().lateness);
    let target = schedule.request.target();
    let mut released = engine.writes().released();
    loop {
        // Marked seen before the look: a run that finishes after it wakes the wait below.
        released.borrow_and_update();
        let holder = engine.store().lock_holder(&target)?;
        let outcome = match holder {
            Some(holder) if clock.now() >= give_up => {
                engine
                    .record(schedule, due, FireOutcome::Busy { holder })
                    .await?
            }
            Some(_) => {
                // Woken when a run of this bot finishes; looked at anyway every BUSY_LOOK, for
                // a run another instance on the same store finished.
                tokio::select! {
                    () = clock.sleep_until(clock.now() + BUSY_LOOK) => {}
                    _ = released.changed() => {}
                }
                continue;
            }
            None => match engine.fire(schedule, due).await {
                Err(EngineError::Refused(Refusal::Busy { .. })) => continue,
                // The target did not answer: looked at again while the fire may still run.
                Err(EngineError::Refused(refusal @ Refusal::Backend(_))) => {
                    if clock.now() < due + lateness {
                        tracing::warn!(schedule = %schedule.name, error = %refusal, "the schedule's target did not answer; trying again");
                        clock.sleep_until(clock.now() + BUSY_LOOK).await;
                        continue;
                    }
                    let error = format!(
                        "{refusal} (tried until {}, [scheduling] lateness after the fire)",
                        schedule.cron.local(clock.now())
                    );
                    engine
                        .record(schedule, due, FireOutcome::Failed { error })
                        .await?
                }
                other => other?,
            },
        };
        if let Some(outcome) = outcome {
            tracing::info!(schedule = %schedule.name, outcome = outcome.describe(), "schedule fired");
            if outcome.is_news() {
                let text = format!(
                    "⏰ schedule {} ({}): {}",
                    schedule.name,
                    schedule.cron.local(due),
                    outcome.describe()
                );
                announce(engine, &schedule.name, &format!("fire/{due}"), text);
            }
        }
        return Ok(());
    }
}

/// Tells the operators, once (the key is remembered across restarts).
fn announce(
    engine: &Engine,
    schedule: &opsbot_commands::schedule::ScheduleName,
    key: &str,
    text: String,
) {
    let channel = engine
        .schedule(schedule)
        .map(|s| s.channel.clone())
        .unwrap_or_else(|_| opsbot_commands::run::ChannelId::console());
    engine.progress().announce(
        Announcement::named(&format!("schedule/{schedule}/{key}"), text),
        channel,
    );
}

#[cfg(test)]
mod tests;
