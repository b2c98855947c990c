//! Whether a nova service reports in, and the `updated_at` and `state` Nova derives from that.
//!
//! Modelled on Nova's DB servicegroup driver (`nova/servicegroup/drivers/db.py`): a running
//! service saves its record every `report_interval` (10 s by default, `nova/conf/service.py`),
//! first `INITIAL_REPORTING_DELAY` (5 s) after it starts; `os-services` shows that record's
//! `updated_at`, and `state` is `up` while `abs(now - last heartbeat) <= service_down_time`
//! (60 s by default), `down` otherwise or when the service is forced down. Stopping a service
//! writes nothing (`nova/service.py` `Service.stop`), so a service that has just stopped still
//! shows `up` until its last heartbeat is older than `service_down_time`.

use serde::Serialize;
use time::{Duration, OffsetDateTime};

/// Nova's default `[DEFAULT] report_interval`.
pub(crate) const REPORT_INTERVAL: Duration = Duration::seconds(10);
/// Nova's default `[DEFAULT] service_down_time`.
pub(crate) const SERVICE_DOWN_TIME: Duration = Duration::seconds(60);

/// When a service reported last, and when (if ever) it reports again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Heartbeat {
    /// The last report before the service went quiet.
    #[serde(with = "time::serde::rfc3339")]
    last: OffsetDateTime,
    /// From this instant on it reports every [`REPORT_INTERVAL`]; `None`: it stays quiet.
    #[serde(with = "time::serde::rfc3339::option")]
    resumes: Option<OffsetDateTime>,
}

impl Heartbeat {
    /// A service that reported at `at` and keeps reporting every interval since.
    pub(crate) fn reporting_since(at: OffsetDateTime) -> Self {
        Heartbeat {
            last: at,
            resumes: Some(at),
        }
    }

    /// A service whose last report was at `at` and that is no longer running.
    pub(crate) fn stopped_at(at: OffsetDateTime) -> Self {
        Heartbeat {
            last: at,
            resumes: None,
        }
    }

    /// The record's `updated_at` at `now`: the latest report at or before `now`, in whole
    /// seconds as Nova's `DATETIME` columns keep it (MySQL drops the fraction).
    pub(crate) fn updated_at(&self, now: OffsetDateTime) -> OffsetDateTime {
        let at = match self.resumes {
            Some(resumes) if now >= resumes => {
                let reports = (now - resumes).whole_seconds() / REPORT_INTERVAL.whole_seconds();
                resumes + REPORT_INTERVAL * i32::try_from(reports).unwrap_or(i32::MAX)
            }
            _ => self.last,
        };
        at.replace_nanosecond(0).unwrap_or(at)
    }

    /// Nova's `DbDriver.is_up`: the last heartbeat is within `service_down_time` of `now`
    /// (either way: Nova takes the absolute difference).
    pub(crate) fn is_up(&self, now: OffsetDateTime) -> bool {
        (now - self.updated_at(now)).abs() <= SERVICE_DOWN_TIME
    }

    /// The process stops at `now` and reports again `back_after` later (never, if `None`).
    pub(crate) fn restart(&mut self, now: OffsetDateTime, back_after: Option<Duration>) {
        self.last = self.updated_at(now);
        self.resumes = back_after.map(|after| now + after);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const T0: OffsetDateTime = datetime!(2026-11-21 06:00:00 UTC);

    #[test]
    fn a_running_service_reports_every_interval() {
        let beat = Heartbeat::reporting_since(T0);
        assert_eq!(beat.updated_at(T0 + Duration::seconds(9)), T0);
        assert_eq!(
            beat.updated_at(T0 + Duration::seconds(125)),
            T0 + Duration::seconds(120)
        );
        assert!(beat.is_up(T0 + Duration::hours(5)));
    }

    #[test]
    fn a_stopped_service_goes_down_after_service_down_time() {
        let beat = Heartbeat::stopped_at(T0);
        assert!(beat.is_up(T0 + Duration::seconds(60)));
        assert!(!beat.is_up(T0 + Duration::seconds(61)));
        // Nova's abs(): a heartbeat far in the future is down too.
        assert!(!beat.is_up(T0 - Duration::seconds(61)));
    }

    #[test]
    fn a_restart_freezes_updated_at_until_the_service_is_back() {
        let mut beat = Heartbeat::reporting_since(T0);
        let restart = T0 + Duration::seconds(35);
        beat.restart(restart, Some(Duration::seconds(90)));
        let back = restart + Duration::seconds(90);
        assert_eq!(
            beat.updated_at(back - Duration::seconds(1)),
            T0 + Duration::seconds(30)
        );
        assert!(!beat.is_up(back - Duration::seconds(1)));
        assert_eq!(beat.updated_at(back), back);
        assert!(beat.is_up(back));

        beat.restart(back, None);
        assert_eq!(beat.updated_at(back + Duration::days(1)), back);
    }
}
