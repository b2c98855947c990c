//! The cloud's clock: wall time, plus however far tests have moved it on.
//!
//! Nova's timestamps (service heartbeats, migrations, server creation) follow this clock, so
//! a test skips a compute service's downtime instead of sleeping through it. Keystone's token
//! times stay on wall time, since clients compare `expires_at` with their own clock.

use std::sync::atomic::{AtomicU64, Ordering};

use time::OffsetDateTime;

/// Wall time shifted by an offset that only grows.
#[derive(Debug, Default)]
pub(crate) struct Clock {
    skipped_ms: AtomicU64,
}

impl Clock {
    /// The simulated now.
    pub(crate) fn now(&self) -> OffsetDateTime {
        let skipped = self.skipped_ms.load(Ordering::Relaxed);
        let skipped = time::Duration::milliseconds(i64::try_from(skipped).unwrap_or(i64::MAX));
        let wall = OffsetDateTime::now_utc();
        wall.checked_add(skipped).unwrap_or(wall)
    }

    /// Moves the clock on by `by` (whole milliseconds).
    pub(crate) fn advance(&self, by: std::time::Duration) {
        let by = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
        // fetch_update cannot fail with a closure that always returns Some.
        let _ = self
            .skipped_ms
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |skipped| {
                Some(skipped.saturating_add(by))
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advancing_moves_now_on() {
        let clock = Clock::default();
        let before = clock.now();
        clock.advance(std::time::Duration::from_secs(90));
        assert!(clock.now() - before >= time::Duration::seconds(90));
    }
}
