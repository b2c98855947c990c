//! The time opsbot goes by. In production, the system's clock; in tests and rehearsals, a clock
//! that starts at a chosen instant and moves with tokio's clock, so that a test with tokio's
//! paused time drives every schedule, expiry and wait without sleeping. A test whose runtime
//! runs in real time (the end-to-end harness, whose bot talks to real sockets) moves a
//! [`SimulatedClock`] forward instead: a skip wakes every sleep and timeout on that clock, so
//! a parked run task sees its booked time or its approval's expiry at once.
//!
//! Every deadline, wait, backoff, token expiry and fire time of the engine, its targets and
//! its progress goes through one [`Clock`], read in two ways: [`Clock::now`], the wall time
//! that is stored and shown, and [`Clock::instant`], a monotonic reading for deadlines.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;
use tokio::sync::watch;
use tokio::time::Instant;

/// Longest single sleep towards a time: the wall clock may be stepped (NTP) while opsbot sleeps,
/// so a long wait is taken in pieces, each re-reading the clock.
pub(crate) const LONGEST_NAP: Duration = Duration::from_secs(60);

/// A deadline nothing reaches: far enough for any wait, near enough not to overflow tokio's
/// instant (which panics past its range).
const FAR: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// A configured length (std's, as the config reads it) on the clock's scale (`time`'s, as its
/// instants are): saturating, since no length a config can name comes near the limit.
pub fn span(length: Duration) -> time::Duration {
    time::Duration::try_from(length).unwrap_or(time::Duration::MAX)
}

/// A clock; cheap to clone, and every clone reads (and is moved with) the same time.
#[derive(Debug, Clone)]
pub struct Clock {
    /// `None` for the system's clock.
    simulated: Option<Arc<Simulated>>,
}

/// A simulated clock's state: where it started, and how far it has been moved on.
#[derive(Debug)]
struct Simulated {
    /// The simulated instant at `origin` on tokio's clock.
    start: OffsetDateTime,
    origin: Instant,
    /// Every skip so far, in all; sleepers watch it to wake when it grows.
    skipped: watch::Sender<Duration>,
}

impl Clock {
    /// The system's clock.
    pub fn system() -> Self {
        Self { simulated: None }
    }

    /// A clock that reads `start` now and moves with tokio's clock from here (`opsbot run
    /// --now`): nothing can skip it. Tests that move time take a [`SimulatedClock`].
    pub fn starting_at(start: OffsetDateTime) -> Self {
        SimulatedClock::starting_at(start).clock()
    }

    /// The wall time: what is stored, shown and compared with booked and expiry times.
    pub fn now(&self) -> OffsetDateTime {
        match &self.simulated {
            None => OffsetDateTime::now_utc(),
            Some(sim) => sim.start + sim.origin.elapsed() + *sim.skipped.borrow(),
        }
    }

    /// A monotonic reading, for deadlines and expiries kept in memory: tokio's clock, plus
    /// whatever a simulated clock was moved on.
    pub fn instant(&self) -> Instant {
        match &self.simulated {
            None => Instant::now(),
            Some(sim) => Instant::now() + *sim.skipped.borrow(),
        }
    }

    /// Resolves once `length` has passed on this clock.
    pub async fn sleep(&self, length: Duration) {
        let deadline = self.instant() + length.min(FAR);
        let Some(sim) = &self.simulated else {
            return tokio::time::sleep_until(deadline).await;
        };
        let mut skipped = sim.skipped.subscribe();
        loop {
            // Marked seen before reading the time: a skip from here on wakes the select.
            let moved = *skipped.borrow_and_update();
            let now = Instant::now() + moved;
            if now >= deadline {
                return;
            }
            tokio::select! {
                () = tokio::time::sleep(deadline - now) => {}
                // The sender lives as long as `sim`, which this borrows: never closed here.
                _ = skipped.changed() => {}
            }
        }
    }

    /// Resolves once the clock reads `at` or later.
    pub async fn sleep_until(&self, at: OffsetDateTime) {
        loop {
            let left = at - self.now();
            if left <= time::Duration::ZERO {
                return;
            }
            // A skip that reaches `at` also ends the nap, which is never longer than `left`.
            let left = Duration::try_from(left).unwrap_or(LONGEST_NAP);
            self.sleep(left.min(LONGEST_NAP)).await;
        }
    }

    /// `work`'s output, or `None` once `length` has passed on this clock first.
    pub async fn timeout<F: Future>(&self, length: Duration, work: F) -> Option<F::Output> {
        tokio::select! {
            out = work => Some(out),
            () = self.sleep(length) => None,
        }
    }

    /// `work`'s output, or `None` once the clock reads `at` first: a parked run task waits
    /// with this for a person or its booked time, whichever comes first.
    pub async fn timeout_at<F: Future>(&self, at: OffsetDateTime, work: F) -> Option<F::Output> {
        tokio::select! {
            out = work => Some(out),
            () = self.sleep_until(at) => None,
        }
    }
}

/// A simulated clock that its holder can move forward: what tests get. Only this handle can
/// skip, so the system's clock cannot be moved by mistake; the [`Clock`] it hands out reads
/// the same time.
#[derive(Debug, Clone)]
pub struct SimulatedClock(Arc<Simulated>);

impl SimulatedClock {
    /// A clock that reads `start` now and moves with tokio's clock from here.
    pub fn starting_at(start: OffsetDateTime) -> Self {
        Self(Arc::new(Simulated {
            start,
            origin: Instant::now(),
            skipped: watch::channel(Duration::ZERO).0,
        }))
    }

    /// The clock to build the engine and its parts with.
    pub fn clock(&self) -> Clock {
        Clock {
            simulated: Some(Arc::clone(&self.0)),
        }
    }

    /// The wall time, as [`Clock::now`].
    pub fn now(&self) -> OffsetDateTime {
        self.clock().now()
    }

    /// Moves the clock on by `by` at once, and wakes every sleep and timeout on it to look at
    /// the time again. Saturates at a century, past any wait (and short of overflowing).
    pub fn skip(&self, by: Duration) {
        self.0
            .skipped
            .send_modify(|skipped| *skipped = skipped.saturating_add(by).min(FAR));
    }
}

#[cfg(test)]
mod tests;
