//! Listings read only what they show: a store whose oldest records are damaged still lists
//! today's runs and audit entries, page by page, and opens without reading its history.

use crate::common::{Place, T0, finished_run, new_run};
use opsbot_commands::audit::{AuditEvent, AuditKind};
use opsbot_commands::name::RunId;
use opsbot_commands::page::Page;
use opsbot_state::{AuditQuery, Store, StoreError};
use time::{Duration, OffsetDateTime};

const RUNS: u64 = 60;

/// `RUNS` finished runs (r-1 … r-60) then one unfinished (r-61), and an audit entry stamped
/// each minute after T0 for each finished run.
fn history(place: &Place) -> Store {
    let store = place.open().unwrap();
    for n in 1..=RUNS {
        store
            .create_run(finished_run(&format!("c{n}")), None)
            .unwrap();
        store.append_audit(&stamped(n)).unwrap();
    }
    store.create_run(new_run("live"), None).unwrap();
    store
}

fn stamped(n: u64) -> AuditEvent {
    AuditEvent {
        at: T0 + Duration::minutes(i64::try_from(n).unwrap()),
        run: Some(RunId::new(n)),
        actor: None,
        event: AuditKind::CancelRequested,
    }
}

/// Garbage in the oldest run's record and plan, and in its audit entries (on PostgreSQL,
/// whose `jsonb` holds only JSON, values of the wrong shape).
fn damage_the_oldest(place: &Place) {
    let dir = match place {
        Place::Sled(dir) => dir.path(),
        Place::Postgres(config) => {
            let wrong = r#"'{"v":1,"data":"garbage"}'"#;
            crate::common::sql(
                config,
                &format!(
                    "UPDATE runs SET record = {wrong}, plan = {wrong} WHERE id = 1; \
                     UPDATE audit SET event = {wrong} WHERE seq IN (1, 2)"
                ),
            );
            return;
        }
    };
    let db = crate::common::raw_open(dir).unwrap();
    for tree in ["runs", "plans"] {
        db.open_tree(tree)
            .unwrap()
            .insert(1_u64.to_be_bytes(), &b"\x00garbage"[..])
            .unwrap();
    }
    // #1 is r-1's `RunRequested`, #2 the entry stamped for it.
    for seq in [1_u64, 2] {
        db.open_tree("audit")
            .unwrap()
            .insert(seq.to_be_bytes(), &b"{"[..])
            .unwrap();
    }
    db.flush().unwrap();
}

fn ids(runs: &[opsbot_commands::run::Run]) -> Vec<u64> {
    runs.iter().map(|run| run.id.get()).collect()
}

fn page(n: u32) -> Page {
    Page::parse(&n.to_string()).unwrap()
}

fn a_store_with_a_damaged_old_run_opens_and_lists_the_newest_pages(place: Place) {
    drop(history(&place));
    damage_the_oldest(&place);
    let store = place.open().unwrap();

    let first = store.recent_runs(T0, Page::FIRST, 20).unwrap();
    assert_eq!(ids(&first.items), (42..=61).rev().collect::<Vec<_>>());
    assert!(first.more);
    let third = store.recent_runs(T0, page(3), 20).unwrap();
    assert_eq!(ids(&third.items), (2..=21).rev().collect::<Vec<_>>());
    assert!(third.more, "r-1 is still there, on page 4");
    // The page that holds it is where the damage shows, naming the run.
    assert!(matches!(
        store.recent_runs(T0, page(4), 20),
        Err(StoreError::Corrupt { key, .. } | StoreError::CorruptRow { key, .. }) if key == "r-1"
    ));
    // Finished before `since`: not listed, not read; the unfinished run always is.
    let recent = store
        .recent_runs(T0 + Duration::days(1), Page::FIRST, 20)
        .unwrap();
    assert_eq!(ids(&recent.items), [61]);
    assert!(!recent.more);
    assert_eq!(ids(&store.unfinished_runs().unwrap()), [61]);
    assert_eq!(
        store.suggested_run_ids(3).unwrap(),
        [RunId::new(61), RunId::new(60), RunId::new(59)]
    );
}

fn audit_pages_are_newest_first_and_narrowed_by_time_and_run(place: Place) {
    drop(history(&place));
    damage_the_oldest(&place);
    let store = place.open().unwrap();

    // The stamped entries are older than the `RunRequested` ones (stamped now).
    let since_t0 = |run| AuditQuery {
        since: Some(T0),
        run,
    };
    let until = |listing: &opsbot_state::Listing<AuditEvent>| -> Vec<OffsetDateTime> {
        listing.items.iter().map(|e| e.at).collect()
    };
    let first = store.audit_page(since_t0(None), Page::FIRST, 10).unwrap();
    assert!(first.more);
    assert_eq!(first.items.len(), 10);
    assert!(
        first.items.windows(2).all(|w| w[0].at >= w[1].at),
        "newest first"
    );
    let of_run = store
        .audit_page(since_t0(Some(RunId::new(30))), Page::FIRST, 10)
        .unwrap();
    assert_eq!(
        of_run.items.len(),
        2,
        "its RunRequested and its stamped entry"
    );
    assert!(!of_run.more);
    let later = |run| AuditQuery {
        since: Some(T0 + Duration::minutes(59)),
        run: Some(RunId::new(run)),
    };
    let late = store.audit_page(later(60), Page::FIRST, 10).unwrap();
    assert!(until(&late).contains(&stamped(60).at));
    let early = store.audit_page(later(58), Page::FIRST, 10).unwrap();
    assert_eq!(early.items.len(), 1, "only its RunRequested, stamped now");
    // Paging down to the damaged entries names them.
    let everything = store.audit_page(AuditQuery::ALL, page(13), 10);
    assert!(
        matches!(&everything, Err(StoreError::Corrupt { key, .. } | StoreError::CorruptRow { key, .. }) if key == "#2"),
        "{everything:?}"
    );
}

fn a_run_log_is_read_whole_in_order_and_damage_in_it_is_named(place: Place) {
    let store = place.open().unwrap();
    let run = store.create_run(new_run("logs"), None).unwrap();
    let lines: Vec<String> = (0..100).map(|n| format!("line {n:03}")).collect();
    store.append_run_log(run.id, &lines[..60]).unwrap();
    store.append_run_log(run.id, &lines[60..]).unwrap();
    assert_eq!(store.run_log(run.id).unwrap(), lines);
    assert!(matches!(
        store.run_log(RunId::new(9)),
        Err(StoreError::NotFound { .. })
    ));
    // A damaged line is damage, never a log quietly shorter (PostgreSQL keeps lines as plain
    // text, with nothing to decode).
    drop(store);
    if let Place::Sled(dir) = &place {
        {
            let db = crate::common::raw_open(dir.path()).unwrap();
            let mut key = run.id.get().to_be_bytes().to_vec();
            key.extend(1_u64.to_be_bytes());
            db.open_tree("run_logs")
                .unwrap()
                .insert(key, &b"{"[..])
                .unwrap();
            db.flush().unwrap();
        }
        let store = place.open().unwrap();
        assert!(
            matches!(store.run_log(run.id), Err(StoreError::Corrupt { .. })),
            "{:?}",
            store.run_log(run.id)
        );
    }
}

crate::backends!(
    a_store_with_a_damaged_old_run_opens_and_lists_the_newest_pages,
    audit_pages_are_newest_first_and_narrowed_by_time_and_run,
    a_run_log_is_read_whole_in_order_and_damage_in_it_is_named,
);
