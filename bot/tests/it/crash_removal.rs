//! SIGKILL the real binary at random points of an approved node removal, restart it until the
//! run completes, and check: the node was drained before it stopped, it stopped once, no other
//! node stopped, and the exclusion is cleared. The points are drawn from a seed printed at the
//! start; set `OPSBOT_CRASH_SEED` to replay a failure.

use std::time::Duration;

use crate::support::{Dice, complete, kill_during, scene};
use opsbot_search_sim::SimConfig;

/// Kills per run of the test suite: this many in each of four parts, side by side.
const PER_PART: u64 = 5;

const REMOVE: &str = "/cluster remove-node cluster:logs node:10.0.0.14";

crate::in_parts!(
    sigkill_at_random_points_of_a_removal_never_stops_a_node_that_holds_shards
    => removal_kills: part_1 = 0, part_2 = 1, part_3 = 2, part_4 = 3
);

/// Part `part` of the torture: [`PER_PART`] of its kills.
async fn removal_kills(part: u64) {
    let mut dice = Dice::for_part(part);
    let seed = dice.seed();
    for kill in part * PER_PART..(part + 1) * PER_PART {
        // A removal sends about 40 cluster requests here: planning, the exclusion, the drain's
        // polls, the stop's and the clear's; the kill lands anywhere among them.
        let point = 1 + dice.below(40);
        let delay = Duration::from_millis(dice.below(60));
        round(kill, point, delay, seed).await;
    }
}

async fn round(kill: u64, point: u64, delay: Duration, seed: u64) {
    let what = format!("kill {kill} (seed {seed}): after request {point} + {delay:?}");
    let scene = scene(
        SimConfig {
            days_of_indices: 20,
            speed: 100.0,
            ..SimConfig::default()
        },
        r#"kind = "sim""#,
    )
    .await;
    kill_during(&scene, REMOVE, point, delay, &what).await;
    complete(&scene.config, "", &what).await;

    crate::support::worlds::check_removed(&scene.sim, "10.0.0.14".parse().unwrap(), &what);
}
