//! The simulated clock: real elapsed time multiplied by the configured speed.

use std::time::{Duration, Instant};

/// Maps real time to simulated milliseconds since the simulator started.
#[derive(Debug, Clone)]
pub(crate) struct SimClock {
    started: Instant,
    started_wall: time::OffsetDateTime,
    speed: f64,
}

impl SimClock {
    pub(crate) fn new(speed: f64) -> Self {
        SimClock {
            started: Instant::now(),
            started_wall: time::OffsetDateTime::now_utc(),
            speed,
        }
    }

    /// Simulated milliseconds since start.
    pub(crate) fn now_ms(&self) -> u64 {
        (self.started.elapsed().as_secs_f64() * self.speed * 1000.0) as u64
    }

    /// How long real time takes to cover `sim_ms` simulated milliseconds.
    pub(crate) fn real_duration(&self, sim_ms: u64) -> Duration {
        Duration::try_from_secs_f64(sim_ms as f64 / 1000.0 / self.speed).unwrap_or(Duration::MAX)
    }

    /// Wall-clock time of a simulated instant: the start time plus simulated elapsed time,
    /// so `_cat/health` timestamps advance at the simulated pace.
    pub(crate) fn wall_time(&self, sim_ms: u64) -> time::OffsetDateTime {
        let elapsed = time::Duration::milliseconds(i64::try_from(sim_ms).unwrap_or(i64::MAX));
        self.started_wall
            .checked_add(elapsed)
            .unwrap_or(self.started_wall)
    }
}
