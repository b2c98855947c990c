//! `cargo bench -p opsbot --bench restart`: what one `/cluster restart cluster:logs` costs on a
//! 5-node simulated log cluster, and how promptly its waits notice what they wait for.
//!
//! Not a timed test: it asserts nothing about speed, it prints figures for docs/PERFORMANCE.md.
//! The engine, service and progress publisher run in-process (as the e2e harness does) so that
//! the stored run's step timestamps can be set against the simulator's world; the memory figures
//! come from the real binary, because the in-process figures would include the simulator.

mod common;

#[allow(dead_code)] // The bench uses a part of the tests' helpers.
#[path = "../tests/it/support/mod.rs"]
mod support;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail, ensure};
use common::{Console, Environment, mib, proc_status_kib};
use opsbot::config::Config;
use opsbot::engine::Engine;
use opsbot::progress::{ChatError, ChatTransport, Publisher};
use opsbot::service::Service;
use opsbot_commands::name::RunId;
use opsbot_commands::parse::{self, Origin};
use opsbot_commands::people::{Actor, PersonRef, Roles, Surface};
use opsbot_commands::plan::{Action, ClusterWait};
use opsbot_commands::render::ProgressView;
use opsbot_commands::run::{ChannelId, MessageId, Outcome, Run, StepState};
use opsbot_search_sim::{Call, HealthStatus, NodeStatus, SimConfig, SimHandle};
use time::OffsetDateTime;

const COMMAND: &str = "/cluster restart cluster:logs";
/// The engine's poll interval: the bound the issue sets for noticing a condition.
const POLL_INTERVAL_MS: u64 = 100;
/// Simulated seconds per real second, one in-process restart each. At 50 a node boots in 100 ms
/// (5 simulated s), exactly one poll interval, so every join would land right at a poll and the
/// lag would always look tiny; the slower speeds move the joins to other points of the interval.
const SPEEDS: [f64; 5] = [50.0, 45.0, 40.0, 35.0, 30.0];
const DAILY_INDICES: u32 = 90;
/// How long the idle bot is left alone before its memory is read.
const IDLE: Duration = Duration::from_secs(2);
/// The longest anything here is waited for; keeps the benchmark bounded if something hangs.
const PATIENCE: Duration = Duration::from_secs(30);

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // `cargo test --all-targets` runs this without `--bench`: one restart then shows it still works.
    let speeds = if std::env::args().any(|a| a == "--bench") {
        &SPEEDS[..]
    } else {
        &SPEEDS[..1]
    };
    let mut measured = Vec::with_capacity(speeds.len());
    for &speed in speeds {
        measured.push(restart_in_process(speed).await?);
    }
    let memory = bot_memory().await?;
    print_report(&measured, &memory);
    Ok(())
}

/// A simulated cluster and an opsbot config file pointing at it.
struct Scene {
    sim: Arc<SimHandle>,
    config: PathBuf,
    _dir: tempfile::TempDir,
}

impl Scene {
    async fn start(speed: f64) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let sim = opsbot_search_sim::spawn(
            SimConfig {
                speed,
                days_of_indices: DAILY_INDICES,
                ..SimConfig::default()
            },
            listener,
        )
        .await?;
        let dir = tempfile::tempdir()?;
        // One file for the in-process engine and the binary alike, so both measure one setup.
        let config = support::write_config(
            dir.path(),
            &sim.base_url(),
            r#"kind = "sim""#,
            Duration::from_millis(POLL_INTERVAL_MS),
        );
        // What is measured is the restart, not its requester's confirmation.
        let mut file = std::fs::OpenOptions::new().append(true).open(&config)?;
        std::io::Write::write_all(&mut file, b"\n[approval]\n\"cluster restart\" = \"none\"\n")?;
        Ok(Self {
            sim: Arc::new(sim),
            config,
            _dir: dir,
        })
    }
}

/// The chat, reduced to counting calls: the figure is how many calls a run costs, not how fast
/// a chat platform answers.
#[derive(Default)]
struct CountingChat {
    calls: AtomicU64,
}

impl ChatTransport for CountingChat {
    async fn post(
        &self,
        _channel: &ChannelId,
        _view: &ProgressView,
    ) -> Result<MessageId, ChatError> {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        Ok(MessageId(format!("m{n}")))
    }

    async fn edit(
        &self,
        _channel: &ChannelId,
        _message: &MessageId,
        _view: &ProgressView,
    ) -> Result<(), ChatError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// When the simulated world first showed each change a wait looks for, as seen by the sampler.
#[derive(Default)]
struct Transitions {
    stopped: HashMap<Ipv4Addr, OffsetDateTime>,
    /// Up again after having been seen stopped.
    rejoined: HashMap<Ipv4Addr, OffsetDateTime>,
    /// Every node back, a master elected, and every primary active (yellow or green).
    formed: Option<OffsetDateTime>,
    /// What `_cat/nodes` would answer, from each change on.
    answers: Vec<(OffsetDateTime, Answer)>,
    /// The longest time between two samples: the resolution of the times above.
    max_gap: Duration,
}

/// What a wait's membership poll gets back, which decides how long the poll takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// A master is elected: the node list, at once.
    Formed,
    /// Nodes run but have no quorum: ES holds the request for its `master_timeout` (the bot asks
    /// for 5 s; simulated seconds here), then answers 503.
    NoMaster,
    /// No node runs: haproxy answers 503 at once.
    NoNodeUp,
}

impl Answer {
    fn label(self) -> &'static str {
        match self {
            Answer::Formed => "formed",
            Answer::NoMaster => "no master",
            Answer::NoNodeUp => "no node up",
        }
    }
}

/// Samples the world about every millisecond until `stop`, stamping each sample with the wall
/// clock read just before it, as the engine stamps `StepState::Done`.
fn sample(sim: &SimHandle, stop: &AtomicBool) -> Transitions {
    let mut seen = Transitions::default();
    let mut previous: Option<Instant> = None;
    while !stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        if let Some(previous) = previous {
            seen.max_gap = seen.max_gap.max(started - previous);
        }
        previous = Some(started);
        let at = OffsetDateTime::now_utc();
        let world = sim.state();
        for node in &world.nodes {
            match node.state {
                NodeStatus::Stopped => {
                    seen.stopped.entry(node.ip).or_insert(at);
                }
                NodeStatus::Up if seen.stopped.contains_key(&node.ip) => {
                    seen.rejoined.entry(node.ip).or_insert(at);
                }
                NodeStatus::Up | NodeStatus::Starting => {}
            }
        }
        let all_back = world
            .nodes
            .iter()
            .all(|n| seen.rejoined.contains_key(&n.ip) && n.state == NodeStatus::Up);
        let answer = if world.master.is_some() {
            Answer::Formed
        } else if world.nodes.iter().any(|n| n.state == NodeStatus::Up) {
            Answer::NoMaster
        } else {
            Answer::NoNodeUp
        };
        if seen.answers.last().is_none_or(|(_, last)| *last != answer) {
            seen.answers.push((at, answer));
        }
        if seen.formed.is_none()
            && all_back
            && world.master.is_some()
            && world.health.status != HealthStatus::Red
        {
            seen.formed = Some(at);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    seen
}

/// One wait step: how long after its condition held the run moved on.
struct WaitLag {
    step: usize,
    what: String,
    /// `Done.at` minus the sampled transition.
    lag_ms: f64,
    /// What the world answered when the run moved on: what decided the wait.
    answer: Answer,
    note: String,
}

/// The cluster API requests of one run, split as the waits' polls need them.
struct Requests {
    total: usize,
    /// Requests of planning: membership and version, before the run exists.
    planning: usize,
    /// One per look: every look starts with exactly one `GET /_cat/nodes?...&master_timeout=5s`.
    polls: usize,
    /// Polls whose membership answer was 200 (a formed cluster); the others got 503.
    polls_formed: usize,
    /// All GETs the waits sent: the membership calls plus `GET /_cluster/health`.
    wait_gets: usize,
    /// Everything else the run sent (settings, flush, the report's three `_cat` GETs).
    other: usize,
}

fn requests(calls: &[Call]) -> Requests {
    // Planning ends with its version probe, `GET /`; nothing else sends `GET /`.
    let planning = calls
        .iter()
        .position(|c| c.method == "GET" && c.path == "/")
        .map_or(0, |i| i + 1);
    let run = calls.get(planning..).unwrap_or_default();
    let is_poll = |c: &&Call| {
        c.method == "GET" && c.path == "/_cat/nodes" && c.query.contains("master_timeout")
    };
    let polls: Vec<&Call> = run.iter().filter(is_poll).collect();
    let health = run
        .iter()
        .filter(|c| c.method == "GET" && c.path == "/_cluster/health")
        .count();
    Requests {
        total: calls.len(),
        planning,
        polls: polls.len(),
        polls_formed: polls.iter().filter(|c| c.status == 200).count(),
        wait_gets: polls.len() + health,
        other: run.len() - polls.len() - health,
    }
}

/// The figures of one in-process restart.
struct RunFigures {
    speed: f64,
    /// From the command typed to the run's `finished_at`.
    duration: Duration,
    requests: Requests,
    waits: Vec<WaitLag>,
    events: u64,
    chat_calls: u64,
    posts: u64,
    edits: u64,
    sample_gap: Duration,
}

async fn restart_in_process(speed: f64) -> anyhow::Result<RunFigures> {
    let scene = Scene::start(speed).await?;
    let config = Config::load(&scene.config)?;
    let store = config.store.open()?;
    let publisher = Arc::new(Publisher::new(
        CountingChat::default(),
        store.clone(),
        config.progress,
    ));
    let engine = Engine::new(&config, store, publisher.clone())?;
    let service = Service::new(engine.clone(), publisher.clone());

    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (sim, stop) = (Arc::clone(&scene.sim), Arc::clone(&stop));
        std::thread::spawn(move || sample(&sim, &stop))
    };
    let typed = OffsetDateTime::now_utc();
    let reply = service
        .handle(
            &operator()?,
            &ChannelId("bench".into()),
            Origin::Console,
            parse::parse_line(COMMAND, Origin::Console)?,
        )
        .await;
    let id = reply
        .text
        .split_whitespace()
        .next()
        .and_then(|word| RunId::parse(word).ok())
        .with_context(|| format!("`{COMMAND}` did not start: {}", reply.text))?;
    let finished = finished(&engine, id).await;
    let flushed = tokio::time::timeout(PATIENCE, publisher.flushed()).await;
    stop.store(true, Ordering::Relaxed);
    let seen = sampler
        .join()
        .map_err(|_| anyhow!("the world sampler panicked"))?;
    let run = finished?;
    flushed.context("progress was not delivered")?;
    ensure!(
        run.outcome() == Some(&Outcome::Succeeded),
        "the restart did not succeed: {:?}",
        run.state
    );

    let counters = publisher.counters();
    let chat_calls = publisher.transport().calls.load(Ordering::Relaxed);
    let (posts, edits) = (
        counters.posts.load(Ordering::Relaxed),
        counters.edits.load(Ordering::Relaxed),
    );
    // The transport's own count checks the publisher's: every call it made was counted once.
    ensure!(
        chat_calls == posts + edits,
        "chat saw {chat_calls} calls, the publisher counted {posts} posts and {edits} edits"
    );
    Ok(RunFigures {
        speed,
        duration: (run.finished_at().unwrap_or(typed) - typed).try_into()?,
        requests: requests(&scene.sim.calls()),
        waits: wait_lags(&run, &seen)?,
        events: counters.events.load(Ordering::Relaxed),
        chat_calls,
        posts,
        edits,
        sample_gap: seen.max_gap,
    })
}

fn operator() -> anyhow::Result<Actor> {
    Ok(Actor {
        person: PersonRef {
            name: opsbot_commands::name::PersonName::parse("alice")?,
            via: Surface::Console {
                account: "alice".into(),
            },
        },
        roles: Roles {
            operator: true,
            approver: false,
        },
    })
}

async fn finished(engine: &Engine, id: RunId) -> anyhow::Result<Run> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let run = engine.run(id)?;
        if run.state.is_finished() {
            return Ok(run);
        }
        ensure!(
            Instant::now() < deadline,
            "{id} did not finish in {PATIENCE:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Sets each wait step's `Done.at` against the moment the world first showed its condition.
fn wait_lags(run: &Run, seen: &Transitions) -> anyhow::Result<Vec<WaitLag>> {
    let mut lags = Vec::new();
    for (step, action) in run.plan().cluster_steps().iter().enumerate() {
        let Action::Wait(wait) = action else {
            continue;
        };
        let (what, held_since) = match wait {
            ClusterWait::NodeLeft { node } => {
                (format!("{node} left"), seen.stopped.get(&node.ip()))
            }
            ClusterWait::NodeJoined { node } => {
                (format!("{node} joined"), seen.rejoined.get(&node.ip()))
            }
            ClusterWait::ClusterFormed { .. } => {
                ("cluster formed".to_owned(), seen.formed.as_ref())
            }
            ClusterWait::NodeDrained { node } => {
                bail!("step {}: a restart never drains {node}", step + 1)
            }
        };
        let Some(held_since) = held_since else {
            bail!("step {}: the sampler never saw `{what}`", step + 1);
        };
        let StepState::Done { at, note, .. } = &run.steps()[step] else {
            bail!("step {} is not done: {:?}", step + 1, run.steps()[step]);
        };
        lags.push(WaitLag {
            step: step + 1,
            what,
            lag_ms: (*at - *held_since).as_seconds_f64() * 1000.0,
            answer: seen
                .answers
                .iter()
                .rev()
                .find(|(since, _)| since <= at)
                .map_or(Answer::Formed, |(_, answer)| *answer),
            note: note.clone(),
        });
    }
    Ok(lags)
}

/// Resident memory of the real binary, in KiB.
struct Memory {
    /// What the bot's environment adds ([`Environment::describe`]).
    environment: String,
    idle_rss: u64,
    after_run_rss: u64,
    after_run_peak: u64,
    /// From writing the command to stdin to reading the run's final `✅ r-1` line.
    run_wall: Duration,
}

async fn bot_memory() -> anyhow::Result<Memory> {
    let scene = Scene::start(SPEEDS[0]).await?;
    let environment = Environment::from_args()?;
    let mut bot = Console::start(&scene.config, &environment)?;
    let pid = bot.pid;

    tokio::time::sleep(IDLE).await;
    let idle_rss = proc_status_kib(pid, "VmRSS:")?;

    let sent = Instant::now();
    bot.until(COMMAND, "✅ r-1", PATIENCE)
        .await
        .context("the restart through the binary did not finish")?;
    let run_wall = sent.elapsed();
    let memory = Memory {
        environment: environment.describe(),
        idle_rss,
        after_run_rss: proc_status_kib(pid, "VmRSS:")?,
        after_run_peak: proc_status_kib(pid, "VmHWM:")?,
        run_wall,
    };
    Ok(memory)
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: usize) -> f64 {
    let rank = (sorted.len() * p).div_ceil(100).max(1);
    sorted.get(rank - 1).copied().unwrap_or(f64::NAN)
}

fn sorted(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    values
}

fn print_report(runs: &[RunFigures], memory: &Memory) {
    let speeds: Vec<String> = runs.iter().map(|r| r.speed.to_string()).collect();
    println!(
        "\n{COMMAND}: 5 nodes, {DAILY_INDICES} daily indices, poll interval {POLL_INTERVAL_MS} ms, \
         sim speeds {}, release build\n",
        speeds.join(", ")
    );
    println!(
        "{:>5} {:>9} {:>8} {:>8} {:>5} {:>6} {:>9} {:>8} {:>6} {:>8} {:>5}",
        "speed",
        "duration",
        "requests",
        "planning",
        "polls",
        "formed",
        "wait GETs",
        "GET/poll",
        "other",
        "progress",
        "chat"
    );
    for run in runs {
        let r = &run.requests;
        println!(
            "{:>5} {:>7.2} s {:>8} {:>8} {:>5} {:>6} {:>9} {:>8.2} {:>6} {:>8} {:>5}",
            run.speed,
            run.duration.as_secs_f64(),
            r.total,
            r.planning,
            r.polls,
            r.polls_formed,
            r.wait_gets,
            r.wait_gets as f64 / r.polls as f64,
            r.other,
            run.events,
            format!("{}+{}", run.posts, run.edits),
        );
    }
    let polls: usize = runs.iter().map(|r| r.requests.polls).sum();
    let formed: usize = runs.iter().map(|r| r.requests.polls_formed).sum();
    let gets: usize = runs.iter().map(|r| r.requests.wait_gets).sum();
    let events: u64 = runs.iter().map(|r| r.events).sum();
    let chat: u64 = runs.iter().map(|r| r.chat_calls).sum();
    println!(
        "\nrequests per poll: {:.2} overall; {formed} polls saw a formed cluster (2 GETs each: \
         membership + health), {} saw none (1 GET)",
        gets as f64 / polls as f64,
        polls - formed
    );
    println!(
        "progress: {events} events -> {chat} chat calls, posts+edits ({:.1} events per call)",
        events as f64 / chat as f64
    );

    // Per wait step, over the runs: the plan is the same every run (the master stops last).
    let mut by_step: BTreeMap<usize, Vec<&WaitLag>> = BTreeMap::new();
    for wait in runs.iter().flat_map(|r| &r.waits) {
        by_step.entry(wait.step).or_default().push(wait);
    }
    println!("\ncondition seen in the world -> step Done, ms over the runs");
    println!(
        "{:>4}  {:<17} {:>6} {:>6} {:>6}  {:<10}  note of the first run",
        "step", "wait", "min", "p50", "max", "cluster"
    );
    for (step, waits) in &by_step {
        let lags = sorted(waits.iter().map(|w| w.lag_ms));
        let answers: BTreeSet<&str> = waits.iter().map(|w| w.answer.label()).collect();
        println!(
            "{step:>4}  {:<17} {:>6.1} {:>6.1} {:>6.1}  {:<10}  {}",
            waits[0].what,
            percentile(&lags, 0),
            percentile(&lags, 50),
            percentile(&lags, 100),
            answers.into_iter().collect::<Vec<_>>().join("/"),
            waits[0].note,
        );
    }
    let waits = || runs.iter().flat_map(|r| &r.waits);
    let groups = [
        ("formed", Some(Answer::Formed)),
        ("no master", Some(Answer::NoMaster)),
        ("no node up", Some(Answer::NoNodeUp)),
        ("all waits", None),
    ];
    for (label, answer) in groups {
        let lags = sorted(
            waits()
                .filter(|w| answer.is_none_or(|a| a == w.answer))
                .map(|w| w.lag_ms),
        );
        let late = lags
            .iter()
            .filter(|lag| **lag > POLL_INTERVAL_MS as f64)
            .count();
        println!(
            "{label:>10}: n {:>2}, p50 {:>5.1} ms, max {:>5.1} ms, {late} over one poll interval \
             ({POLL_INTERVAL_MS} ms)",
            lags.len(),
            percentile(&lags, 50),
            percentile(&lags, 100),
        );
    }
    let gap = runs.iter().map(|r| r.sample_gap).max().unwrap_or_default();
    println!(
        "world sampled every ~1 ms; longest gap {:.1} ms, the resolution of these figures \
         (a lag a little below 0 means at once)",
        gap.as_secs_f64() * 1000.0
    );

    println!(
        "\nopsbot console (the real binary), sim speed {}, in {}:",
        SPEEDS[0], memory.environment
    );
    println!(
        "  idle {} s after start   VmRSS {:>5.1} MiB",
        IDLE.as_secs(),
        mib(memory.idle_rss)
    );
    println!(
        "  after one restart run  VmRSS {:>5.1} MiB (peak VmHWM {:.1} MiB); command to final \
         edit {:.2} s",
        mib(memory.after_run_rss),
        mib(memory.after_run_peak),
        memory.run_wall.as_secs_f64()
    );
}
