//! The time opsbot goes by. In production, the system's clock; in tests and rehearsals, a clock
//! that starts at a chosen instant and moves with tokio's clock, so that a test with tokio's
//! paused time drives every schedule, expiry and wait without sleeping.

use std::time::Duration;

use time::OffsetDateTime;

/// Longest single sleep towards a time: the wall clock may be stepped (NTP) while opsbot sleeps,
/// so a long wait is taken in pieces, each re-reading the clock.
pub(crate) const LONGEST_NAP: Duration = Duration::from_secs(60);

/// A configured length (std's, as the config reads it) on the clock's scale (`time`'s, as its
/// instants are): saturating, since no length a config can name comes near the limit.
pub fn span(length: Duration) -> time::Duration {
    time::Duration::try_from(length).unwrap_or(time::Duration::MAX)
}

/// A clock; cheap to copy.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    /// The simulated instant at `origin` on tokio's clock.
    simulated: Option<(OffsetDateTime, tokio::time::Instant)>,
}

impl Clock {
    /// The system's clock.
    pub fn system() -> Self {
        Self { simulated: None }
    }

    /// A clock that reads `start` now and moves with tokio's clock from here.
    pub fn starting_at(start: OffsetDateTime) -> Self {
        Self {
            simulated: Some((start, tokio::time::Instant::now())),
        }
    }

    pub fn now(&self) -> OffsetDateTime {
        match self.simulated {
            None => OffsetDateTime::now_utc(),
            Some((start, origin)) => start + origin.elapsed(),
        }
    }

    /// Resolves once the clock reads `at` or later.
    pub async fn sleep_until(&self, at: OffsetDateTime) {
        loop {
            let left = at - self.now();
            if left <= time::Duration::ZERO {
                return;
            }
            let left = Duration::try_from(left).unwrap_or(LONGEST_NAP);
            tokio::time::sleep(left.min(LONGEST_NAP)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_simulated_clock_moves_with_tokio_time_and_sleeps_to_the_instant() {
        let clock = Clock::starting_at(datetime!(2026-11-24 01:59 UTC));
        clock.sleep_until(datetime!(2026-11-24 05:00 UTC)).await;
        assert_eq!(clock.now(), datetime!(2026-11-24 05:00 UTC));
        // A time already past returns at once.
        clock.sleep_until(datetime!(2026-11-24 04:00 UTC)).await;
        assert_eq!(clock.now(), datetime!(2026-11-24 05:00 UTC));
    }
}
