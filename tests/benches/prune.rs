//! What a prune costs as the cluster grows: two thirds of 3,000 and of 30,000 indices expired,
//! 2 ms of latency on every request. For each size: the requests sent, the index rows the bot
//! read from listings, wall time, and the bot's CPU time and peak memory.
//! Run with `cargo bench -p opsbot-tests --bench prune`.
//!
//! The simulator and the bot each run in a process of their own (this program, started again
//! with `OPSBOT_PRUNE_BENCH` naming the role), so that the CPU time and the peak memory are
//! the bot's alone, not the simulator's serving the listings.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark that cannot set up must stop loudly.

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use opsbot::config::{Config, EngineConfig, NodeControlConfig, ProgressConfig};
use opsbot::engine::Engine;
use opsbot::progress::Publisher;
use opsbot::service::Service;
use opsbot_commands::name::RunId;
use opsbot_commands::parse::{self, Origin};
use opsbot_commands::run::{ChannelId, Outcome};
use opsbot_search_sim::{Call, Distribution, IndexSpec, SimConfig, WorldSnapshot};
use opsbot_tests::{RecordingChat, Setup, actor, cluster_config, config};
use serde::{Deserialize, Serialize};
use time::{Duration as Days, OffsetDateTime};

/// Indices in the cluster: two thirds are daily `flog-*` indices past their retention, one
/// third daily `audit-*` indices as old but managed by an ILM policy (kept, and read).
const SIZES: [u32; 2] = [3_000, 30_000];
const ROLE: &str = "OPSBOT_PRUNE_BENCH";
const COMMAND: &str = "/indices prune cluster:logs older_than_days:1";
/// The longest a prune may take here.
const PATIENCE: Duration = Duration::from_secs(600);

fn main() -> anyhow::Result<()> {
    match std::env::var(ROLE).ok().as_deref() {
        Some(role) => match role.split_once(':') {
            Some(("sim", size)) => serve_sim(size.parse()?),
            Some(("bot", url)) => drive_bot(url),
            _ => bail!("{ROLE}={role}: expected sim:<size> or bot:<url>"),
        },
        None => compare(),
    }
}

/// What the bot process measured, sent to the parent as one JSON line.
#[derive(Debug, Serialize, Deserialize)]
struct BotFigures {
    selected: usize,
    chunks: usize,
    /// What the plan says it kept and why.
    notes: Vec<String>,
    plan: Duration,
    run: Duration,
    cpu: Duration,
    rss_before: u64,
    peak: u64,
    /// One more `update_run` of the finished run (median): a transition that reads the plan from
    /// the store, as only unfinished runs' plans are cached.
    transition: Duration,
}

/// The simulator: `size` indices, 2 ms per request; prints its URL, serves until stdin closes.
fn serve_sim(size: u32) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let today = OffsetDateTime::now_utc().date();
        let managed = size / 3;
        let config = SimConfig {
            days_of_indices: size - managed,
            indices: (1..=managed)
                .map(|days| {
                    let day = today - Days::days(i64::from(days));
                    let name = format!(
                        "audit-{}.{:02}.{:02}",
                        day.year(),
                        u8::from(day.month()),
                        day.day()
                    );
                    IndexSpec::new(name).setting("index.lifecycle.name", "audit")
                })
                .collect(),
            faults: vec!["latency=2ms".parse()?],
            // ILM needs X-Pack: Elasticsearch's default distribution, not the OSS one.
            distribution: Distribution::Default,
            ..SimConfig::default()
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let sim = opsbot_search_sim::spawn(config, listener).await?;
        println!("{}", sim.base_url());
        std::io::stdout().flush()?;
        tokio::task::spawn_blocking(|| std::io::stdin().read_to_end(&mut Vec::new())).await??;
        anyhow::Ok(())
    })
}

/// The bot: alice asks for the prune, bob approves it, the run ends; figures on stdout.
fn drive_bot(url: &str) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let figures = runtime.block_on(async {
        let dir = tempfile::tempdir()?;
        let cluster = cluster_config(
            "logs",
            url,
            &SimConfig::default(),
            NodeControlConfig::Sim { url: None },
        );
        // The shipped engine and progress settings, not the tests' brisker ones: the bench
        // measures what an operator gets.
        let config = Config {
            engine: EngineConfig::default(),
            progress: ProgressConfig::default(),
            ..config(&Setup::default(), vec![cluster], dir.path())
        };
        let store = config.store.open()?;
        let publisher = std::sync::Arc::new(Publisher::new(
            RecordingChat::default(),
            store.clone(),
            config.progress,
        ));
        let engine = Engine::new(&config, store.clone(), publisher.clone())?;
        let service = Service::new(engine.clone(), publisher);
        let say = |user: &'static str, line: String| {
            let service = service.clone();
            async move {
                let request = parse::parse_line(&line, Origin::Console)?;
                let channel = ChannelId("bench".into());
                anyhow::Ok(
                    service
                        .handle(&actor(user), &channel, Origin::Console, request)
                        .await,
                )
            }
        };

        let rss_before = proc_status_kib("VmRSS:")?;
        let cpu_before = cpu_time()?;
        let asked = Instant::now();
        let reply = say("alice", COMMAND.to_owned()).await?;
        let plan = asked.elapsed();
        ensure!(reply.text.starts_with("r-1 waits"), "{}", reply.text);
        let id = RunId::new(1);
        let digest = engine.run(id)?.digest.short().to_owned();
        let approved = Instant::now();
        say("bob", format!("/approve id:r-1 digest:{digest}")).await?;
        // Waiting on the engine, not polling the store: a poll decodes the run each time,
        // which this process's CPU time would count as the bot's.
        tokio::time::timeout(PATIENCE, engine.idle())
            .await
            .context("the prune did not finish")?;
        let run = engine.run(id)?;
        let run_time = approved.elapsed();
        let cpu = cpu_time()? - cpu_before;
        ensure!(
            run.outcome() == Some(&Outcome::Succeeded),
            "{:?}",
            run.state
        );
        // The prune's peak, before the updates below decode the finished run's plan 50 times
        // (only unfinished runs' plans are cached).
        let peak = proc_status_kib("VmHWM:")?;

        let mut transitions: Vec<Duration> = (0..50)
            .map(|_| {
                let at = Instant::now();
                store.update_run(id, None, |run| {
                    let n = run.captured.len().to_string();
                    run.captured.insert(format!("bench-{n}"), n);
                    Ok::<_, std::convert::Infallible>(Vec::new())
                })?;
                anyhow::Ok(at.elapsed())
            })
            .collect::<Result<_, _>>()?;
        transitions.sort();
        anyhow::Ok(BotFigures {
            selected: run.plan().deleted().count(),
            chunks: run.plan().index_deletions().count(),
            notes: run.plan().notes().to_vec(),
            plan,
            run: run_time,
            cpu,
            rss_before,
            peak,
            transition: transitions[transitions.len() / 2],
        })
    })?;
    println!("{}", serde_json::to_string(&figures)?);
    Ok(())
}

/// One size, measured: the simulator's request log and the bot's own figures.
struct Measured {
    size: u32,
    bot: BotFigures,
    requests: BTreeMap<String, usize>,
    rows: usize,
}

fn compare() -> anyhow::Result<()> {
    let measured = SIZES
        .iter()
        .map(|&size| measure(size))
        .collect::<anyhow::Result<Vec<_>>>()?;
    println!("prune of two thirds of the indices, 2 ms per request (release build)\n");
    println!(
        "| indices | deleted | chunks | requests | listing rows read | rows per index | plan | approval to end | bot CPU | bot peak RSS | one step transition |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for m in &measured {
        let requests: usize = m.requests.values().sum();
        println!(
            "| {} | {} | {} | {requests} | {} | {:.2} | {:.0} ms | {:.2} s | {:.0} ms | {:.1} MiB (+{:.1}) | {:.2} ms |",
            m.size,
            m.bot.selected,
            m.bot.chunks,
            m.rows,
            m.rows as f64 / f64::from(m.size),
            m.bot.plan.as_secs_f64() * 1e3,
            m.bot.run.as_secs_f64(),
            m.bot.cpu.as_secs_f64() * 1e3,
            m.bot.peak as f64 / 1024.0,
            m.bot.peak.saturating_sub(m.bot.rss_before) as f64 / 1024.0,
            m.bot.transition.as_secs_f64() * 1e3,
        );
    }
    for m in &measured {
        println!("\nrequests at {} indices:", m.size);
        for (kind, n) in &m.requests {
            println!("  {n:>6}  {kind}");
        }
        println!("the plan's notes:");
        for note in &m.bot.notes {
            println!("  {note}");
        }
    }
    Ok(())
}

fn measure(size: u32) -> anyhow::Result<Measured> {
    let me = std::env::current_exe()?;
    let mut sim = Command::new(&me)
        .env(ROLE, format!("sim:{size}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut url = String::new();
    BufReader::new(sim.stdout.take().context("sim stdout")?).read_line(&mut url)?;
    let url = url.trim().to_owned();
    let runtime = tokio::runtime::Runtime::new()?;
    let get = |what: &str| {
        let url = format!("{url}/_sim/{what}");
        runtime.block_on(async { reqwest::get(url).await?.error_for_status()?.bytes().await })
    };
    let world: WorldSnapshot = serde_json::from_slice(&get("state")?)?;

    let bot = Command::new(&me)
        .env(ROLE, format!("bot:{url}"))
        .stderr(Stdio::inherit())
        .output()?;
    ensure!(bot.status.success(), "the bot process failed");
    let bot: BotFigures = serde_json::from_slice(&bot.stdout)?;
    let calls: Vec<Call> = serde_json::from_slice(&get("calls")?)?;
    drop(sim.stdin.take());
    sim.wait()?;

    let (requests, rows) = account(&world, &calls)?;
    Ok(Measured {
        size,
        bot,
        requests,
        rows,
    })
}

/// Requests by kind, and the index rows the listings among them answered, replaying the
/// deletions in order: a full `_cat/indices` answers a row per index then present, the ILM
/// settings listing one per index that has the setting, a scoped `/{names}/_settings` one per
/// named index still present.
fn account(
    world: &WorldSnapshot,
    calls: &[Call],
) -> anyhow::Result<(BTreeMap<String, usize>, usize)> {
    let mut present: HashSet<&str> = world.indices.iter().map(|i| i.name.as_str()).collect();
    let managed = world
        .indices
        .iter()
        .filter(|i| i.hidden() || i.settings.contains_key("index.lifecycle.name"))
        .count();
    let mut requests = BTreeMap::new();
    let mut rows = 0;
    for call in calls {
        let names = call
            .path
            .trim_start_matches('/')
            .split('/')
            .next()
            .unwrap_or("");
        let kind = if call.method == "DELETE" {
            ensure!(call.status == 200, "DELETE answered {}", call.status);
            for name in names.split(',') {
                present.remove(name);
            }
            "DELETE /{names}".to_owned()
        } else if call.path == "/_cat/indices" {
            rows += present.len();
            "GET /_cat/indices".to_owned()
        } else if call.path.starts_with("/_settings/") {
            rows += managed;
            format!("GET {}", call.path)
        } else if call.path.ends_with("/_settings/index.uuid") {
            rows += names.split(',').filter(|n| present.contains(n)).count();
            "GET /{names}/_settings/index.uuid".to_owned()
        } else if call.path.starts_with("/_cat/indices") || call.path.contains("_settings") {
            bail!(
                "a listing this benchmark cannot count: {} {}",
                call.method,
                call.path
            );
        } else {
            format!("{} {}", call.method, call.path)
        };
        *requests.entry(kind).or_default() += 1;
    }
    Ok((requests, rows))
}

/// This process's user and system CPU time (`/proc/self/stat`, in clock ticks of 10 ms).
fn cpu_time() -> anyhow::Result<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    let (_, after_comm) = stat.rsplit_once(')').context("stat")?;
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    // After the comm: state is field 3, utime field 14 and stime field 15 (1-based).
    let ticks: u64 = fields[11].parse::<u64>()? + fields[12].parse::<u64>()?;
    Ok(Duration::from_millis(ticks * 10))
}

/// A `kB` field of `/proc/self/status`, in KiB.
fn proc_status_kib(field: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .with_context(|| format!("{field} in /proc/self/status"))?;
    Ok(line[field.len()..]
        .trim()
        .trim_end_matches(" kB")
        .trim()
        .parse()?)
}
