//! SIGKILL the real binary at random points of an approved prune of a few hundred indices,
//! restart it until the run completes, and check: every selected index deleted exactly once, no
//! other index ever deleted. The points are drawn from a seed printed at the start; set
//! `OPSBOT_CRASH_SEED` to replay a failure.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::support::{Dice, complete, kill_during, kill_when, scene};
use opsbot_commands::index::IndexName;
use opsbot_commands::retention::{Retention, RetentionDays, Verdict};
use opsbot_search_sim::{FaultRule, SimConfig};
use time::OffsetDateTime;

/// Kills per run of the test suite: this many in each of four parts, side by side.
const PER_PART: u64 = 5;

const PRUNE: &str = "/indices prune cluster:logs older_than_days:30";

crate::in_parts!(
    sigkill_at_random_points_of_a_prune_deletes_each_selected_index_exactly_once
    => prune_kills: part_1 = 0, part_2 = 1, part_3 = 2, part_4 = 3
);

/// Part `part` of the torture: [`PER_PART`] of its kills.
async fn prune_kills(part: u64) {
    let mut dice = Dice::for_part(part);
    let seed = dice.seed();
    for kill in part * PER_PART..(part + 1) * PER_PART {
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
    let before: Vec<String> = scene.sim.index_names();

    kill_during(&scene, PRUNE, point, delay, &what).await;
    complete(&scene.config, "", &what).await;

    let world = scene.sim.state();
    let rule = Retention {
        prefix: Some(IndexName::parse("flog-").unwrap()),
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

/// The issue's case: the master takes 1 s to apply a deletion and the bot is killed 0.5 s after
/// sending it. The restarted bot waits for the cluster to finish (its pending tasks and task
/// list) instead of sending the same DELETE again, and its notes count what each request
/// removed. Checked on the server's request log, not only on the final state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_while_a_slow_delete_is_applied_never_sends_it_again() {
    let mut dice = Dice::from_env();
    let seed = dice.seed();
    for kill in 0..3 {
        let delay = Duration::from_millis(300 + dice.below(400));
        slow_round(kill, delay, seed).await;
    }
}

async fn slow_round(kill: u64, delay: Duration, seed: u64) {
    let what = format!("slow kill {kill} (seed {seed}): {delay:?} after the first DELETE arrived");
    let scene = scene(
        SimConfig {
            days_of_indices: 300,
            delete_apply: Duration::from_secs(1),
            ..SimConfig::default()
        },
        r#"kind = "sim""#,
    )
    .await;
    let deletes = || {
        scene
            .sim
            .calls()
            .into_iter()
            .filter(|c| c.method == "DELETE")
            .collect::<Vec<_>>()
    };
    kill_when(&scene.config, PRUNE, || !deletes().is_empty(), delay, &what).await;
    complete(&scene.config, "", &what).await;

    let mut sent = BTreeSet::new();
    let mut answered = 0;
    for call in deletes() {
        let names: Vec<&str> = call.path.trim_start_matches('/').split(',').collect();
        if call.status == 200 {
            answered += names.len();
        }
        for name in names {
            assert!(sent.insert(name.to_owned()), "{what}: {name} sent twice");
        }
    }
    let world = scene.sim.state();
    assert_eq!(
        world.deleted.len(),
        sent.len(),
        "{what}: each sent name deleted once"
    );
    assert!(
        deletes()
            .first()
            .is_some_and(|c| c.hung_up || c.status == 0),
        "{what}: the first DELETE was cut off by the kill: {:?}",
        deletes().first()
    );

    let config = opsbot::config::Config::load(&scene.config).unwrap();
    let store = crate::support::open_store(config.store.sled_path().unwrap());
    let run = store
        .run(opsbot_commands::name::RunId::new(1))
        .unwrap()
        .unwrap();
    let counted: usize = run
        .steps()
        .iter()
        .filter_map(|step| match step {
            opsbot_commands::run::StepState::Done { note, .. } => note
                .strip_prefix("deleted ")
                .and_then(|rest| rest.split(';').next())
                .and_then(|n| n.parse::<usize>().ok()),
            _ => None,
        })
        .sum();
    assert_eq!(
        counted,
        answered,
        "{what}: the notes count what the answered requests removed: {:#?}",
        run.steps()
    );
}
