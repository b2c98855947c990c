//! When a schedule fires: a cron expression read in a time zone. Evaluation is croner's (POSIX
//! and Vixie cron semantics): a time that a spring-forward skips fires once at the first instant
//! after the gap, a time that a fall-back repeats fires once, at its first occurrence, and a
//! wildcard hour fires in both repeated hours, as cron does.

use std::fmt;
use std::str::FromStr;

use jiff::tz::TimeZone;
use time::OffsetDateTime;

/// A validated cron expression and its time zone.
#[derive(Clone)]
pub struct CronSchedule {
    expression: String,
    zone_name: String,
    zone: TimeZone,
    cron: croner::Cron,
}

impl fmt::Debug for CronSchedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CronSchedule({self})")
    }
}

impl fmt::Display for CronSchedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` ({})", self.expression, self.zone_name)
    }
}

impl PartialEq for CronSchedule {
    fn eq(&self, other: &Self) -> bool {
        self.expression == other.expression && self.zone_name == other.zone_name
    }
}

impl Eq for CronSchedule {}

/// Why a cron expression and time zone cannot schedule anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CronError {
    #[error(
        "`{expression}` is not a cron expression ({detail}); five fields: minute hour day-of-month month day-of-week, e.g. `0 2 * * *`"
    )]
    Syntax { expression: String, detail: String },
    #[error("unknown time zone `{zone}`; use an IANA name such as UTC or Europe/Berlin")]
    UnknownZone { zone: String },
    #[error("`{expression}` never fires (no such date); check the day and month fields")]
    Never { expression: String },
    #[error(
        "`{expression}` fires {every} apart at its closest, more often than the minimum interval \
         of {min} ([scheduling] min_interval)"
    )]
    TooOften {
        expression: String,
        every: String,
        min: String,
    },
}

/// How many upcoming fires are looked at to find the closest two: more than a year of a daily
/// schedule, so that a rare burst (the first of each month at 00:00 and 00:01) is found.
const LOOKAHEAD: usize = 400;

impl CronSchedule {
    /// Parses `expression` (five fields, no seconds) in the IANA time zone `zone`.
    pub fn parse(expression: &str, zone: &str) -> Result<Self, CronError> {
        let zone_name = zone.trim().to_owned();
        let tz = TimeZone::get(&zone_name).map_err(|_| CronError::UnknownZone {
            zone: crate::echo::visible(&zone_name, 64),
        })?;
        let cron = croner::Cron::from_str(expression).map_err(|e| CronError::Syntax {
            expression: crate::echo::visible(expression, 64),
            detail: e.to_string(),
        })?;
        Ok(Self {
            expression: expression.trim().to_owned(),
            zone_name,
            zone: tz,
            cron,
        })
    }

    /// The expression as written.
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// The time zone's IANA name.
    pub fn zone(&self) -> &str {
        &self.zone_name
    }

    /// The first fire strictly after `after`, `None` if it never fires again.
    pub fn next_after(&self, after: OffsetDateTime) -> Option<OffsetDateTime> {
        let start = self.zoned(after)?;
        let next = self.cron.find_next_occurrence(&start, false).ok()?;
        OffsetDateTime::from_unix_timestamp_nanos(next.timestamp().as_nanosecond()).ok()
    }

    /// The fires after `after`, in order.
    pub fn fires_after(&self, after: OffsetDateTime) -> impl Iterator<Item = OffsetDateTime> + '_ {
        std::iter::successors(self.next_after(after), |&at| self.next_after(at))
    }

    /// Checks that the schedule fires at all after `from`, and never closer together than
    /// `min` (over the next [`LOOKAHEAD`] fires).
    pub fn check(&self, from: OffsetDateTime, min: std::time::Duration) -> Result<(), CronError> {
        let fires: Vec<_> = self.fires_after(from).take(LOOKAHEAD).collect();
        if fires.is_empty() {
            return Err(CronError::Never {
                expression: self.expression.clone(),
            });
        }
        let closest = fires.windows(2).map(|pair| pair[1] - pair[0]).min();
        match closest {
            Some(gap) if gap < min => Err(CronError::TooOften {
                expression: self.expression.clone(),
                every: humantime::format_duration(gap.unsigned_abs()).to_string(),
                min: humantime::format_duration(min).to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// The fires of the year after `from` that a clock change moves or repeats, each in words
    /// with what opsbot does then (see the module's note): a time the spring-forward skips
    /// fires right after the gap; one the fall-back repeats fires once, or in both hours for a
    /// schedule that fires every hour.
    pub fn clock_changes(&self, from: OffsetDateTime) -> Vec<String> {
        let Ok(start) = jiff::Timestamp::from_nanosecond(from.unix_timestamp_nanos()) else {
            return Vec::new();
        };
        let Ok(end) = start.saturating_add(jiff::SignedDuration::from_hours(24 * 366)) else {
            return Vec::new();
        };
        self.zone
            .following(start)
            .take_while(|transition| transition.timestamp() < end)
            .filter_map(|transition| self.clock_change(transition.timestamp()))
            .collect()
    }

    /// What the clock change at `at` does to this schedule, if anything.
    fn clock_change(&self, at: jiff::Timestamp) -> Option<String> {
        let just_before = at.checked_sub(jiff::SignedDuration::from_nanos(1)).ok()?;
        let (before, after) = (self.zone.to_offset(just_before), self.zone.to_offset(at));
        // The wall-clock times that do not exist (forward) or happen twice (back).
        let (first, last, forward) = if after > before {
            (before.to_datetime(at), after.to_datetime(at), true)
        } else {
            (after.to_datetime(at), before.to_datetime(at), false)
        };
        let minutes = std::iter::successors(Some(first), |minute| {
            minute
                .checked_add(jiff::SignedDuration::from_mins(1))
                .ok()
                .filter(|next| *next < last)
        });
        let affected = minutes.into_iter().find(|minute| {
            minute
                .to_zoned(TimeZone::UTC)
                .is_ok_and(|wall| self.cron.is_time_matching(&wall).unwrap_or(false))
        })?;
        let wall = affected.strftime("%Y-%m-%d %H:%M");
        let zone = &self.zone_name;
        let to_time = |stamp: jiff::Timestamp| {
            OffsetDateTime::from_unix_timestamp_nanos(stamp.as_nanosecond()).ok()
        };
        if forward {
            let fires = self.next_after(to_time(just_before)?)?;
            return Some(format!(
                "{wall} does not exist in {zone} (clocks go forward): it fires at {} instead",
                self.local(fires)
            ));
        }
        let repeated = before.duration_since(after);
        let window_start = to_time(at.checked_sub(repeated).ok()?)?;
        let window_end = to_time(at.checked_add(repeated).ok()?)?;
        let fires: Vec<String> = self
            .fires_after(window_start - time::Duration::NANOSECOND)
            .take_while(|fire| *fire < window_end)
            .map(|fire| self.local(fire))
            .collect();
        Some(match fires.as_slice() {
            [once] => {
                format!("{wall} happens twice in {zone} (clocks go back): it fires once, at {once}")
            }
            many => format!(
                "{wall} happens twice in {zone} (clocks go back): it fires at {}",
                many.join(" and ")
            ),
        })
    }

    /// `at` as a wall-clock time of the schedule's zone, e.g. `2026-11-28 02:00 CET`.
    pub fn local(&self, at: OffsetDateTime) -> String {
        match self.zoned(at) {
            Some(zoned) => zoned.strftime("%Y-%m-%d %H:%M %Z").to_string(),
            None => crate::render::utc(at),
        }
    }

    fn zoned(&self, at: OffsetDateTime) -> Option<jiff::Zoned> {
        let stamp = jiff::Timestamp::from_nanosecond(at.unix_timestamp_nanos()).ok()?;
        Some(stamp.to_zoned(self.zone.clone()))
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    fn fires(expression: &str, zone: &str, after: OffsetDateTime, n: usize) -> Vec<String> {
        let cron = CronSchedule::parse(expression, zone).unwrap();
        cron.fires_after(after)
            .take(n)
            .map(|at| cron.local(at))
            .collect()
    }

    #[test]
    fn a_nightly_schedule_across_the_spring_forward_fires_once_right_after_the_gap() {
        // 2026-03-29 02:00 CET does not exist in Berlin: clocks go from 02:00 to 03:00 CEST.
        assert_eq!(
            fires(
                "30 2 * * *",
                "Europe/Berlin",
                datetime!(2026-03-27 12:00 UTC),
                4
            ),
            [
                "2026-03-28 02:30 CET",
                "2026-03-29 03:00 CEST",
                "2026-03-30 02:30 CEST",
                "2026-03-31 02:30 CEST"
            ]
        );
    }

    /// Said at start-up: which fires of the coming year a clock change moves, and to when.
    #[test]
    fn the_clock_changes_a_schedule_meets_are_named_with_what_happens() {
        let nightly = CronSchedule::parse("30 2 * * *", "Europe/Berlin").unwrap();
        assert_eq!(
            nightly.clock_changes(datetime!(2026-01-01 00:00 UTC)),
            [
                "2026-03-29 02:30 does not exist in Europe/Berlin (clocks go forward): it fires \
                 at 2026-03-29 03:00 CEST instead",
                "2026-10-25 02:30 happens twice in Europe/Berlin (clocks go back): it fires \
                 once, at 2026-10-25 02:30 CEST",
            ]
        );
        let hourly = CronSchedule::parse("15 * * * *", "Europe/Berlin").unwrap();
        let said = hourly.clock_changes(datetime!(2026-06-01 00:00 UTC));
        assert_eq!(
            said.first().map(String::as_str),
            Some(
                "2026-10-25 02:15 happens twice in Europe/Berlin (clocks go back): it fires at \
                 2026-10-25 02:15 CEST and 2026-10-25 02:15 CET"
            )
        );
        let untouched = CronSchedule::parse("0 4 * * *", "Europe/Berlin").unwrap();
        assert!(
            untouched
                .clock_changes(datetime!(2026-01-01 00:00 UTC))
                .is_empty()
        );
        let utc = CronSchedule::parse("30 2 * * *", "UTC").unwrap();
        assert!(
            utc.clock_changes(datetime!(2026-01-01 00:00 UTC))
                .is_empty()
        );
    }

    #[test]
    fn a_nightly_schedule_across_the_fall_back_fires_once_in_the_repeated_hour() {
        let cron = CronSchedule::parse("30 2 * * *", "Europe/Berlin").unwrap();
        let at: Vec<_> = cron
            .fires_after(datetime!(2026-10-24 12:00 UTC))
            .take(3)
            .collect();
        // 02:30 CEST (00:30 UTC) on the 25th, not again at 02:30 CET an hour later.
        assert_eq!(
            at,
            [
                datetime!(2026-10-25 00:30 UTC),
                datetime!(2026-10-26 01:30 UTC),
                datetime!(2026-10-27 01:30 UTC)
            ]
        );
    }

    #[test]
    fn an_hourly_schedule_fires_in_both_repeated_hours_and_skips_the_missing_one() {
        assert_eq!(
            fires(
                "0 * * * *",
                "Europe/Berlin",
                datetime!(2026-10-24 22:30 UTC),
                4
            ),
            [
                "2026-10-25 01:00 CEST",
                "2026-10-25 02:00 CEST",
                "2026-10-25 02:00 CET",
                "2026-10-25 03:00 CET"
            ]
        );
        assert_eq!(
            fires(
                "0 * * * *",
                "Europe/Berlin",
                datetime!(2026-03-28 23:30 UTC),
                3
            ),
            [
                "2026-03-29 01:00 CET",
                "2026-03-29 03:00 CEST",
                "2026-03-29 04:00 CEST"
            ]
        );
    }

    #[test]
    fn month_ends_are_the_days_each_month_has() {
        assert_eq!(
            fires("0 3 31 * *", "UTC", datetime!(2026-01-31 04:00 UTC), 3),
            [
                "2026-03-31 03:00 UTC",
                "2026-05-31 03:00 UTC",
                "2026-07-31 03:00 UTC"
            ]
        );
        assert_eq!(
            fires("0 3 L * *", "UTC", datetime!(2027-01-31 04:00 UTC), 2),
            ["2027-02-28 03:00 UTC", "2027-03-31 03:00 UTC"]
        );
        assert_eq!(
            fires("0 3 L 2 *", "UTC", datetime!(2027-03-01 00:00 UTC), 1),
            ["2028-02-29 03:00 UTC"]
        );
    }

    #[test]
    fn bad_schedules_are_refused_with_what_to_write() {
        let min = std::time::Duration::from_secs(300);
        let now = datetime!(2026-11-24 12:00 UTC);
        let error = |e: &str, z: &str| {
            CronSchedule::parse(e, z)
                .and_then(|c| c.check(now, min).map(|()| c))
                .unwrap_err()
                .to_string()
        };
        assert!(error("0 2 * *", "UTC").starts_with("`0 2 * *` is not a cron expression"));
        assert_eq!(
            error("0 2 * * *", "Mars/Olympus"),
            "unknown time zone `Mars/Olympus`; use an IANA name such as UTC or Europe/Berlin"
        );
        assert_eq!(
            error("0 0 30 2 *", "UTC"),
            "`0 0 30 2 *` never fires (no such date); check the day and month fields"
        );
        assert_eq!(
            error("*/2 * * * *", "UTC"),
            "`*/2 * * * *` fires 2m apart at its closest, more often than the minimum interval \
             of 5m ([scheduling] min_interval)"
        );
        assert!(
            CronSchedule::parse("*/5 * * * *", "UTC")
                .unwrap()
                .check(now, min)
                .is_ok()
        );
    }
}
