//! Rate limits as Slack documents them (api.slack.com/apis/rate-limits): per token and method,
//! and per channel too for `chat.postMessage`. Sliding windows on the fake's clock: "N per
//! minute" is never more than N in any 60 s, the strictest reading of Slack's words.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use tokio::time::Instant;

use crate::methods::{Tier, WebMethod};

/// Who a window counts for: a token, a method, and for `chat.postMessage` a channel.
type Key = (String, WebMethod, Option<String>);

#[derive(Default)]
pub(crate) struct Limiter {
    /// Accepted calls' times within their window, oldest first.
    windows: HashMap<Key, VecDeque<Instant>>,
    /// 429s answered so far.
    pub(crate) limited: usize,
}

impl Limiter {
    /// Counts a call, or refuses it with the whole seconds to wait (Slack's `Retry-After`).
    pub(crate) fn check(
        &mut self,
        now: Instant,
        token: &str,
        method: WebMethod,
        channel: Option<&str>,
        post_burst: u32,
        minute: Duration,
    ) -> Result<(), u64> {
        let (max, per, channel) = match method.tier() {
            Tier::PostMessage => (
                post_burst.max(1),
                minute / 60 * post_burst.max(1),
                channel.map(str::to_owned),
            ),
            tier => (tier.per_minute().unwrap_or(1), minute, None),
        };
        let window = self
            .windows
            .entry((token.to_owned(), method, channel))
            .or_default();
        while window
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) >= per)
        {
            window.pop_front();
        }
        if window.len() >= usize::try_from(max).unwrap_or(usize::MAX) {
            let oldest = window.front().copied().unwrap_or(now);
            let wait = (oldest + per).saturating_duration_since(now);
            self.limited += 1;
            return Err(ceil_secs(wait).max(1));
        }
        window.push_back(now);
        Ok(())
    }

    /// Forgets every call counted so far.
    pub(crate) fn reset(&mut self) {
        self.windows.clear();
    }
}

/// `Retry-After` is whole seconds; rounding down would invite a retry that is refused again.
fn ceil_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn a_tier_one_method_allows_one_call_a_minute_then_says_when() {
        let mut limiter = Limiter::default();
        let t0 = Instant::now();
        let m = WebMethod::AppsConnectionsOpen;
        assert_eq!(limiter.check(t0, "x", m, None, 3, MINUTE), Ok(()));
        let t1 = t0 + Duration::from_millis(20_500);
        assert_eq!(limiter.check(t1, "x", m, None, 3, MINUTE), Err(40));
        assert_eq!(
            limiter.check(t0 + Duration::from_secs(60), "x", m, None, 3, MINUTE),
            Ok(())
        );
        assert_eq!(limiter.limited, 1);
    }

    #[test]
    fn post_message_counts_per_channel() {
        let mut limiter = Limiter::default();
        let t0 = Instant::now();
        let m = WebMethod::ChatPostMessage;
        for _ in 0..2 {
            assert_eq!(limiter.check(t0, "x", m, Some("C1"), 2, MINUTE), Ok(()));
        }
        assert_eq!(limiter.check(t0, "x", m, Some("C1"), 2, MINUTE), Err(2));
        assert_eq!(limiter.check(t0, "x", m, Some("C2"), 2, MINUTE), Ok(()));
    }
}
