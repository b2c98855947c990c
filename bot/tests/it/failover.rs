//! High availability with the real binary: two `opsbot run` instances (a and b) on one
//! throwaway PostgreSQL, a fresh schema per round.
//!
//! The torture: a prune, a node removal and a stale-placement deletion are asked for by alice and
//! approved by bob at the console socket of the active instance; the active instance is then
//! SIGKILLed at random moments, and restarted as the new standby, until every run has finished.
//! Checked: no run lost (each succeeded), no side effect repeated (the simulators' request
//! logs: each index sent in one DELETE and deleted once, the node drained, then stopped once,
//! each stale allocation deleted once, nothing else deleted), no approval lost (one approval
//! per run in the audit, none asked for again), each takeover at a newer epoch. The takeover
//! time (the kill to the other instance's `/healthz` saying active) is printed as p50/p99.
//! The kill moments come from a printed seed; `OPSBOT_CRASH_SEED` replays a failure.
//!
//! Fencing: the active instance is SIGSTOPped in the middle of a prune's deletes, the standby
//! takes over and resumes the run, and the stopped one is let go on (SIGCONT): it sends no
//! request that changes anything, commits no write to the store, and exits non-zero saying it
//! stepped down; the other one finishes the run.
//!
//! A clean stop (SIGTERM) gives the lease up: the standby takes over at its next ask.
//!
//! `cargo test -p opsbot --test failover -- --nocapture` prints the seed and the figures.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::Dice;
use crate::support::ha::{self, Health, Instance, Tap, WriteLog};
use crate::support::worlds::StaleCloud;
use nix::sys::signal::Signal;
use opsbot_commands::audit::AuditKind;
use opsbot_commands::index::IndexName;
use opsbot_commands::name::RunId;
use opsbot_commands::retention::{Retention, RetentionDays, Verdict};
use opsbot_commands::run::Outcome;
use opsbot_search_sim::{FaultRule, SimConfig, SimHandle};
use time::OffsetDateTime;

/// Kills per run of the test suite, at least: this many in each of eight parts, side by side
/// (32 in all; a part stays well under 30 s).
const PER_PART: u64 = 4;
/// A round kills at most this often before its runs have finished.
const KILLS_PER_ROUND: u64 = 8;

const PRUNE: &str = "/indices prune cluster:logs older_than_days:30";
const REMOVE: &str = "/cluster remove-node cluster:nodes node:10.0.1.14";
const STALE: &str = "/placement stale cloud:prod host:compute-03";

/// The simulated cluster to prune, the one to remove a node from, and the cloud with stale
/// allocations on compute-03.
struct World {
    prune: SimHandle,
    removal: SimHandle,
    cloud: StaleCloud,
    before: Vec<String>,
}

impl World {
    /// `days` of indices to prune (about 170 names fit in a DELETE), each deletion taking
    /// `delete_apply`.
    async fn start(days: u32, delete_apply: Duration) -> World {
        let prune = sim(SimConfig {
            days_of_indices: days,
            // The deletion is queued when the DELETE arrives and applied this much later: a
            // kill meanwhile cuts the request off, but the deletion goes on, so a DELETE the
            // cluster received must never be sent again.
            delete_apply,
            ..SimConfig::default()
        })
        .await;
        prune.set_faults(vec![
            "latency=15ms,method=GET,path=/_cat/indices"
                .parse::<FaultRule>()
                .unwrap(),
        ]);
        let removal = sim(SimConfig {
            days_of_indices: 20,
            speed: 20.0,
            first_node_ip: Ipv4Addr::new(10, 0, 1, 11),
            ..SimConfig::default()
        })
        .await;
        let cloud = StaleCloud::start(Duration::from_millis(400)).await;
        let before = prune.index_names();
        World {
            prune,
            removal,
            cloud,
            before,
        }
    }

    /// The config's clusters, cloud and engine; the pruned cluster at `prune_url` (the
    /// simulator's, or a tap in front of it).
    fn body(&self, dir: &Path, prune_url: &str) -> String {
        let password = dir.join("prod-password");
        std::fs::write(&password, "adminpass\n").unwrap();
        format!(
            r#"
[engine]
poll_interval = "50ms"
node_timeout = "30s"
formation_timeout = "60s"
request_timeout = "5s"

[engine.retry]
attempts = 5
base_delay = "50ms"
max_delay = "500ms"

[[clusters]]
name = "logs"
url = "{prune_url}"
nodes = ["10.0.0.11", "10.0.0.12", "10.0.0.13", "10.0.0.14", "10.0.0.15"]

[clusters.node_control]
kind = "sim"

[[clusters]]
name = "nodes"
url = "{removal}"
nodes = ["10.0.1.11", "10.0.1.12", "10.0.1.13", "10.0.1.14", "10.0.1.15"]

[clusters.node_control]
kind = "sim"

[[clouds]]
name = "prod"
auth_url = "{auth}"
username = "admin"
project = "admin"
password_file = "{password}"

[clouds.compute_control]
kind = "sim"
"#,
            removal = self.removal.base_url(),
            auth = self.cloud.cloud.identity_url(),
            password = password.display(),
        )
    }

    /// The indices the prune selects.
    fn selected(&self) -> BTreeSet<String> {
        let rule = Retention {
            prefix: Some(IndexName::parse("flog-").unwrap()),
            older_than: RetentionDays::DEFAULT,
        };
        let now = OffsetDateTime::now_utc();
        self.before
            .iter()
            .filter(|name| matches!(rule.judge(name, now), Verdict::Expired { .. }))
            .cloned()
            .collect()
    }

    /// Each selected index sent in one DELETE (never again, even after a kill cut one off:
    /// the cluster applies what it received) and deleted once; nothing else deleted.
    fn check_prune(&self, what: &str) {
        let selected = self.selected();
        assert!(selected.len() > 250, "{what}: {} selected", selected.len());
        let mut sent = BTreeSet::new();
        let calls = self.prune.calls();
        let summary = || {
            calls
                .iter()
                .filter(|c| c.method == "DELETE")
                .map(|c| {
                    let names: Vec<&str> = c.path.trim_start_matches('/').split(',').collect();
                    format!(
                        "#{} {:?} status {} hung up {}: {} names {}..{}",
                        c.seq,
                        c.opaque_id,
                        c.status,
                        c.hung_up,
                        names.len(),
                        names[0],
                        names[names.len() - 1]
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        for call in calls.iter().filter(|c| c.method == "DELETE") {
            for name in call.path.trim_start_matches('/').split(',') {
                assert!(
                    sent.insert(name.to_owned()),
                    "{what}: {name} was sent in a second DELETE (#{}); the DELETEs:\n{}",
                    call.seq,
                    summary()
                );
            }
        }
        let world = self.prune.state();
        let mut times: BTreeMap<&String, usize> = BTreeMap::new();
        for name in &world.deleted {
            *times.entry(name).or_default() += 1;
        }
        assert!(
            times.values().all(|n| *n == 1),
            "{what}: deleted more than once: {times:?}"
        );
        let deleted: BTreeSet<String> = times.keys().map(|n| (*n).clone()).collect();
        assert_eq!(deleted, selected, "{what}: the deleted indices");
    }
}

async fn sim(config: SimConfig) -> SimHandle {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    opsbot_search_sim::spawn(config, listener).await.unwrap()
}

/// The epoch a `/healthz` answer names.
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

/// `/healthz`, `/metrics` and the console sockets agree on who is active: `active` says so, at
/// the epoch `standby` names as the active one's; only `active` has 1 in `opsbot_active` and
/// answers at its console socket (the standby's socket may be a file a killed incarnation left).
/// A standby restarted a moment ago has not read the lease yet: it is given its first reading.
async fn check_roles(active: &Instance, standby: &mut Instance, what: &str) {
    standby
        .until_health(what, |h| h.is_standby() && epoch(h).is_some())
        .await;
    let (health, other) = (active.health().await, standby.health().await);
    assert!(health.is_active(), "{what}: {health:?}");
    assert!(other.is_standby(), "{what}: {other:?}");
    assert_eq!(
        epoch(&health),
        epoch(&other),
        "{what}: {health:?} {other:?}"
    );
    let Health::Answer(_, body) = &health else {
        unreachable!()
    };
    // "ok: active (host/pid at epoch N)"
    let holder = body
        .trim_start_matches("ok: active (")
        .split(" at epoch")
        .next()
        .unwrap();
    let epoch = epoch(&health).unwrap();
    let gauge = format!("opsbot_lease_epoch{{holder=\"{holder}\"}} {epoch}");
    for (instance, acting) in [(active, 1), (standby, 0)] {
        let metrics = instance.metrics().await;
        assert!(
            metrics.contains(&format!("\nopsbot_active {acting}\n")),
            "{what}: {} says:\n{metrics}",
            instance.name
        );
        assert!(
            metrics.contains(&gauge),
            "{what}: {} lacks {gauge}:\n{metrics}",
            instance.name
        );
    }
    assert!(active.console_listens().await, "{what}: the active console");
    assert!(
        !standby.console_listens().await,
        "{what}: the standby answers at its console socket"
    );
}

/// Each run approved once, by bob, and never asked for again; nothing refused.
async fn check_approvals(store: &opsbot_state::Store, ids: &[RunId], what: &str) {
    let audit = ha::audit(store).await;
    for id in ids {
        let of_run: Vec<&AuditKind> = audit
            .iter()
            .filter(|e| e.run == Some(*id))
            .map(|e| &e.event)
            .collect();
        let approvals: Vec<_> = audit
            .iter()
            .filter(|e| e.run == Some(*id) && matches!(e.event, AuditKind::ApprovalGranted { .. }))
            .collect();
        assert_eq!(approvals.len(), 1, "{what}: {id}'s approvals: {of_run:#?}");
        assert_eq!(
            approvals[0]
                .actor
                .as_ref()
                .and_then(|a| a.person.as_ref())
                .map(ToString::to_string)
                .as_deref(),
            Some("bob"),
            "{what}: {id} approved by bob"
        );
        let requested = of_run
            .iter()
            .filter(|e| matches!(e, AuditKind::RunRequested { .. }))
            .count();
        assert_eq!(requested, 1, "{what}: {id} asked for once: {of_run:#?}");
    }
    let refused: Vec<_> = audit
        .iter()
        .filter(|e| matches!(e.event, AuditKind::Refused { .. }))
        .collect();
    assert!(refused.is_empty(), "{what}: refusals: {refused:#?}");
}

crate::in_parts!(
    sigkill_the_active_instance_at_random_moments_loses_no_run_repeats_no_side_effect
    => torture: part_1 = 0, part_2 = 1, part_3 = 2, part_4 = 3,
       part_5 = 4, part_6 = 5, part_7 = 6, part_8 = 7
);

/// Part `part` of the torture: rounds until it has killed [`PER_PART`] times.
async fn torture(part: u64) {
    let mut dice = Dice::for_part(part);
    let seed = dice.seed();
    let started = Instant::now();
    let mut takeovers = Vec::new();
    let mut rounds = 0;
    while (takeovers.len() as u64) < PER_PART {
        torture_round(rounds, &mut dice, seed, &mut takeovers).await;
        rounds += 1;
    }
    let (p50, p99) = (
        ha::percentile(&takeovers, 50.0),
        ha::percentile(&takeovers, 99.0),
    );
    let max = takeovers.iter().max().copied().unwrap_or_default();
    eprintln!(
        "failover: {} kills in {rounds} rounds, {:.1?}; takeover (kill to the other instance's \
         /healthz saying active, [store] takeover = \"{}\"): p50 {p50:.2?}, p99 {p99:.2?}, max \
         {max:.2?} (seed {seed})",
        takeovers.len(),
        started.elapsed(),
        ha::TAKEOVER,
    );
    // A standby asks every 1/6 of the takeover and the lease lasts 2/3 of it: within it.
    assert!(
        max < Duration::from_secs(3),
        "a takeover took {max:?}: {takeovers:?}"
    );
}

async fn torture_round(round: u64, dice: &mut Dice, seed: u64, takeovers: &mut Vec<Duration>) {
    let what = format!("round {round} (seed {seed})");
    let pg = ha::shared_pg();
    let schema = ha::fresh_schema("failover");
    let world = World::start(900, Duration::from_millis(250)).await;
    let dir = tempfile::tempdir().unwrap();
    let body = world.body(dir.path(), &world.prune.base_url());
    let url = pg.url("postgres");
    let mut active = Instance::new(dir.path(), "a", &url, &schema, &body);
    let mut standby = Instance::new(dir.path(), "b", &url, &schema, &body);
    active.start();
    active.until_active(&what).await;
    standby.start();
    standby.until_standby(&what).await;
    let store = ha::open(&active.config).await;
    let ids = [RunId::new(1), RunId::new(2), RunId::new(3)];
    let mut last_epoch = epoch(&active.health().await).unwrap();
    let mut kills = 0;
    // The active instance dies and the killed one comes back as the standby; the takeover
    // is timed and must be at a newer epoch.
    let mut fail_over = async |active: &mut Instance, standby: &mut Instance, kills: &mut u64| {
        let what = format!("{what}, kill {kills} of {}", active.name);
        let killed_at = Instant::now();
        active.kill();
        let took = standby.until_active(&what).await - killed_at;
        takeovers.push(took);
        *kills += 1;
        let now = epoch(&standby.health().await).unwrap();
        assert!(
            now > last_epoch,
            "{what}: taken over at epoch {now}, after {last_epoch}"
        );
        last_epoch = now;
        active.start();
        active.until_standby(&what).await;
        std::mem::swap(active, standby);
    };
    for (request, id) in [PRUNE, REMOVE, STALE].into_iter().zip(ids) {
        ha::ask(&active.socket, request, id, &what).await;
    }
    // In one round of three, the active instance dies while the plans wait for bob, who
    // approves them at the other one's console.
    let before_approval = dice.below(3) == 0;
    if before_approval {
        fail_over(&mut active, &mut standby, &mut kills).await;
    }
    for id in ids {
        ha::approve(&active.socket, &store, id, &what).await;
    }

    while kills < KILLS_PER_ROUND && !ha::all_finished(&store, &ids).await {
        // The random moment: right away (the runs just resumed) up to well into a step.
        tokio::time::sleep(Duration::from_millis(dice.below(1200))).await;
        fail_over(&mut active, &mut standby, &mut kills).await;
    }

    let states = ha::until_finished(&store, &ids, &what).await;
    let logs = || format!("{}\n{}", active.logs(), standby.logs());
    assert!(
        states.iter().all(|s| *s == Outcome::Succeeded),
        "{what}: after {kills} kills the runs ended {states:?}; the logs:\n{}",
        logs()
    );
    let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.check_prune(&what);
        crate::support::worlds::check_removed(&world.removal, "10.0.1.14".parse().unwrap(), &what);
        world.cloud.check(&what);
    }));
    if let Err(panic) = checked {
        eprintln!("{what}: the logs of the instances:\n{}", logs());
        std::panic::resume_unwind(panic);
    }
    check_approvals(&store, &ids, &what).await;
    check_roles(&active, &mut standby, &what).await;
    let waiting = if before_approval {
        " (the first while the plans waited for approval)"
    } else {
        ""
    };
    println!("{what}: {kills} kills{waiting}, the runs succeeded");
}

crate::in_parts!(
    a_stopped_active_instance_that_wakes_after_a_takeover_does_nothing_and_steps_down
    => fencing: part_1 = 0, part_2 = 1, part_3 = 2
);

/// One round of the fencing test (of three, run side by side): a is stopped at a drawn moment
/// of its deletes.
async fn fencing(part: u64) {
    let mut dice = Dice::for_part(part);
    let seed = dice.seed();
    // After the first, second or third DELETE arrived, plus up to 400 ms: while it is
    // applied, after it was answered, during the look before the next one.
    let after = 1 + dice.below(3) as usize;
    let delay = Duration::from_millis(dice.below(400));
    let what = format!("fencing {part} (seed {seed}): stopped {delay:?} after DELETE {after}");
    fencing_round(&what, after, delay).await;
}

async fn fencing_round(what: &str, after: usize, delay: Duration) {
    let pg = ha::shared_pg();
    let schema = ha::fresh_schema("fencing");
    // Slow deletes: the prune is mid-way for seconds, and a DELETE is in flight when a stops.
    let world = World::start(1200, Duration::from_millis(300)).await;
    let tap = Tap::start(world.prune.addr()).await;
    let dir = tempfile::tempdir().unwrap();
    let url = pg.url("postgres");
    // a reaches the cluster through the tap and the store as its own role: what it does after
    // it is let go on can be told apart from what b does.
    let mut a = Instance::new(
        dir.path(),
        "a",
        &ha::as_user(&url, "opsbot_a"),
        &schema,
        &world.body(dir.path(), &tap.url()),
    );
    let mut b = Instance::new(
        dir.path(),
        "b",
        &url,
        &schema,
        &world.body(dir.path(), &world.prune.base_url()),
    );
    let store = ha::open(&b.config).await; // creates the schema's tables
    let writes = WriteLog::install(&url, &schema, &["opsbot_a"]).await;
    a.start();
    a.until_active(what).await;
    b.start();
    b.until_standby(what).await;
    let id = RunId::new(1);
    ha::ask_and_approve(&a.socket, &store, PRUNE, id, what).await;

    let deletes = |sim: &SimHandle| sim.calls().iter().filter(|c| c.method == "DELETE").count();
    crate::support::until("a's DELETEs", || deletes(&world.prune) >= after).await;
    // The drawn moment.
    tokio::time::sleep(delay).await;
    a.signal(Signal::SIGSTOP);
    let stopped_at = Instant::now();
    let took = b.until_active(what).await - stopped_at;
    let sent_by_a = deletes(&world.prune);
    // b resumes the run: its own DELETEs arrive.
    let deadline = Instant::now() + crate::support::PATIENCE;
    while deletes(&world.prune) <= sent_by_a {
        assert!(
            Instant::now() < deadline,
            "{what}: b never deleted after taking over; its log:\n{}",
            b.log()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let mark = writes.mark().await;
    let woke_at = Instant::now();
    a.signal(Signal::SIGCONT);
    let (status, log) = a.exited(what).await;
    assert!(
        !status.success() && log.contains("stepped down, another instance is active"),
        "{what}: a ended {status:?}:\n{log}"
    );

    let states = ha::until_finished(&store, &[id], what).await;
    assert_eq!(states, [Outcome::Succeeded], "{what}: {}", b.logs());
    let after: Vec<String> = tap.requests_since(woke_at);
    let changing: Vec<&String> = after.iter().filter(|r| !r.starts_with("GET ")).collect();
    assert!(
        changing.is_empty(),
        "{what}: a sent after it woke: {after:?}\n{log}"
    );
    let written = writes.since(mark, "opsbot_a").await;
    assert!(
        written.is_empty(),
        "{what}: a wrote to the store after it woke: {written:?}\n{log}"
    );
    assert!(
        writes.count("opsbot_a").await > 0,
        "{what}: a's writes are told apart (it wrote while active)"
    );
    assert!(
        !writes.since(mark, "opsbot").await.is_empty(),
        "{what}: b wrote meanwhile"
    );
    world.check_prune(what);
    check_approvals(&store, &[id], what).await;
    assert!(b.health().await.is_active(), "{what}");
    println!(
        "{what}: b took over {took:.2?} after a stopped; a, let go on, sent {} reads and no \
         other request, wrote nothing, and stepped down",
        after.len()
    );
    for line in log
        .lines()
        .filter(|l| l.contains("WARN") || l.contains("ERROR"))
    {
        println!("{what}: a said: {line}");
    }
}

/// A clean stop (SIGTERM, as systemd stops the bot for a deploy) in the middle of a prune
/// gives the lease up: the standby takes over at its next ask (a sixth of the takeover), not
/// when the lease would have expired, and finishes the run; each index deleted once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_hands_the_lease_over_at_once() {
    let what = "sigterm";
    let pg = ha::shared_pg();
    let schema = ha::fresh_schema("sigterm");
    let world = World::start(1200, Duration::from_millis(300)).await;
    let dir = tempfile::tempdir().unwrap();
    let body = world.body(dir.path(), &world.prune.base_url());
    let url = pg.url("postgres");
    let mut a = Instance::new(dir.path(), "a", &url, &schema, &body);
    let mut b = Instance::new(dir.path(), "b", &url, &schema, &body);
    a.start();
    a.until_active(what).await;
    b.start();
    b.until_standby(what).await;
    let store = ha::open(&a.config).await;
    let id = RunId::new(1);
    ha::ask_and_approve(&a.socket, &store, PRUNE, id, what).await;
    let deletes = |sim: &SimHandle| sim.calls().iter().filter(|c| c.method == "DELETE").count();
    crate::support::until("a's first DELETE", || deletes(&world.prune) >= 1).await;

    let stopped_at = Instant::now();
    a.signal(Signal::SIGTERM);
    let took = b.until_active(what).await - stopped_at;
    let (status, log) = a.exited(what).await;
    assert!(status.success(), "{what}: a ended {status:?}:\n{log}");
    // b asks every 0.5 s; the lease would have lasted 2 s more.
    assert!(
        took < Duration::from_millis(1500),
        "{what}: b took over {took:?} after a stopped:\n{log}"
    );
    let states = ha::until_finished(&store, &[id], what).await;
    assert_eq!(states, [Outcome::Succeeded], "{what}: {}", b.logs());
    world.check_prune(what);
    check_approvals(&store, &[id], what).await;
    println!("{what}: b took over {took:.2?} after a was stopped cleanly");
}
