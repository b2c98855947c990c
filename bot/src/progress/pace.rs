//! A `governor` rate limiter that keeps tokio's time, so that the pacing a test sees under a
//! paused clock is the pacing production gets, and no test has to sleep to observe it.
//!
//! Not the engine's [`crate::clock::Clock`]: a chat platform counts its rate limits in real
//! time, so skipping a simulated clock must not let a burst of edits through (the platform
//! would refuse them); the pace is a fraction of a second, nothing a test waits out.

use std::time::Duration;

use governor::clock::Clock;
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use tokio::time::Instant;

/// Tokio's clock as `governor` reads it: time elapsed since the limiter was made.
#[derive(Clone, Copy, Debug)]
struct TokioClock {
    origin: Instant,
}

impl Clock for TokioClock {
    type Instant = Nanos;

    fn now(&self) -> Nanos {
        self.origin.elapsed().into()
    }
}

/// Lets one call through per period of its quota; waiting is a tokio sleep.
pub(crate) struct Pace {
    limiter: RateLimiter<NotKeyed, InMemoryState, TokioClock, NoOpMiddleware<Nanos>>,
}

impl Pace {
    pub(crate) fn new(quota: Quota) -> Self {
        let clock = TokioClock {
            origin: Instant::now(),
        };
        Self {
            limiter: RateLimiter::direct_with_clock(quota, clock),
        }
    }

    /// Resolves when the next call conforms to the quota, and counts it as made.
    pub(crate) async fn ready(&self) {
        while let Err(not_until) = self.limiter.check() {
            let wait: Duration = not_until.wait_time_from(self.limiter.clock().now());
            tokio::time::sleep(wait).await;
        }
    }
}
