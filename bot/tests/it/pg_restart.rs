//! The store's PostgreSQL restarted in the middle of a prune, with the real binary.
//!
//! A brief outage (a fast shutdown and a start, well within the lease's tenure): the run
//! pauses (no DELETE starts while the database is down, but the one already in flight), then
//! goes on under the same lease and succeeds, each index deleted once.
//!
//! An outage longer than the tenure: the active instance cannot renew in time and steps down
//! (it exits non-zero saying so); started again once the database is back, it takes the lease
//! at a newer epoch, resumes the run from the store and finishes it, each index deleted once.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::support::ha::{self, Health, Instance};
use opsbot_commands::index::IndexName;
use opsbot_commands::name::RunId;
use opsbot_commands::retention::{Retention, RetentionDays, Verdict};
use opsbot_commands::run::Outcome;
use opsbot_search_sim::{SimConfig, SimHandle};
use opsbot_tmp_postgres::Server;
use time::OffsetDateTime;

const PRUNE: &str = "/indices prune cluster:logs older_than_days:30";

/// The brief outage's `takeover`: the lease lasts 6 s, is renewed every 1.5 s, and the instance
/// acts until 4.8 s after it sent the last renewal that got through. An outage shorter than
/// 4.8 - 1.5 s cannot lapse it, however slowly a loaded machine stops and starts the server.
const LONG_TAKEOVER: &str = "9s";
const SURVIVABLE: Duration = Duration::from_millis(3300);
/// With the usual `takeover` of 3 s the lease lasts 2 s: an outage of 4 s must lapse it.
const FATAL: Duration = Duration::from_secs(4);
/// How long the brief outage lasts before the server is started again.
const BRIEF: Duration = Duration::from_millis(300);

/// The two tests stop their servers; one at a time keeps the timing honest on two cores.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

struct Scene {
    server: Server,
    sim: SimHandle,
    store: opsbot_state::Store,
    instance: Instance,
    before: Vec<String>,
    _dir: tempfile::TempDir,
}

/// A server of its own (this test stops it), a cluster whose deletions take 150 ms, one
/// instance (under `takeover`, if given), active, with an approved prune under way (two DELETEs
/// arrived).
async fn scene(what: &str, takeover: Option<&str>) -> Scene {
    let server = Server::start().unwrap_or_else(|e| panic!("these tests need PostgreSQL: {e}"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let sim = opsbot_search_sim::spawn(
        SimConfig {
            // Seven DELETEs of about 170 names each.
            days_of_indices: 1200,
            delete_apply: Duration::from_millis(150),
            ..SimConfig::default()
        },
        listener,
    )
    .await
    .unwrap();
    let before = sim.index_names();
    let dir = tempfile::tempdir().unwrap();
    let body = format!(
        r#"
[engine]
poll_interval = "50ms"
request_timeout = "5s"

[engine.retry]
attempts = 5
base_delay = "50ms"
max_delay = "500ms"

[[clusters]]
name = "logs"
url = "{}"
nodes = ["10.0.0.11", "10.0.0.12", "10.0.0.13", "10.0.0.14", "10.0.0.15"]

[clusters.node_control]
kind = "sim"
"#,
        sim.base_url()
    );
    let mut instance = Instance::new(
        dir.path(),
        "a",
        &server.url("postgres"),
        &ha::fresh_schema("restart"),
        &body,
    );
    if let Some(takeover) = takeover {
        instance.set_takeover(takeover);
    }
    instance.start();
    instance.until_active(what).await;
    let store = ha::open(&instance.config).await;
    ha::ask_and_approve(&instance.socket, &store, PRUNE, RunId::new(1), what).await;
    crate::support::until("two DELETEs", || deletes(&sim) >= 2).await;
    Scene {
        server,
        sim,
        store,
        instance,
        before,
        _dir: dir,
    }
}

fn deletes(sim: &SimHandle) -> usize {
    sim.calls().iter().filter(|c| c.method == "DELETE").count()
}

fn epoch(health: &Health) -> Option<u64> {
    let Health::Answer(_, body) = health else {
        return None;
    };
    let rest = &body[body.find("at epoch ")? + "at epoch ".len()..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// Each selected index sent in one DELETE and deleted once; nothing else deleted.
fn check_prune(scene: &Scene, what: &str) {
    let rule = Retention {
        prefix: Some(IndexName::parse("flog-").unwrap()),
        older_than: RetentionDays::DEFAULT,
    };
    let now = OffsetDateTime::now_utc();
    let selected: BTreeSet<&String> = scene
        .before
        .iter()
        .filter(|name| matches!(rule.judge(name, now), Verdict::Expired { .. }))
        .collect();
    let mut sent = BTreeSet::new();
    for call in scene.sim.calls().iter().filter(|c| c.method == "DELETE") {
        for name in call.path.trim_start_matches('/').split(',') {
            assert!(sent.insert(name.to_owned()), "{what}: {name} sent twice");
        }
    }
    let world = scene.sim.state();
    let mut times: BTreeMap<&String, usize> = BTreeMap::new();
    for name in &world.deleted {
        *times.entry(name).or_default() += 1;
    }
    assert!(times.values().all(|n| *n == 1), "{what}: {times:?}");
    let deleted: BTreeSet<&String> = times.keys().copied().collect();
    assert_eq!(deleted, selected, "{what}");
}

/// How soon after the database is back the run must have sent its next DELETE: the run tasks
/// look every 250 ms; a fixed pause of 5 s (what they waited before) is well past it.
const RESUMED_WITHIN: Duration = Duration::from_millis(2500);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_brief_database_restart_pauses_the_run_which_then_succeeds_under_the_same_lease() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let what = "brief outage";
    let mut scene = scene(what, Some(LONG_TAKEOVER)).await;
    let before = epoch(&scene.instance.health().await).unwrap();

    let down = Instant::now();
    scene.server.stop().unwrap();
    let at_stop = deletes(&scene.sim);
    // The outage itself: a moment (a DELETE and its look take about 200 ms here), then the
    // server's start.
    tokio::time::sleep(BRIEF).await;
    scene.server.start_again().unwrap();
    let back = Instant::now();
    let outage = back - down;
    let during = deletes(&scene.sim) - at_stop;
    // The run goes on as soon as the store answers again, not after a fixed pause.
    let sent = deletes(&scene.sim);
    crate::support::until("a DELETE after the database is back", || {
        deletes(&scene.sim) > sent
    })
    .await;
    let resumed = back.elapsed();
    assert!(
        resumed < RESUMED_WITHIN,
        "{what}: the run went on {resumed:?} after the database was back"
    );
    assert!(
        outage < SURVIVABLE,
        "the restart took {outage:?}: too long for this test's claim"
    );
    // At most the DELETE whose write-ahead record was in before the database went down.
    assert!(
        during <= 1,
        "{what}: {during} DELETEs while the database was down"
    );

    let states = ha::until_finished(&scene.store, &[RunId::new(1)], what).await;
    let log = scene.instance.log();
    assert_eq!(states, [Outcome::Succeeded], "{what}: {log}");
    assert!(scene.instance.is_running(), "{what}: it ended:\n{log}");
    let health = scene.instance.health().await;
    assert!(health.is_active(), "{what}: {health:?}\n{log}");
    assert_eq!(epoch(&health), Some(before), "{what}: the same lease");
    check_prune(&scene, what);
    println!(
        "{what}: the database was down {outage:.2?} ({during} DELETE meanwhile); the run went \
         on {resumed:.2?} after it was back, under epoch {before}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_outage_longer_than_the_tenure_makes_the_instance_step_down_and_a_restart_finish()
 {
    let _alone = ONE_AT_A_TIME.lock().await;
    let what = "long outage";
    let mut scene = scene(what, None).await;
    let before = epoch(&scene.instance.health().await).unwrap();

    scene.server.stop().unwrap();
    let at_stop = deletes(&scene.sim);
    // The outage itself: longer than the lease.
    tokio::time::sleep(FATAL).await;
    let during = deletes(&scene.sim) - at_stop;
    assert!(
        during <= 1,
        "{what}: {during} DELETEs while the database was down"
    );
    scene.server.start_again().unwrap();

    let (status, log) = scene.instance.exited(what).await;
    assert!(
        !status.success() && log.contains("stepped down, another instance is active"),
        "{what}: it ended {status:?}:\n{log}"
    );
    // Started again (as systemd would), it takes the lease anew and finishes the run.
    scene.instance.start();
    scene.instance.until_active(what).await;
    let after = epoch(&scene.instance.health().await).unwrap();
    assert!(after > before, "{what}: epoch {after} after {before}");
    let states = ha::until_finished(&scene.store, &[RunId::new(1)], what).await;
    assert_eq!(
        states,
        [Outcome::Succeeded],
        "{what}: {}",
        scene.instance.logs()
    );
    check_prune(&scene, what);
    println!("{what}: stepped down from epoch {before}; restarted, finished at epoch {after}");
}
