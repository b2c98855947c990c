//! What the front ends' benchmarks share (`tests/benches/discord.rs`, `slack.rs`): the same
//! world, so that their figures stand side by side, and the same percentile.

use std::time::Duration;

use crate::Setup;

/// Twenty clusters, whose restarts need no confirmation: what is measured is the restarts,
/// not their requester's confirmations.
pub fn twenty_clusters() -> Setup {
    let approval = opsbot_commands::consent::ConsentPolicy::parse([("cluster restart", "none")]);
    Setup {
        clusters: 20,
        days_of_indices: 5,
        approval: approval.unwrap_or_else(|e| panic!("a policy: {e}")),
        ..Setup::default()
    }
}

/// The `p` percentile (0 to 1) of durations sorted in increasing order.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).copied().unwrap_or_default()
}
