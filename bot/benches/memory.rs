//! `cargo bench -p opsbot --bench memory`: the resident memory of the real binary as it
//! executes thousands of runs, one after another.
//!
//! Not a timed test: it asserts nothing, it prints figures for docs/PERFORMANCE.md. The run is
//! the cheapest one that goes through everything a run goes through (plan, store, lock,
//! progress, audit, run log): a one-step runbook whose step runs `true` on a "host" reached
//! through a two-line launcher script. The bot is `opsbot console`, the same engine, store and
//! progress publisher as `opsbot run`, typed into on its stdin, in the environment
//! deploy/opsbot.service gives it (its malloc settings; `-- --bare` leaves them out).

mod common;

#[allow(dead_code)] // The bench uses a part of the tests' helpers.
#[path = "../tests/it/support/mod.rs"]
mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use common::{Console, Environment, mib, proc_status_kib};

/// Runs executed under `--bench`, and how often memory is read on the way.
const RUNS: u32 = 10_000;
const EVERY: u32 = 1_000;
/// Under `cargo test --all-targets` (no `--bench`): enough to show the benchmark still works.
const SMOKE_RUNS: u32 = 20;
/// The longest one run is waited for; keeps the benchmark bounded if something hangs.
/// How long the bot is left alone after its start before its memory is read first.
const IDLE: Duration = Duration::from_secs(2);
const PATIENCE: Duration = Duration::from_secs(30);
const COMMAND: &str = "/runbook run name:ping host:h-01";

const RUNBOOK: &str = r#"
name = "ping"
description = "Runs true on a host"

[[params]]
name = "host"
kind = "host"
help = "The host"

[[steps]]
kind = "run"
title = "Run true"
on = "{host}"
argv = ["true"]
idempotent = true
"#;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (runs, every) = if std::env::args().any(|a| a == "--bench") {
        (RUNS, EVERY)
    } else {
        (SMOKE_RUNS, SMOKE_RUNS / 2)
    };
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path())?;
    let environment = Environment::from_args()?;
    let mut bot = Console::start(&config, &environment)?;
    let pid = bot.pid;

    println!("opsbot console (the real binary), one-step runbook runs one after another, in");
    println!("{}:", environment.describe());
    println!(
        "| runs executed | VmRSS | of which heap and stacks (RssAnon) | VmHWM (peak) | wall time \
         for the last {every} | the bot's CPU time for them |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    // Started and idle: its store opened, its front end waiting for a line.
    tokio::time::sleep(IDLE).await;
    let mut since = (Instant::now(), cpu_seconds(pid)?);
    report(pid, 0, since)?;
    for n in 1..=runs {
        bot.until(COMMAND, &format!("✅ r-{n} "), PATIENCE).await?;
        if n % every == 0 {
            since = report(pid, n, since)?;
        }
    }
    Ok(())
}

/// Prints the figures after `runs` runs, the time spent since `since` (a moment and the bot's
/// CPU time then), and returns the moment and CPU time to count the next ones from.
fn report(pid: u32, runs: u32, since: (Instant, f64)) -> anyhow::Result<(Instant, f64)> {
    let now = (Instant::now(), cpu_seconds(pid)?);
    println!(
        "| {runs} | {:.1} MiB | {:.1} MiB | {:.1} MiB | {:.1} s | {:.2} s |",
        mib(proc_status_kib(pid, "VmRSS:")?),
        mib(proc_status_kib(pid, "RssAnon:")?),
        mib(proc_status_kib(pid, "VmHWM:")?),
        (now.0 - since.0).as_secs_f64(),
        now.1 - since.1,
    );
    Ok(now)
}

/// A store, the one runbook, one host reached through a launcher that drops the host's name and
/// runs the rest, and the person at the console.
fn write_config(dir: &Path) -> anyhow::Result<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let books = dir.join("runbooks");
    std::fs::create_dir(&books)?;
    std::fs::write(books.join("ping.toml"), RUNBOOK)?;
    let launcher = dir.join("launch");
    std::fs::write(&launcher, "#!/bin/sh\nshift\nexec \"$@\"\n")?;
    std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755))?;
    let me = opsbot::chat::console::running_account()?;
    let config = dir.join("opsbot.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[store]
path = "{store}"

[runbooks]
dir = "{books}"

[runbooks.inventory]
hosts = ["h-01"]

[runbooks.access]
kind = "command"
prefix = ["{launcher}", "{{host}}"]

# As many edits as the runs make: the figure is memory, not a chat platform's rate limit.
[progress]
edits_per_window = 1000
window = "1s"

[[people]]
name = "alice"
roles = ["operator"]
accounts = ["{me}"]
"#,
            store = dir.join("store").display(),
            books = books.display(),
            launcher = launcher.display(),
        ),
    )?;
    Ok(config)
}

/// The CPU time a process has used so far, all its threads together, in seconds: `utime` and
/// `stime` of /proc/<pid>/stat, which count clock ticks.
fn cpu_seconds(pid: u32) -> anyhow::Result<f64> {
    let path = Path::new("/proc").join(pid.to_string()).join("stat");
    let stat = std::fs::read_to_string(&path)?;
    // The fields after the process's name, which is in parentheses and may hold spaces: the
    // third field of proc(5) is the first of them, so `utime` (14th) and `stime` are 11 on.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .with_context(|| format!("no name in {}", path.display()))?
        .1
        .split_whitespace()
        .collect();
    let ticks = |index: usize| -> anyhow::Result<u64> {
        let field = fields
            .get(index)
            .with_context(|| format!("a short {}", path.display()))?;
        Ok(field.parse()?)
    };
    Ok((ticks(11)? + ticks(12)?) as f64 / clock_ticks()?)
}

/// How many clock ticks make a second (`getconf CLK_TCK`, 100 on Linux almost everywhere).
fn clock_ticks() -> anyhow::Result<f64> {
    let output = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()?;
    Ok(String::from_utf8(output.stdout)?.trim().parse()?)
}
