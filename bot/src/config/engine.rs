//! `[engine]` and `[progress]`: how runs are timed, how patiently a fault is retried, and how
//! fast progress messages are edited.

use std::time::Duration;

use serde::Deserialize;

/// Timing of runs. The defaults suit a production cluster; tests and the demo shorten them.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineConfig {
    /// How often a wait observes the cluster.
    #[serde(with = "humantime_serde")]
    pub poll_interval: Duration,
    /// How long one node may take to leave or join.
    #[serde(with = "humantime_serde")]
    pub node_timeout: Duration,
    /// How long the whole cluster may take to form and reach yellow after the last start.
    #[serde(with = "humantime_serde")]
    pub formation_timeout: Duration,
    /// How long a node being removed may take to hand all its shards to the others.
    #[serde(with = "humantime_serde")]
    pub drain_timeout: Duration,
    /// How long a restarted `nova-compute` may take to report up again before a rolling
    /// restart stops at its host.
    #[serde(with = "humantime_serde")]
    pub compute_timeout: Duration,
    /// Client timeout of one HTTP request (the spec's index-maintenance client uses 30).
    #[serde(with = "humantime_serde")]
    pub request_timeout: Duration,
    /// How long a destructive plan waits for a second operator.
    #[serde(with = "humantime_serde")]
    pub approval_ttl: Duration,
    /// How long a deletion the cluster is still applying (after a crash, or a DELETE that timed
    /// out) is waited for before the step fails rather than send it again.
    #[serde(with = "humantime_serde")]
    pub deletion_timeout: Duration,
    pub retry: RetryPolicy,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            poll_interval: Duration::from_secs(5),
            node_timeout: Duration::from_secs(5 * 60),
            formation_timeout: Duration::from_secs(15 * 60),
            // Relocation is throttled (40 MB/s per node by default): a node of 500 GB takes hours.
            drain_timeout: Duration::from_secs(6 * 60 * 60),
            // nova-compute reports every 10 s once it has started, which can take a minute.
            compute_timeout: Duration::from_secs(5 * 60),
            request_timeout: Duration::from_secs(30),
            approval_ttl: Duration::from_secs(30 * 60),
            deletion_timeout: Duration::from_secs(10 * 60),
            retry: RetryPolicy::default(),
        }
    }
}

/// How fast one channel's progress messages may be edited. Discord allows about 5 edits per 5 s
/// per channel; a little under that leaves room for the bot's other messages.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProgressConfig {
    pub edits_per_window: u32,
    #[serde(with = "humantime_serde")]
    pub window: Duration,
}

impl Default for ProgressConfig {
    fn default() -> Self {
        Self {
            edits_per_window: 4,
            window: Duration::from_secs(5),
        }
    }
}

/// How often and how patiently a transient fault is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetryPolicy {
    /// Tries in all, the first included.
    pub attempts: u32,
    /// Delay before the second try; doubled each time, up to `max_delay`.
    #[serde(with = "humantime_serde")]
    pub base_delay: Duration,
    #[serde(with = "humantime_serde")]
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 5,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(10),
        }
    }
}

impl RetryPolicy {
    /// The delay after failed try number `tries` (1-based).
    pub fn delay(&self, tries: u32) -> Duration {
        let factor = 2u32.saturating_pow(tries.saturating_sub(1));
        self.base_delay.saturating_mul(factor).min(self.max_delay)
    }
}
