//! Store size and reads as history grows: stores filled with 1,000, 10,000 and 100,000
//! finished runs, each measured for its size on disk, its open time, what chat reads
//! (`/run list`, `/audit`, run autocomplete, `/run log`) and a retention compaction that
//! archives the oldest tenth of the history.
//!
//! Run with `cargo bench -p opsbot-state --bench history`; sizes other than the default can be
//! given as arguments (`cargo bench -p opsbot-state --bench history -- 1000 10000`).

#[allow(dead_code)] // The bench uses a part of the tests' helpers.
#[path = "../tests/it/common/mod.rs"]
mod common;

use std::error::Error;
use std::time::{Duration, Instant};

use common::{STEPS, alice, finished_run_at, speaking};
use opsbot_commands::audit::{AuditEvent, AuditKind};
use opsbot_commands::name::RunId;
use opsbot_commands::page::Page;
use opsbot_state::{AuditQuery, Store};
use time::OffsetDateTime;

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];
/// One finished run every 5 minutes: 100,000 runs are about the year the default retention
/// keeps, and "the last day" always holds the same 288 runs.
const SPACING: time::Duration = time::Duration::minutes(5);
/// Every tenth run kept node control output in its run log, of this many lines.
const LOGGED_EVERY: usize = 10;
const LOG_LINES: usize = 200;
/// What chat asks for: a page of 20, 100 suggestions, a run's whole log (`/run log` pages it).
const PER_PAGE: usize = 20;
const SUGGESTED: usize = 100;
/// The batch the bot compacts with (`bot/src/store_upkeep.rs`).
const COMPACT_BATCH: usize = 500;
/// Each read is timed this many times; the median is shown.
const REPEATS: usize = 50;

fn main() -> Result<(), Box<dyn Error>> {
    // `cargo bench` passes `--bench` to a harness-less bench; any number is a size.
    let asked: Vec<usize> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with('-'))
        .map(|arg| arg.replace(['_', ','], "").parse())
        .collect::<Result<_, _>>()?;
    let sizes = if asked.is_empty() {
        SIZES.to_vec()
    } else {
        asked
    };
    println!(
        "runs: finished {STEPS}-step restarts one per {SPACING}, each with {} audit entries, every \
         {LOGGED_EVERY}th with a {LOG_LINES}-line run log; reads are the median of {REPEATS}\n",
        AUDIT_PER_RUN + 1
    );
    println!(
        "| runs | fill | size | open: store (sled first) | /run list | /audit | autocomplete | /run log | \
         compaction (10 %) | archived | size after |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for runs in sizes {
        measure(runs)?;
    }
    Ok(())
}

/// The audit entries each run gets besides the `RunRequested` that `create_run` writes.
const AUDIT_PER_RUN: usize = 4;

fn measure(runs: usize) -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("store");
    let now = OffsetDateTime::now_utc();
    let first = now - SPACING * i32::try_from(runs)?;
    let fill = Instant::now();
    {
        let store = Store::open(&path)?;
        for i in 0..runs {
            let at = first + SPACING * i32::try_from(i)?;
            fill_one(&store, i, at)?;
        }
    }
    let fill = fill.elapsed();
    let size = dir_size(&path)?;

    // The first open after the fill is sled's alone (it replays the log written since its last
    // snapshot, as a bot restarted after running does); then the store's (sled's open again,
    // plus the schema, counters, locks and unfinished runs checked). Files in the page cache.
    let opened = Instant::now();
    drop(common::raw_open(dir.path())?);
    let sled_open = opened.elapsed();
    let opened = Instant::now();
    let store = common::open(dir.path())?;
    let open = opened.elapsed();

    let newest = RunId::new(u64::try_from(runs)?);
    let day_ago = now - time::Duration::days(1);
    let list = median(|| store.recent_runs(day_ago, Page::FIRST, PER_PAGE).map(drop))?;
    let audit_query = AuditQuery {
        since: Some(day_ago),
        run: None,
    };
    let audit = median(|| {
        store
            .audit_page(audit_query, Page::FIRST, PER_PAGE)
            .map(drop)
    })?;
    let suggest = median(|| store.suggested_run_ids(SUGGESTED).map(drop))?;
    let logged = RunId::new(u64::try_from(runs - runs % LOGGED_EVERY)?.max(1));
    let log = median(|| store.run_log(logged).map(drop))?;
    let shown = store.recent_runs(day_ago, Page::FIRST, PER_PAGE)?;
    if shown.items.first().map(|run| run.id) != Some(newest) {
        return Err(format!("/run list does not start with {newest}").into());
    }

    let cutoff = first + SPACING * i32::try_from(runs / 10)?;
    let compacting = Instant::now();
    let compacted = store.compact(cutoff, COMPACT_BATCH)?;
    let compaction = compacting.elapsed();
    if compacted.runs != runs / 10 {
        return Err(format!("compaction archived {} runs of {runs}", compacted.runs).into());
    }
    drop(store);
    let after = dir_size(&path)?;

    println!(
        "| {runs} | {:.1} s | {} | {} ({}) | {} | {} | {} | {} | {} | {} runs, {} entries | {} |",
        fill.as_secs_f64(),
        mib(size),
        ms(open),
        ms(sled_open),
        ms(list),
        ms(audit),
        ms(suggest),
        ms(log),
        ms(compaction),
        compacted.runs,
        compacted.audit,
        mib(after),
    );
    Ok(())
}

/// One finished run at `at`, with its audit entries (approved, its first and last step, its
/// end) and, for every tenth, its node control output.
fn fill_one(store: &Store, i: usize, at: OffsetDateTime) -> Result<(), Box<dyn Error>> {
    let run = store.create_run(finished_run_at(&format!("c{}", i % 7), at), None)?;
    let kinds: [AuditKind; AUDIT_PER_RUN] = [
        AuditKind::ApprovalGranted {
            digest: run.digest.as_str().to_owned(),
        },
        AuditKind::StepStarted {
            step: 0,
            action: "disable shard allocation".into(),
        },
        AuditKind::StepDone {
            step: STEPS - 1,
            note: "ok".into(),
        },
        AuditKind::RunFinished {
            state: run.state.label().to_owned(),
        },
    ];
    for event in kinds {
        store.append_audit(&AuditEvent {
            at,
            run: Some(run.id),
            actor: Some(speaking(alice())),
            event,
        })?;
    }
    if (i + 1) % LOGGED_EVERY == 0 {
        let lines: Vec<String> = (0..LOG_LINES)
            .map(|n| {
                format!(
                    "{at} 10.0.0.{} systemd[1]: elasticsearch.service: line {n}",
                    n % 5
                )
            })
            .collect();
        store.append_run_log(run.id, &lines)?;
    }
    Ok(())
}

/// The median time of `REPEATS` calls.
fn median<E>(mut read: impl FnMut() -> Result<(), E>) -> Result<Duration, E> {
    let mut samples = Vec::with_capacity(REPEATS);
    for _ in 0..REPEATS {
        let started = Instant::now();
        read()?;
        samples.push(started.elapsed());
    }
    samples.sort_unstable();
    Ok(samples[REPEATS / 2])
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// The bytes of every file under `dir`: a store's size on disk.
pub fn dir_size(dir: &std::path::Path) -> std::io::Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        total += if meta.is_dir() {
            dir_size(&entry.path())?
        } else {
            meta.len()
        };
    }
    Ok(total)
}
