//! Bounded retries with exponential backoff for transient faults.

use std::future::Future;

use tokio::sync::mpsc::UnboundedSender;

use super::error::BackendError;
use crate::clock::Clock;
use crate::config::RetryPolicy;

tokio::task_local! {
    /// Who hears, as it happens, about the retries of the request being answered: the
    /// console, whose operator would otherwise watch seconds of silence (a run's retries go
    /// to its progress message instead).
    static WATCHER: UnboundedSender<String>;
}

/// Runs `answer`, telling `watcher` of each retry it makes, in words: `GET /v3/... could not
/// be reached ...: connection refused; trying again (2 of 5)`.
pub async fn watched<T>(watcher: UnboundedSender<String>, answer: impl Future<Output = T>) -> T {
    WATCHER.scope(watcher, answer).await
}

/// A retry policy and the clock its delays are slept on: the policy is configuration, the
/// clock the engine's (a test moves it instead of waiting out a backoff).
#[derive(Debug, Clone)]
pub struct Retry {
    pub policy: RetryPolicy,
    clock: Clock,
}

impl Retry {
    pub fn new(policy: RetryPolicy, clock: Clock) -> Self {
        Self { policy, clock }
    }

    /// Sleeps the policy's delay after failed try number `tries` (1-based).
    pub async fn pause(&self, tries: u32) {
        self.clock.sleep(self.policy.delay(tries)).await;
    }

    /// Runs `call` until it succeeds, fails for good, or the tries are used up; `on_retry` hears
    /// about each fault that is retried (for progress: "retrying after 503 (2/5)").
    pub async fn run<T, F, Fut>(
        &self,
        mut call: F,
        mut on_retry: impl FnMut(&BackendError, u32),
    ) -> Result<T, BackendError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, BackendError>>,
    {
        let mut tries = 0;
        loop {
            tries += 1;
            match call().await {
                Ok(value) => return Ok(value),
                Err(error) if error.fault.is_transient() && tries < self.policy.attempts => {
                    tracing::warn!(%error, tries, "transient fault, retrying");
                    let attempts = self.policy.attempts;
                    // Nobody watching, or gone: the log has it.
                    let _ = WATCHER.try_with(|watcher| {
                        watcher.send(format!("{error}; trying again ({tries} of {attempts})"))
                    });
                    on_retry(&error, tries);
                    self.pause(tries).await;
                }
                Err(error) => return Err(BackendError { tries, ..error }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::backend::Fault;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn error(fault: Fault) -> BackendError {
        BackendError::once("search cluster `logs`", "GET /", fault)
    }

    const FAST: RetryPolicy = RetryPolicy {
        attempts: 3,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(2),
    };

    fn fast() -> Retry {
        Retry::new(FAST, Clock::system())
    }

    #[tokio::test]
    async fn transient_faults_are_retried_until_success() {
        let calls = AtomicU32::new(0);
        let result = fast()
            .run(
                || async {
                    match calls.fetch_add(1, Ordering::SeqCst) {
                        0 => Err(error(Fault::Status {
                            status: 503,
                            reason: String::new(),
                        })),
                        1 => Err(error(Fault::Timeout)),
                        _ => Ok("ok"),
                    }
                },
                |_, _| {},
            )
            .await;
        assert_eq!(result, Ok("ok"));
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn retries_are_bounded_and_counted() {
        let calls = AtomicU32::new(0);
        let result: Result<(), _> = fast()
            .run(
                || async {
                    calls.fetch_add(1, Ordering::SeqCst);
                    Err(error(Fault::Status {
                        status: 429,
                        reason: String::new(),
                    }))
                },
                |_, _| {},
            )
            .await;
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        let text = result.unwrap_err().to_string();
        assert_eq!(
            text,
            "search cluster `logs`: GET / answered 429 after 3 tries"
        );
    }

    #[tokio::test]
    async fn client_errors_are_not_retried() {
        let calls = AtomicU32::new(0);
        let _: Result<(), _> = fast()
            .run(
                || async {
                    calls.fetch_add(1, Ordering::SeqCst);
                    Err(error(Fault::Status {
                        status: 400,
                        reason: "illegal_argument_exception".into(),
                    }))
                },
                |_, _| {},
            )
            .await;
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.delay(1), Duration::from_millis(500));
        assert_eq!(policy.delay(2), Duration::from_secs(1));
        assert_eq!(policy.delay(10), Duration::from_secs(10));
    }
}
