//! Booked runs: a procedure planned and approved now, to start at a time chosen ahead
//! (`/cluster restart cluster:logs at:2026-11-28T02:00Z`). The run waits in the store, announced
//! ahead and reminded of; at its time it is planned again, and a plan that changed since it was
//! approved waits for a fresh approval instead of running.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::maintenance::Announcement;
use crate::name::NameError;
use crate::render;
use crate::run::Run;

/// When a booked run starts, and when its task reached that time and planned it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Booking {
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    /// Set once, by the transition that re-plans the run at its time: from then on the run is
    /// an ordinary one (it holds its target's lock, a fresh approval lets it run).
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub reached: Option<OffsetDateTime>,
}

impl Booking {
    pub fn new(at: OffsetDateTime) -> Self {
        Self { at, reached: None }
    }

    /// True until the booked time is reached.
    pub fn is_ahead(&self) -> bool {
        self.reached.is_none()
    }
}

/// Why a booked time is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BookingRefusal {
    #[error(
        "{at} is not ahead (it is {now} now); give a time to come, or leave at: out to run now"
    )]
    Past { at: String, now: String },
    #[error(
        "{at} is more than {days} days ahead, the furthest a run may be booked; book it closer \
         to the time"
    )]
    BeyondHorizon { at: String, days: u64 },
}

/// A booked time as typed: an RFC 3339 time with its offset; the seconds may be left out
/// (`2026-11-28T02:00Z`, `2026-11-28T03:00+01:00`). A time without an offset is refused: the
/// bot, the operator and the cluster may each be in another zone.
pub fn parse_at(value: &str) -> Result<OffsetDateTime, NameError> {
    let value = value.trim();
    let not_time = || NameError::NotTime {
        value: crate::echo::visible(value, 40),
    };
    let timestamp: jiff::Timestamp = value.parse().map_err(|_| not_time())?;
    OffsetDateTime::from_unix_timestamp_nanos(timestamp.as_nanosecond()).map_err(|_| not_time())
}

/// Checks a booked time against now and the furthest a run may be booked.
pub fn check(
    at: OffsetDateTime,
    now: OffsetDateTime,
    horizon: Duration,
) -> Result<(), BookingRefusal> {
    if at <= now {
        return Err(BookingRefusal::Past {
            at: render::utc(at),
            now: render::utc(now),
        });
    }
    let horizon = time::Duration::try_from(horizon).unwrap_or(time::Duration::MAX);
    if at - now > horizon {
        return Err(BookingRefusal::BeyondHorizon {
            at: render::utc(at),
            days: horizon.whole_days().unsigned_abs(),
        });
    }
    Ok(())
}

/// The reminder due for a run waiting for its time: the latest of `leads` (e.g. 24 h and 1 h
/// before) whose moment has passed, among those that came after the booking was made (a run
/// booked 10 h ahead gets no "24 h" reminder). `None` when none is due or the time is reached.
pub fn reminder_due(run: &Run, leads: &[Duration], now: OffsetDateTime) -> Option<Announcement> {
    let booking = run.booking.filter(Booking::is_ahead)?;
    if now >= booking.at {
        return None;
    }
    let lead = reminders(run, booking, leads)
        .filter(|(_, moment)| *moment <= now)
        .min_by_key(|(lead, _)| *lead)?
        .0;
    Some(Announcement {
        key: format!(
            "m{}r{}-{}",
            run.id.get(),
            lead.as_secs() / 60,
            stamp(booking)
        ),
        run: Some(run.id),
        text: format!(
            "⏰ in {}: {} ({}), booked by {} for {}",
            render::duration(booking.at - now),
            run.plan().request(),
            run.id,
            run.requester.name,
            render::utc(booking.at)
        ),
    })
}

/// When the run's task must next wake for its booking: the next reminder, or the time itself.
pub fn next_wake(run: &Run, leads: &[Duration], now: OffsetDateTime) -> Option<OffsetDateTime> {
    let booking = run.booking.filter(Booking::is_ahead)?;
    reminders(run, booking, leads)
        .map(|(_, moment)| moment)
        .filter(|moment| *moment > now)
        .chain([booking.at])
        .min()
}

/// Each lead with its moment, for the leads whose moment comes after the booking was made.
fn reminders<'a>(
    run: &'a Run,
    booking: Booking,
    leads: &'a [Duration],
) -> impl Iterator<Item = (Duration, OffsetDateTime)> + 'a {
    leads.iter().filter_map(move |lead| {
        let moment = booking.at - time::Duration::try_from(*lead).ok()?;
        (moment > run.created_at).then_some((*lead, moment))
    })
}

/// Part of an announcement's key: the booked time, so that a key names one booking for good.
pub(crate) fn stamp(booking: Booking) -> i64 {
    booking.at.unix_timestamp() / 60
}

#[cfg(test)]
mod tests;
