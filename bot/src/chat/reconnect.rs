//! Reconnecting to a chat platform: an outage, at start or later, stops nothing else. After
//! each failure the log and `/healthz` say why, and the next attempt comes after a wait that
//! doubles from one second up to a minute, so that an outage costs a few requests a minute and
//! a short one is over soon after it ends.

use std::time::Duration;

use tokio::sync::watch;

use super::Unusable;
use crate::clock::Clock;
use crate::config::RetryPolicy;
use crate::metrics::Metrics;

const BACKOFF: RetryPolicy = RetryPolicy {
    attempts: u32::MAX,
    base_delay: Duration::from_secs(1),
    max_delay: Duration::from_secs(60),
};

/// One platform's failures in a row, and where it says how the platform is.
#[derive(Debug)]
pub(crate) struct Reconnect {
    /// The part `/healthz` names (`discord`, `slack`).
    part: &'static str,
    /// What else goes on meanwhile, for the log: "the console and the runs".
    others: &'static str,
    metrics: Metrics,
    clock: Clock,
    tries: u32,
}

impl Reconnect {
    pub(crate) fn new(
        part: &'static str,
        others: &'static str,
        metrics: Metrics,
        clock: Clock,
    ) -> Self {
        Self {
            part,
            others,
            metrics,
            clock,
            tries: 0,
        }
    }

    /// The platform answers: `/healthz` says so, and the next failure waits a second again.
    pub(crate) fn connected(&mut self) {
        self.tries = 0;
        self.metrics.available(self.part);
    }

    /// Says why the platform is unavailable and waits before the next attempt; false when
    /// `stop` turned true meanwhile.
    pub(crate) async fn after(
        &mut self,
        failure: String,
        stop: &mut watch::Receiver<bool>,
    ) -> bool {
        self.tries = self.tries.saturating_add(1);
        let wait = BACKOFF.delay(self.tries);
        tracing::warn!(
            part = self.part,
            %failure,
            ?wait,
            "{} is unavailable; {} go on, and it is tried again",
            self.part,
            self.others
        );
        self.metrics.unavailable(self.part, failure);
        tokio::select! {
            () = self.clock.sleep(wait) => true,
            _ = stop.wait_for(|stopped| *stopped) => false,
        }
    }

    /// Keeps a platform served until `stop` turns true: from the check made at the start
    /// (`first`), then `check`'s, it serves while the platform answers (`serve`, which resolves
    /// with `None` when the platform asks to be reconnected at once, else with why it ended),
    /// and after each failure says why and waits.
    pub(crate) async fn keep<R, C, S>(
        mut self,
        first: Result<R, Unusable>,
        mut stop: watch::Receiver<bool>,
        check: impl Fn() -> C,
        mut serve: impl FnMut(R) -> S,
    ) where
        C: Future<Output = Result<R, Unusable>>,
        S: Future<Output = Option<String>>,
    {
        let mut attempt = Some(first);
        loop {
            let checked = match attempt.take() {
                Some(attempt) => attempt,
                None => tokio::select! {
                    checked = check() => checked,
                    _ = stop.wait_for(|stopped| *stopped) => return,
                },
            };
            let failure = match checked {
                Ok(reached) => {
                    self.connected();
                    let ended = tokio::select! {
                        ended = serve(reached) => ended,
                        _ = stop.wait_for(|stopped| *stopped) => return,
                    };
                    match ended {
                        Some(failure) => failure,
                        None => continue,
                    }
                }
                Err(error) => error.to_string(),
            };
            if !self.after(failure, &mut stop).await {
                return;
            }
        }
    }
}
