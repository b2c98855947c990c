//! `/schedule list`, `/schedule show` and the replies of `/schedule approve`.

use std::fmt::Write as _;

use time::OffsetDateTime;

use super::utc;
use crate::schedule::{FireRecord, Pause, Schedule, StandingApproval, StandingState};

/// What the store knows of one schedule.
#[derive(Debug, Clone, Default)]
pub struct ScheduleState {
    pub last: Option<FireRecord>,
    pub pause: Option<Pause>,
    pub standing: Option<StandingApproval>,
}

/// How many next fires `/schedule show` lists.
const NEXT_SHOWN: usize = 3;

fn unattended(schedule: &Schedule, state: &ScheduleState) -> String {
    if schedule.bounds.is_none() {
        return "every destructive run waits for an approval".to_owned();
    }
    match &state.standing {
        Some(standing) => format!("{} {}", standing.id, standing.what()),
        None => "no standing approval: its destructive runs wait for an approval".to_owned(),
    }
}

/// When it fires next, from after its last recorded fire (or now).
fn next(schedule: &Schedule, state: &ScheduleState, now: OffsetDateTime) -> Vec<OffsetDateTime> {
    let from = state.last.as_ref().map_or(now, |last| last.at.max(now));
    schedule.cron.fires_after(from).take(NEXT_SHOWN).collect()
}

/// `/schedule list`.
pub fn schedule_list(schedules: &[(&Schedule, ScheduleState)], now: OffsetDateTime) -> String {
    if schedules.is_empty() {
        return "no schedules; they are configured as [[schedules]] in the config".to_owned();
    }
    let mut text = String::new();
    for (schedule, state) in schedules {
        let when = match (&state.pause, next(schedule, state, now).first()) {
            (Some(pause), _) => format!("paused by {} at {}", pause.by.name, utc(pause.at)),
            (None, Some(at)) => format!("next {}", schedule.cron.local(*at)),
            (None, None) => "never fires again".to_owned(),
        };
        let _ = writeln!(
            text,
            "{} · {} · `{}` · {when} · {}",
            schedule.name,
            schedule.cron,
            schedule.request,
            unattended(schedule, state)
        );
    }
    text.trim_end().to_owned()
}

/// `/schedule show`.
pub fn schedule_show(schedule: &Schedule, state: &ScheduleState, now: OffsetDateTime) -> String {
    let mut text = format!(
        "schedule {} · {} · reports to {}\ncommand: `{}`\ndigest: {}\n",
        schedule.name,
        schedule.cron,
        schedule.channel.0,
        schedule.request,
        schedule.digest().short()
    );
    if let Some(bounds) = &schedule.bounds {
        let _ = writeln!(text, "bounds: {bounds}");
    }
    let _ = writeln!(text, "unattended: {}", unattended(schedule, state));
    if let Some(pause) = &state.pause {
        let _ = writeln!(text, "paused by {} at {}", pause.by.name, utc(pause.at));
    }
    if let Some(last) = &state.last {
        let _ = writeln!(
            text,
            "last: {} · {}",
            schedule.cron.local(last.at),
            last.outcome.describe()
        );
    }
    let next: Vec<String> = next(schedule, state, now)
        .into_iter()
        .map(|at| schedule.cron.local(at))
        .collect();
    let _ = write!(
        text,
        "next: {}",
        if next.is_empty() {
            "never".to_owned()
        } else {
            next.join(", ")
        }
    );
    text
}

/// The reply to asking for a standing approval: what a second person approves, and how.
pub fn standing_asked(standing: &StandingApproval, created: bool) -> String {
    let head = if created {
        format!(
            "{} asked: a standing approval of schedule {}",
            standing.id, standing.schedule
        )
    } else {
        format!("{} {}", standing.id, standing.what())
    };
    let mut text = format!(
        "{head}\ncommand: `{}`\nbounds: {}\ndigest: {}",
        standing.command,
        standing.bounds,
        standing.digest.short()
    );
    if let StandingState::Asked { .. } = standing.state {
        let _ = write!(
            text,
            "\nan approver other than {}: /schedule approve name:{} digest:{} until:<date>",
            standing.asked_by.name,
            standing.schedule,
            standing.digest.short()
        );
    }
    text
}
