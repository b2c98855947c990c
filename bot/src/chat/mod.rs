//! Front ends: where commands come from and where replies and progress go.

pub mod console;
pub mod discord;
pub mod matrix;
mod reconnect;
pub mod slack;

use std::num::NonZeroU32;
use std::time::Duration;

use governor::Quota;
use opsbot_commands::people::People;

use crate::clock::Clock;
use crate::metrics::Metrics;
use crate::service::Service;

/// Whatever a chat platform does, the same bot goes on: what a front end needs to serve its
/// platform (`C`, its connector), and where it says how the platform is. Each platform's
/// `keep` serves it until the bot stops.
#[derive(Debug)]
pub struct Keeper<C> {
    pub connector: C,
    pub service: Service,
    pub people: People,
    pub metrics: Metrics,
    pub clock: Clock,
}

impl<C> Keeper<C> {
    /// The reconnections of the platform `/healthz` names `part`.
    fn reconnect(&self, part: &'static str) -> reconnect::Reconnect {
        reconnect::Reconnect::new(
            part,
            "the other front ends and the runs",
            self.metrics.clone(),
            self.clock.clone(),
        )
    }
}

/// Why a chat platform cannot be used now, and whether waiting can help.
#[derive(Debug, thiserror::Error)]
pub enum Unusable {
    /// The platform refused (a bad token, a workspace or guild that is not the configured
    /// one, the bot's access): the config or the bot's installation must change first.
    #[error("{0:#}")]
    Refused(anyhow::Error),
    /// The platform did not answer, or answered that it cannot now (a 5xx, a 429): it may
    /// pass.
    #[error("{0:#}")]
    Unavailable(anyhow::Error),
}

/// One call per `period` stretched by a tenth, and no burst: at most a platform's count in any of
/// its windows even when a call reaches it a little later than the one before it did.
pub(crate) fn paced(period: Duration) -> Quota {
    let period = (period * 11 / 10).max(Duration::from_millis(1));
    Quota::with_period(period)
        .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
        .allow_burst(NonZeroU32::MIN)
}

/// What a platform's check looks at: each served channel or room, then the announcement one
/// unless it is served too; with whether each is served and whether it is announced in.
pub(crate) fn served_and_announced<'a, T: PartialEq>(
    served: &'a [T],
    announce: Option<&'a T>,
) -> Vec<(&'a T, bool, bool)> {
    let mut all: Vec<_> = served
        .iter()
        .map(|c| (c, true, announce == Some(c)))
        .collect();
    all.extend(
        announce
            .filter(|a| !served.contains(a))
            .map(|a| (a, false, true)),
    );
    all
}
