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
use support::{console, output, scene, until};
use time::OffsetDateTime;

/// Kills per run of the test suite.
const KILLS: u64 = 20;

const PRUNE: &str =
    "/indices prune cluster:logs older_than_days:30\n/as user:bob\n/approve id:r-1\n";
const APPROVE: &str = "/as user:bob\n/approve id:r-1\n";

/// xorshift64*: enough randomness to spread kill points, and replayable from the seed.
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

fn seed() -> u64 {
    std::env::var("OPSBOT_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| OffsetDateTime::now_utc().unix_timestamp_nanos() as u64 | 1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_at_random_points_of_a_prune_deletes_each_selected_index_exactly_once() {
    let seed = seed();
    println!("crash seed {seed} (replay with OPSBOT_CRASH_SEED={seed})");
    let mut dice = Dice(seed);
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

    let mut first = console(&scene.config, PRUNE);
    until(&what, || {
        scene.sim.calls().len() as u64 >= point || matches!(first.try_wait(), Ok(Some(_)))
    })
    .await;
    tokio::time::sleep(delay).await;
    let _ = first.kill(); // SIGKILL; it may have finished already
    first.wait().unwrap();

    // Start again until the run is done: approving again is harmless, and a run that was never
    // created is requested again.
    let mut finished = false;
    for _ in 0..4 {
        let out = output(console(&scene.config, APPROVE)).await;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{what}: {stdout}");
        if stdout.contains("no run r-1") {
            output(console(&scene.config, PRUNE)).await;
            continue;
        }
        if stdout.contains("✅ r-1")
            || stdout.contains("r-1 is not waiting for approval (it is succeeded)")
        {
            finished = true;
            break;
        }
    }
    assert!(finished, "{what}: the prune never completed");

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
