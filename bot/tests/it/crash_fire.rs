//! SIGKILL the real binary around a schedule's fire: before the fire is recorded (while the
//! prune is planned), right after it is recorded with its run, and while the run deletes under
//! the schedule's standing approval. The bot is started (`--now`) a second before the fire and
//! restarted after each kill a few minutes later, within the lateness, until the run completes.
//! Checked: exactly one run for the fire (no doubled fire), the fire not skipped (that run
//! succeeded under the standing approval), every selected index sent in one DELETE and deleted
//! once (the simulator's request log and world), nothing else deleted. The kill points are
//! drawn from a seed printed at the start; set `OPSBOT_CRASH_SEED` to replay a failure.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::support::{
    Bot, Dice, Scene, Silent, console_until, console_until_with, open_store, scene, serve_with,
    stop, until,
};
use opsbot::clock::Clock;
use opsbot::engine::Engine;
use opsbot_commands::index::IndexName;
use opsbot_commands::name::RunId;
use opsbot_commands::retention::{Retention, RetentionDays, Verdict};
use opsbot_commands::run::{Outcome, Run};
use opsbot_commands::schedule::{FireOutcome, FireRecord, ScheduleName};
use opsbot_search_sim::{FaultRule, SimConfig};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use time::macros::datetime;

/// The fire every round is about: 03:00 UTC, the day the simulated cluster's newest index is of.
const FIRE: OffsetDateTime = datetime!(2027-02-10 03:00 UTC);
const SCHEDULE: &str = "nightly-prune";

/// Rounds per run of the test suite, this many in each of three parts side by side; each
/// round kills once at its phase, and a round that killed before any delete kills its restart
/// again during its deletes.
const PER_PART: u64 = 4;

/// Slows the plan's listing of every index, so that a kill drawn after the fire's first
/// request lands while the fire is planned, before it is recorded.
const LISTING: Duration = Duration::from_millis(60);
/// Slows the run's scoped looks at the planned indices (its first request, and the look
/// before each delete), so that a kill drawn after the run's first request lands before any
/// delete.
const LOOK: Duration = Duration::from_millis(60);
/// How long the master takes to apply a deletion: a kill drawn after a DELETE arrived lands
/// while it is applied, or after.
const DELETE_APPLY: Duration = Duration::from_millis(120);

/// Where the first kill of a round lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The fire is not recorded yet: before its time, or while its plan is made.
    BeforeRecorded,
    /// The fire is recorded with its run, which has not deleted anything.
    Recorded,
    /// The run is deleting.
    Deleting,
}

crate::in_parts!(
    sigkill_around_a_fire_neither_skips_nor_doubles_it_and_deletes_each_index_once
    => fire_rounds: part_1 = 0, part_2 = 1, part_3 = 2
);

/// Part `part` of the torture: [`PER_PART`] of its rounds.
async fn fire_rounds(part: u64) {
    let mut dice = Dice::for_part(part);
    let seed = dice.seed();
    let started = std::time::Instant::now();
    let mut kills = 0;
    for round in part * PER_PART..(part + 1) * PER_PART {
        let phase = [Phase::BeforeRecorded, Phase::Recorded, Phase::Deleting][(round % 3) as usize];
        kills += one_round(round, phase, &mut dice, seed).await;
    }
    println!("{kills} kills in {:?}", started.elapsed());
    assert!(kills >= PER_PART, "{kills} kills");
}

fn rfc3339(at: OffsetDateTime) -> String {
    at.format(&Rfc3339).unwrap()
}

/// `--now` of the `n`-th start after the fire: `n` × 4 minutes later, within the lateness.
fn restart_at(n: u32) -> String {
    rfc3339(FIRE + time::Duration::minutes(4 * i64::from(n)))
}

/// One fresh cluster and store; kills at `phase`, restarts until the run completes, checks.
async fn one_round(round: u64, phase: Phase, dice: &mut Dice, seed: u64) -> u64 {
    let scene = scene(
        SimConfig {
            days_of_indices: 300,
            today: FIRE.date(),
            delete_apply: DELETE_APPLY,
            ..SimConfig::default()
        },
        r#"kind = "sim""#,
    )
    .await;
    scene.sim.set_faults(vec![
        format!(
            "latency={}ms,method=GET,path=/_cat/indices",
            LISTING.as_millis()
        )
        .parse::<FaultRule>()
        .unwrap(),
        format!("latency={}ms,method=GET,path=/flog-", LOOK.as_millis())
            .parse()
            .unwrap(),
    ]);
    let socket = scene.dir.path().join("console.sock");
    crate::support::add_nightly_prune(&scene.config, &socket, 300);
    let before: Vec<String> = scene.sim.index_names();
    give_standing_approval(&scene.config).await;
    arm(&scene, &socket).await;

    // A second before the fire; it fires once its clock reads 03:00.
    let bot = Bot::run_with(
        &scene.config,
        &["--now", &rfc3339(FIRE - time::Duration::SECOND)],
    );
    let what = kill_at(&scene, bot, phase, dice, 0).await;
    let what = format!("round {round} (seed {seed}): killed {what}");
    println!("{what}");
    let (last, runs) = stored(&scene.config);
    let sent = deletes(&scene);
    match phase {
        Phase::BeforeRecorded => {
            assert_eq!(
                last.map(|l| l.outcome),
                Some(FireOutcome::Armed),
                "{what}: the fire was recorded"
            );
            assert!(runs.is_empty(), "{what}: {runs:?}");
        }
        Phase::Recorded | Phase::Deleting => {
            assert_eq!(last, Some(started_r1()), "{what}");
            assert_eq!(runs.len(), 1, "{what}");
            assert_eq!(
                sent == 0,
                phase == Phase::Recorded,
                "{what}: {sent} DELETEs"
            );
        }
    }
    let mut kills = 1;
    let mut start = 1;
    if phase != Phase::Deleting {
        // The restart fires (or resumes) the run; killed again during its deletes.
        let sent = deletes(&scene);
        let _ = std::fs::remove_file(&socket);
        let bot = serve_with(&scene.config, &socket, &["--now", &restart_at(start)]).await;
        fired_once(&socket, &what).await;
        let again = kill_at(&scene, Bot::from(bot), Phase::Deleting, dice, sent).await;
        println!("  and its restart {again}");
        kills += 1;
        start += 1;
    }
    complete(&scene, &socket, start, &what).await;
    check(&scene, &before, &what);
    kills
}

/// The fire's record once its run is created.
fn started_r1() -> FireRecord {
    FireRecord {
        at: FIRE,
        outcome: FireOutcome::Started {
            run: RunId::new(1),
            waits: None,
        },
    }
}

/// alice asks for a standing approval of the schedule and bob approves it, an hour before the
/// fire, for a month: through the engine, as the console and Discord record them (the console
/// of these tests speaks as alice only).
async fn give_standing_approval(config: &Path) {
    let config = opsbot::config::Config::load(config).unwrap();
    let path = config.store.sled_path().unwrap().to_owned();
    let store = tokio::task::spawn_blocking(move || open_store(&path))
        .await
        .unwrap();
    let clock = Clock::starting_at(FIRE - time::Duration::HOUR);
    let engine = Engine::with_clock(&config, store, Arc::new(Silent), clock).unwrap();
    let people = config.people().unwrap();
    let (alice, bob) = (
        people.on_discord(1, &[]).unwrap(),
        people.on_discord(2, &[]).unwrap(),
    );
    let name = ScheduleName::parse(SCHEDULE).unwrap();
    let (asked, _) = engine.ask_standing(&alice, &name).await.unwrap();
    let until = Some(FIRE + time::Duration::days(30));
    engine
        .approve_standing(&bob, &name, asked.digest.as_str(), until)
        .await
        .unwrap();
}

/// The bot runs an hour before the fire: its scheduler arms the schedule (only fires after
/// the first look count); stopped as systemd stops it.
async fn arm(scene: &Scene, socket: &Path) {
    let bot = serve_with(
        &scene.config,
        socket,
        &["--now", &rfc3339(FIRE - time::Duration::HOUR)],
    )
    .await;
    console_until(
        socket,
        &format!("/schedule show name:{SCHEDULE}\n"),
        "scheduler started; no fire yet",
    )
    .await;
    stop(bot);
}

/// Every index name the cluster received a DELETE for, in order (once per DELETE naming it).
fn deleted_names(scene: &Scene) -> Vec<String> {
    scene
        .sim
        .calls()
        .into_iter()
        .filter(|c| c.method == "DELETE")
        .flat_map(|c| c.path_names())
        .collect()
}

/// How many DELETEs the cluster has received.
fn deletes(scene: &Scene) -> usize {
    scene
        .sim
        .calls()
        .iter()
        .filter(|c| c.method == "DELETE")
        .count()
}

/// SIGKILLs `bot`, just started, at a random point of `phase`; `sent`: the DELETEs before it
/// started. Says where.
async fn kill_at(
    scene: &Scene,
    mut bot: Bot,
    phase: Phase,
    dice: &mut Dice,
    sent: usize,
) -> String {
    let calls = || scene.sim.calls();
    let known = calls().len();
    let (what, delay) = match phase {
        Phase::BeforeRecorded if dice.below(2) == 0 => {
            // Any time before the fire's first request.
            let delay = Duration::from_millis(dice.below(800));
            ("before the fire's first request".to_owned(), delay)
        }
        Phase::BeforeRecorded => {
            until("the fire's first request", || {
                calls().len() > known || bot.has_ended()
            })
            .await;
            let delay = Duration::from_millis(dice.below(LISTING.as_millis() as u64 / 2));
            ("while the fire is planned".to_owned(), delay)
        }
        Phase::Recorded => {
            until("the run's first request", || {
                calls()
                    .iter()
                    .any(|c| c.path.starts_with("/flog-") && c.method == "GET")
                    || bot.has_ended()
            })
            .await;
            let delay = Duration::from_millis(dice.below(LOOK.as_millis() as u64 / 2));
            ("after the run's first request".to_owned(), delay)
        }
        Phase::Deleting => {
            let nth = sent + 1 + dice.below(2) as usize;
            until("a delete", || deletes(scene) >= nth || bot.has_ended()).await;
            let delay = Duration::from_millis(dice.below(2 * DELETE_APPLY.as_millis() as u64));
            (format!("after DELETE {nth}"), delay)
        }
    };
    assert!(!bot.has_ended(), "the bot ended by itself");
    tokio::time::sleep(delay).await;
    bot.kill();
    format!("{what} + {delay:?}")
}

/// The schedule's last fire and every run, as the store says between bots.
fn stored(config: &Path) -> (Option<FireRecord>, Vec<Run>) {
    let path = opsbot::config::Config::load(config)
        .unwrap()
        .store
        .sled_path()
        .unwrap()
        .to_owned();
    let store = open_store(&path);
    let last = store
        .last_fire(&ScheduleName::parse(SCHEDULE).unwrap())
        .unwrap();
    (last, store.runs().unwrap())
}

/// Once the restarted bot's scheduler has looked (the fire was due, or done, and within the
/// lateness): the fire is recorded with its run r-1.
async fn fired_once(socket: &Path, what: &str) {
    let show = format!("/schedule show name:{SCHEDULE}\n");
    let said = console_until(socket, &show, "last: 2027-02-10 03:00 UTC").await;
    assert!(
        said.contains("last: 2027-02-10 03:00 UTC · started r-1"),
        "{what}: {said}"
    );
}

/// Starts the bot `start` × 4 minutes after the fire, until run r-1 has ended.
async fn complete(scene: &Scene, socket: &Path, start: u32, what: &str) {
    let _ = std::fs::remove_file(socket);
    let bot = serve_with(&scene.config, socket, &["--now", &restart_at(start)]).await;
    fired_once(socket, what).await;
    // Its status line (or an edit of its progress message shown meanwhile) says it ended.
    let ended = [
        "succeeded in",
        "failed after",
        "cancelled by",
        "rejected by",
        "withdrawn by",
        "expired:",
    ];
    let said = console_until_with(socket, "/run status id:r-1\n", "r-1 ended", |said| {
        said.lines()
            .any(|l| l.contains(" r-1 · ") && ended.iter().any(|e| l.contains(e)))
    })
    .await;
    assert!(said.contains("✅ r-1 · "), "{what}: {said}");
    stop(bot);
}

/// The round's checks, on the store and the cluster's request log.
fn check(scene: &Scene, before: &[String], what: &str) {
    let (last, runs) = stored(&scene.config);
    assert_eq!(last, Some(started_r1()), "{what}: the fire's record");
    assert_eq!(runs.len(), 1, "{what}: one run for one fire: {runs:#?}");
    let run = &runs[0];
    assert_eq!(run.outcome(), Some(&Outcome::Succeeded), "{what}: {run:#?}");
    let scheduled = run.scheduled.as_ref().unwrap();
    assert_eq!(scheduled.fire_at, FIRE, "{what}");
    assert!(
        scheduled.standing.is_some(),
        "{what}: under the standing approval"
    );
    assert!(run.approval.is_none(), "{what}: nobody approved it by hand");

    let rule = Retention {
        prefix: Some(IndexName::parse("flog-").unwrap()),
        older_than: RetentionDays::parse("30").unwrap(),
    };
    let selected: BTreeSet<&String> = before
        .iter()
        .filter(|name| matches!(rule.judge(name, FIRE), Verdict::Expired { .. }))
        .collect();
    assert!(selected.len() > 250, "{what}: {} selected", selected.len());
    let mut sent: BTreeMap<String, usize> = BTreeMap::new();
    for name in deleted_names(scene) {
        *sent.entry(name).or_default() += 1;
    }
    let twice: Vec<_> = sent.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        twice.is_empty(),
        "{what}: sent in more than one DELETE: {twice:?}"
    );
    let sent: BTreeSet<&String> = sent.keys().collect();
    assert_eq!(sent, selected, "{what}: the names sent");
    let world = scene.sim.state();
    let mut times: BTreeMap<&String, usize> = BTreeMap::new();
    for name in &world.deleted {
        *times.entry(name).or_default() += 1;
    }
    assert!(times.values().all(|n| *n == 1), "{what}: {times:?}");
    let deleted: BTreeSet<&String> = times.keys().copied().collect();
    assert_eq!(deleted, selected, "{what}: the indices deleted");
}
