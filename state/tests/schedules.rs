//! A schedule's fires in the store: each is taken once, with its run in the same transaction,
//! whatever the order in which a restarted bot tries them again.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod common;

use common::Place;

use opsbot_commands::schedule::{FireOutcome, FireRecord, ScheduleName};
use opsbot_state::StoreError;
use time::macros::datetime;

fn nightly() -> ScheduleName {
    ScheduleName::parse("nightly-prune").unwrap()
}

fn a_fire_creates_one_run_and_a_second_try_of_the_same_fire_creates_none(place: Place) {
    let store = place.open().unwrap();
    let fire = datetime!(2026-11-28 01:00 UTC);
    let run = store
        .create_fired_run(common::new_run("logs"), &nightly(), fire)
        .unwrap();
    assert_eq!(
        store.last_fire(&nightly()).unwrap(),
        Some(FireRecord {
            at: fire,
            outcome: FireOutcome::Started { run: run.id }
        })
    );
    // A restarted bot that tries the same fire again (its run finished in between, so the
    // cluster is free) is refused, and no run is created.
    let again = store.create_fired_run(common::finished_run("audit"), &nightly(), fire);
    assert!(
        matches!(again, Err(StoreError::AlreadyFired { .. })),
        "{again:?}"
    );
    let earlier = store.record_fire(
        &nightly(),
        &FireRecord {
            at: fire - time::Duration::days(1),
            outcome: FireOutcome::Missed,
        },
    );
    assert!(
        matches!(earlier, Err(StoreError::AlreadyFired { .. })),
        "{earlier:?}"
    );
    assert_eq!(store.unfinished_runs().unwrap().len(), 1);
    // The next fire is taken.
    let next = FireRecord {
        at: fire + time::Duration::days(1),
        outcome: FireOutcome::Paused,
    };
    store.record_fire(&nightly(), &next).unwrap();
    assert_eq!(store.last_fire(&nightly()).unwrap(), Some(next));
}

fn a_fire_refused_for_a_busy_cluster_records_nothing(place: Place) {
    let store = place.open().unwrap();
    store.create_run(common::new_run("logs"), None).unwrap();
    let fire = datetime!(2026-11-28 01:00 UTC);
    let busy = store.create_fired_run(common::new_run("logs"), &nightly(), fire);
    assert!(matches!(busy, Err(StoreError::Locked { .. })), "{busy:?}");
    assert_eq!(store.last_fire(&nightly()).unwrap(), None);
}

backends!(
    a_fire_creates_one_run_and_a_second_try_of_the_same_fire_creates_none,
    a_fire_refused_for_a_busy_cluster_records_nothing,
);
