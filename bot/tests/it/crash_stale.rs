//! SIGKILL the real binary between the approval of a stale-allocation run and its deletes (and
//! while a delete is in flight), restart it until the run completes, and check on the simulated
//! cloud: each stale consumer's allocations deleted exactly once, the running instance's never.
//! Kill points come from a printed seed; `OPSBOT_CRASH_SEED` replays a failure.

use std::time::Duration;

use crate::support::worlds::StaleCloud;
use crate::support::{Dice, cloud_config, complete, kill_when};

/// Kills per run of the test suite.
const KILLS: u64 = 10;

const STALE: &str = "/placement stale cloud:prod host:compute-03";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_between_approval_and_delete_deletes_each_stale_allocation_exactly_once() {
    let mut dice = Dice::from_env();
    let seed = dice.seed();
    for kill in 0..KILLS {
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
