//! Store figures on both backends: the latency of one persisted step transition, of the
//! delivery check, and the start-up cost (open with its validation scan, then
//! `unfinished_runs`) of a store holding 100,000 finished runs (`OPSBOT_BENCH_HISTORY` to
//! change it). PostgreSQL is a throwaway server of the machine's own binaries on loopback, at
//! its default durability (`fsync` and `synchronous_commit` on), as sled flushes before every
//! write returns. The history is written into sled one `create_run` at a time, then copied to
//! PostgreSQL with `opsbot_state::copy` (what `opsbot store migrate` does), so both start
//! from the same records. Run with `cargo bench -p opsbot-state --bench store`.

#[allow(dead_code)] // The bench uses a part of the tests' helpers.
#[path = "../tests/it/common/mod.rs"]
mod common;

use std::convert::Infallible;
use std::error::Error;
use std::time::{Duration, Instant};

use common::{Place, STEPS, T0, finished_run, new_run};
use opsbot_commands::audit::AuditKind;
use opsbot_commands::run::{Outcome, StepState};
use opsbot_state::Store;
use time::OffsetDateTime;

const TRANSITIONS: usize = 2_000;
/// Finished runs of history at start-up, unless `OPSBOT_BENCH_HISTORY` says otherwise.
const HISTORY: usize = 100_000;
/// Interaction ids already remembered when the delivery check is timed (a busy day of chat).
const DELIVERIES: usize = 5_000;

/// A backend by name, and how to make a fresh store of it.
type Backend = (&'static str, fn() -> Place);

const BACKENDS: [Backend; 2] = [("sled", Place::sled), ("PostgreSQL", Place::postgres)];

fn main() -> Result<(), Box<dyn Error>> {
    let history = match std::env::var("OPSBOT_BENCH_HISTORY") {
        Ok(n) => n.parse()?,
        Err(_) => HISTORY,
    };
    for (name, place) in BACKENDS {
        println!("## {name}\n");
        transitions(&place().open()?)?;
        deliveries(&place().open()?)?;
        println!();
    }
    start_up(history)
}

/// `first_delivery` of a new interaction id, with a day's worth remembered: one insert and one
/// commit per command.
fn deliveries(store: &Store) -> Result<(), Box<dyn Error>> {
    for i in 0..DELIVERIES {
        store.first_delivery(&format!("seed-{i}"))?;
    }
    let mut each = Vec::with_capacity(1_000);
    for i in 0..1_000 {
        let id = format!("interaction-{i}");
        each.push(timed(|| store.first_delivery(&id))?);
    }
    report(
        &format!("first_delivery with {DELIVERIES} ids remembered"),
        &mut each,
    );
    Ok(())
}

/// Marks steps Started then Done, one `update_run` (one transaction, durable) each.
fn transitions(store: &Store) -> Result<(), Box<dyn Error>> {
    let mut each = Vec::with_capacity(TRANSITIONS);
    let mut pairs = Vec::with_capacity(TRANSITIONS / 2);
    let mut run = store.create_run(new_run("logs"), None)?;
    while each.len() < TRANSITIONS {
        for step in 0..STEPS {
            if each.len() >= TRANSITIONS {
                break;
            }
            let started = timed(|| {
                store.update_run(run.id, None, |run| {
                    run.steps_mut()[step] = StepState::Started {
                        at: OffsetDateTime::now_utc(),
                    };
                    Ok::<_, Infallible>(vec![AuditKind::StepStarted {
                        step,
                        action: "stop node 10.0.0.3".into(),
                    }])
                })
            })?;
            let done = timed(|| {
                store.update_run(run.id, None, |run| {
                    run.steps_mut()[step] =
                        StepState::done(OffsetDateTime::now_utc(), "node left the cluster");
                    Ok::<_, Infallible>(vec![AuditKind::StepDone {
                        step,
                        note: "ok".into(),
                    }])
                })
            })?;
            each.extend([started, done]);
            pairs.push(started + done);
        }
        store.update_run(run.id, None, |run| {
            run.finish(Outcome::Succeeded, T0);
            Ok::<_, Infallible>(vec![])
        })?;
        run = store.create_run(new_run("logs"), None)?;
    }
    println!(
        "step transitions ({} update_run calls, each one durable transaction):",
        each.len()
    );
    report("  one transition (Started or Done)", &mut each);
    report("  one step (Started + Done)", &mut pairs);
    Ok(())
}

/// Fills a sled store with finished 25-step runs (and two unfinished ones), copies it to
/// PostgreSQL, then times restarts of each.
fn start_up(history: usize) -> Result<(), Box<dyn Error>> {
    let (sled, postgres) = (Place::sled(), Place::postgres());
    let filled = Instant::now();
    {
        let store = sled.open()?;
        for i in 0..history {
            store.create_run(finished_run(&format!("c{}", i % 7)), None)?;
        }
        store.create_run(new_run("logs"), None)?;
        store.create_run(new_run("metrics"), None)?;
    }
    let filled = filled.elapsed();
    let copying = Instant::now();
    let copied = opsbot_state::copy(&sled.open()?, &postgres.open()?)?;
    println!(
        "## start-up with {history} finished runs of {STEPS} steps (+2 unfinished)\n\n\
         sled filled in {:.1} s ({:.2} ms per create_run); copied to PostgreSQL and verified \
         in {:.1} s ({copied})",
        filled.as_secs_f64(),
        filled.as_secs_f64() * 1000.0 / (history + 2) as f64,
        copying.elapsed().as_secs_f64(),
    );
    for (name, place) in [("sled", &sled), ("PostgreSQL", &postgres)] {
        for attempt in 1..=3 {
            let started = Instant::now();
            let store = place.open()?;
            let opened = started.elapsed();
            let unfinished = store.unfinished_runs()?;
            let total = started.elapsed();
            if unfinished.len() != 2 {
                return Err(
                    format!("expected 2 unfinished runs, found {}", unfinished.len()).into(),
                );
            }
            println!(
                "  {name}, attempt {attempt}: open (with validation scan) {}, unfinished_runs \
                 {}, total {}",
                ms(opened),
                ms(total - opened),
                ms(total)
            );
        }
    }
    Ok(())
}

fn timed<T, E>(f: impl FnOnce() -> Result<T, E>) -> Result<Duration, E> {
    let started = Instant::now();
    f()?;
    Ok(started.elapsed())
}

fn report(label: &str, samples: &mut [Duration]) {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    println!(
        "{label}: p50 {}, p99 {}, max {}, mean {} (n = {})",
        ms(at(0.5)),
        ms(at(0.99)),
        ms(at(1.0)),
        ms(mean),
        samples.len()
    );
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}
