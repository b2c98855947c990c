//! SIGKILL the real binary between the approval of a stale-allocation run and its deletes (and
//! while a delete is in flight), restart it until the run completes, and check on the simulated
//! cloud: each stale consumer's allocations deleted exactly once, the running instance's never.
//! Kill points come from a printed seed; `OPSBOT_CRASH_SEED` replays a failure.

use std::time::Duration;

use crate::support::worlds::StaleCloud;
use crate::support::{Dice, cloud_config, complete, kill_when};

/// Kills per run of the test suite: this many in each of two parts, side by side.
const PER_PART: u64 = 5;

const STALE: &str = "/placement stale cloud:prod host:compute-03";

crate::in_parts!(
    sigkill_between_approval_and_delete_deletes_each_stale_allocation_exactly_once
    => stale_kills: part_1 = 0, part_2 = 1
);

/// Part `part` of the torture: [`PER_PART`] of its kills.
async fn stale_kills(part: u64) {
    let mut dice = Dice::for_part(part);
    let seed = dice.seed();
    for kill in part * PER_PART..(part + 1) * PER_PART {
        // Kill when the first delete arrives, plus up to 150 ms: before it is answered
        // (deletes are slowed to 80 ms), after, or during the next one.
        let delay = Duration::from_millis(dice.below(150));
        round(kill, delay, seed).await;
    }
}

async fn round(kill: u64, delay: Duration, seed: u64) {
    let what = format!("kill {kill} (seed {seed}): {delay:?} after the first delete arrived");
    let world = StaleCloud::start(Duration::from_millis(80)).await;
    let dir = tempfile::tempdir().unwrap();
    let config = cloud_config(
        dir.path(),
        &world.cloud,
        r#"
[engine.retry]
attempts = 5
base_delay = "50ms"
max_delay = "500ms"
"#,
    );

    kill_when(&config, STALE, || world.delete_arrived(), delay, &what).await;
    complete(&config, "", &what).await;
    world.check(&what);
}
