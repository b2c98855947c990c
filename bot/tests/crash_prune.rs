//! SIGKILL the real binary at random points of an approved prune of a few hundred indices,
//! restart it until the run completes, and check: every selected index deleted exactly once, no
//! other index ever deleted. The points are drawn from a seed printed at the start; set
//! `OPSBOT_CRASH_SEED` to replay a failure.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use opsbot_commands::index::IndexName;
use opsbot_commands::retention::{Retention, RetentionDays, Verdict};
use opsbot_sim::{FaultRule, SimConfig};
use support::{Dice, complete, kill_during, scene};
use time::OffsetDateTime;

/// Kills per run of the test suite.
const KILLS: u64 = 20;

const PRUNE: &str = "/indices prune cluster:logs older_than_days:30";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_at_random_points_of_a_prune_deletes_each_selected_index_exactly_once() {
    let mut dice = Dice::from_env();
    let seed = dice.seed();
    for kill in 0..KILLS {
        // The k-th cluster request marks the point; a random delay lands the kill before,
        // during or after the request it starts (deletes are slowed to be caught in flight).
        let point = 1 + dice.below(7);
        let delay = Duration::from_millis(dice.below(120));
        round(kill, point, delay, seed).await;
    }
}

async fn round(kill: u64, point: u64, delay: Duration, seed: u64) {
    let what = format!("kill {kill} (seed {seed}): after request {point} + {delay:?}");
    let scene = scene(
        SimConfig {
            days_of_indices: 300,
            ..SimConfig::default()
        },
        r#"kind = "sim""#,
    )
    .await;
    scene.sim.set_faults(vec![
        "latency=60ms,method=DELETE".parse::<FaultRule>().unwrap(),
        "latency=15ms,method=GET,path=/_cat/indices"
            .parse()
            .unwrap(),
    ]);
    let before: Vec<String> = scene
        .sim
        .state()
        .indices
        .into_iter()
        .map(|i| i.name)
        .collect();

    kill_during(&scene, PRUNE, point, delay, &what).await;
    complete(&scene.config, &what).await;

    let world = scene.sim.state();
    let rule = Retention {
        prefix: IndexName::parse("flog-").unwrap(),
        older_than: RetentionDays::DEFAULT,
    };
    let now = OffsetDateTime::now_utc();
    let selected: BTreeSet<&String> = before
        .iter()
        .filter(|name| matches!(rule.judge(name, now), Verdict::Expired { .. }))
        .collect();
    let mut times: BTreeMap<&String, usize> = BTreeMap::new();
    for name in &world.deleted {
        *times.entry(name).or_default() += 1;
    }
    assert!(
        times.values().all(|n| *n == 1),
        "{what}: deleted more than once: {times:?}"
    );
    let deleted: BTreeSet<&String> = times.keys().copied().collect();
    assert_eq!(deleted, selected, "{what}");
    assert!(selected.len() > 250, "{what}: {} selected", selected.len());
}
