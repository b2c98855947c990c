//! Prune 2,000 expired indices out of 3,000 on the simulator with 2 ms latency per request:
//! requests sent and wall time, next to the floor (one listing, the chunked deletes, one
//! verification). Run with `cargo bench -p opsbot-tests --bench prune`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark that cannot set up must stop loudly.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use opsbot_commands::name::RunId;
use opsbot_commands::plan::{Action, DestructiveAction};
use opsbot_commands::run::RunState;
use opsbot_tests::{Harness, Setup};

/// Indices in the simulated cluster and the age that selects about two thirds of them.
const INDICES: u32 = 3000;
const OLDER_THAN_DAYS: u32 = 1000;

#[tokio::main]
async fn main() {
    let h = Harness::start(Setup {
        days_of_indices: INDICES,
        ..Setup::default()
    })
    .await;
    h.sim.set_faults(vec!["latency=2ms".parse().unwrap()]);

    let asked = Instant::now();
    let reply = h
        .slash(
            "alice",
            &format!("/indices prune cluster:logs older_than_days:{OLDER_THAN_DAYS}"),
        )
        .await;
    let planned = asked.elapsed();
    assert!(
        reply.text.starts_with("r-1 waits for approval"),
        "{}",
        reply.text
    );
    let id = RunId::new(1);
    let planning_requests = h.calls().len();

    let approved = Instant::now();
    h.approve("bob", "r-1").await;
    let run = h.finished(id).await;
    let executed = approved.elapsed();
    assert_eq!(run.state, RunState::Succeeded, "{:?}", run.state);

    let selected = run.plan.deleted_indices().count();
    let chunks = run
        .plan
        .steps
        .iter()
        .filter(|s| {
            matches!(
                s,
                Action::Destructive(DestructiveAction::DeleteIndices { .. })
            )
        })
        .count();
    let mut by_kind: BTreeMap<String, usize> = BTreeMap::new();
    for call in h.calls() {
        let path = if call.method == "DELETE" {
            "/{chunk}".to_owned()
        } else {
            call.path
        };
        *by_kind
            .entry(format!("{} {path}", call.method))
            .or_default() += 1;
    }
    let total: usize = by_kind.values().sum();
    let floor = 1 + chunks + 1;

    println!(
        "prune of {selected} expired indices out of {} (2 ms latency per request)",
        INDICES + 1
    );
    println!(
        "  plan: {planning_requests} request(s) in {:.0} ms",
        ms(planned)
    );
    println!("  run after approval: {:.0} ms", ms(executed));
    println!("  requests in all: {total} in {chunks} delete chunks");
    for (kind, n) in &by_kind {
        println!("    {n:>5}  {kind}");
    }
    println!("  floor (one listing + {chunks} deletes + one verification): {floor}");
    println!(
        "  per-chunk re-listing (the safety check right before each delete) adds {}",
        total.saturating_sub(floor)
    );
    // Curator sends several requests per index (settings and alias checks, and a listing per
    // deleted index); four per index is a conservative count.
    let curator = 4 * selected;
    println!(
        "  Curator, at four requests per selected index: about {curator}; opsbot needs {:.2} % of that",
        100.0 * total as f64 / curator as f64
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
