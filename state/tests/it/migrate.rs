//! `opsbot store migrate`: a store copied from sled to PostgreSQL and back reads the same on
//! all three, a non-empty destination is refused untouched, and a damaged source record stops
//! the copy with the error a read of it gives.

use crate::common::{T0, alice, bob, pg_config, speaking, sql};
use opsbot_commands::audit::{AuditEvent, AuditKind};
use opsbot_commands::maintenance::MaintenanceNotice;
use opsbot_commands::name::{Notice, RunId};
use opsbot_commands::page::Page;
use opsbot_commands::retention::RetentionDays;
use opsbot_commands::run::{ChannelId, Outcome, Run, StepState};
use opsbot_commands::schedule::bounds::Bounds;
use opsbot_commands::schedule::{
    FireOutcome, FireRecord, Pause, ScheduleName, StandingApproval, StandingId, StandingState,
};
use opsbot_commands::target::Target;
use opsbot_state::{AuditQuery, Entry, Store, StoreError, copy};
use time::macros::datetime;

fn schedule(name: &str) -> ScheduleName {
    ScheduleName::parse(name).unwrap()
}

fn standing(id: StandingId) -> StandingApproval {
    StandingApproval {
        id,
        schedule: schedule("nightly-prune"),
        digest: crate::common::restart_plan("logs").digest(),
        command: "/indices prune cluster:logs".to_owned(),
        bounds: Bounds {
            max_indices: 10,
            min_age_days: RetentionDays::parse("30").unwrap(),
            prefix: None,
            max_total_bytes: None,
        },
        asked_by: alice(),
        asked_at: datetime!(2026-11-27 09:00 UTC),
        state: StandingState::Asked {
            expires_at: datetime!(2026-11-28 09:00 UTC),
        },
    }
}

/// A night's history: finished and unfinished runs (two holding locks), a booked run, a
/// scheduled run, audit entries of every kind of write, run logs, fires, a pause, standing
/// approvals, a maintenance notice and chat deliveries.
fn history(store: &Store) {
    let bob = speaking(bob());
    store
        .create_run(crate::common::finished_run("logs"), None)
        .unwrap();
    let running = store
        .create_run(crate::common::new_run("logs"), Some(&speaking(alice())))
        .unwrap();
    store
        .update_run(running.id, Some(&bob), |run| {
            run.steps_mut()[0] = StepState::Started { at: T0 };
            Ok::<_, ()>(vec![AuditKind::StepStarted {
                step: 0,
                action: "disable allocation".to_owned(),
            }])
        })
        .unwrap();
    store
        .create_run(crate::common::new_deletion_run("audit"), None)
        .unwrap();
    let booked = |id| {
        Run::booked(
            id,
            crate::common::restart_plan("search"),
            alice(),
            ChannelId("ops".into()),
            T0,
            time::Duration::minutes(30),
            T0 + time::Duration::days(2),
        )
    };
    store.create_run(booked, None).unwrap();
    let nightly = schedule("nightly-prune");
    let fired = store
        .create_fired_run(
            crate::common::new_run_at("metrics", T0),
            &nightly,
            datetime!(2026-11-28 01:00 UTC),
        )
        .unwrap();
    store
        .update_run(fired.id, None, |run| {
            run.finish(Outcome::Succeeded, T0 + time::Duration::minutes(7));
            Ok::<_, ()>(vec![])
        })
        .unwrap();
    let weekly = FireRecord {
        at: datetime!(2026-11-27 02:00 UTC),
        outcome: FireOutcome::Missed,
    };
    store.record_fire(&schedule("weekly"), &weekly).unwrap();
    let lines: Vec<String> = (1..=30).map(|n| format!("node {n}: stopped ✓")).collect();
    store.append_run_log(running.id, &lines).unwrap();
    store.append_run_log(running.id, &["done"]).unwrap();
    store.append_run_log(fired.id, &["nothing"]).unwrap();
    store
        .append_audit(&AuditEvent {
            at: T0,
            run: Some(running.id),
            actor: Some(bob.clone()),
            event: AuditKind::StepStarted {
                step: 1,
                action: "flush".to_owned(),
            },
        })
        .unwrap();
    let pause = Pause {
        by: crate::common::bob(),
        at: datetime!(2026-11-27 10:00 UTC),
    };
    store.set_pause(&nightly, Some(&pause), &bob).unwrap();
    store
        .set_pause(&schedule("weekly"), Some(&pause), &bob)
        .unwrap();
    store.set_pause(&schedule("weekly"), None, &bob).unwrap();
    let asked = store
        .create_standing(&bob, |id| Ok::<_, ()>(standing(id)))
        .unwrap();
    store
        .update_standing(asked.id, &bob, |standing| {
            standing.state = StandingState::Voided {
                at: datetime!(2026-11-27 11:00 UTC),
            };
            Ok::<_, ()>(Some("voided".to_owned()))
        })
        .unwrap();
    store
        .create_standing(&bob, |id| Ok::<_, ()>(standing(id)))
        .unwrap();
    let notice = MaintenanceNotice {
        text: Notice::parse("logging cluster maintenance until 04:00 UTC").unwrap(),
        by: alice(),
        since: T0,
    };
    store.set_maintenance_notice(Some(&notice)).unwrap();
    assert!(store.first_delivery("interaction-1").unwrap());
    assert!(store.first_delivery("interaction-2").unwrap());
}

/// Every public read of the history, rendered: equal strings, equal answers.
fn reads(store: &Store) -> Vec<String> {
    let first = Page::parse("1").unwrap();
    let mut reads = vec![
        format!("{:?}", store.runs().unwrap()),
        format!("{:?}", store.audit().unwrap()),
        format!("{:?}", store.unfinished_runs().unwrap()),
        format!("{:?}", store.recent_runs(T0, first, 3).unwrap()),
        format!("{:?}", store.recent_runs(T0, first.next(), 3).unwrap()),
        format!("{:?}", store.suggested_run_ids(10).unwrap()),
        format!(
            "{:?}",
            store.audit_page(AuditQuery::ALL, first.next(), 4).unwrap()
        ),
        format!(
            "{:?}",
            store
                .audit_events(AuditQuery {
                    since: Some(T0),
                    run: Some(RunId::new(2)),
                })
                .collect::<Result<Vec<_>, _>>()
                .unwrap()
        ),
        format!("{:?}", store.maintenance_notice().unwrap()),
        format!("{:?}", store.standing_approvals().unwrap()),
        format!("{:?}", store.delivered("interaction-1").unwrap()),
        format!("{:?}", store.delivered("interaction-3").unwrap()),
    ];
    for cluster in ["logs", "audit", "search", "metrics"] {
        let target = Target::Cluster(crate::common::cluster(cluster));
        reads.push(format!(
            "{cluster}: {:?}",
            store.lock_holder(&target).unwrap()
        ));
    }
    for name in ["nightly-prune", "weekly", "never"] {
        let name = schedule(name);
        reads.push(format!("{:?}", store.last_fire(&name).unwrap()));
        reads.push(format!("{:?}", store.pause(&name).unwrap()));
    }
    for id in 1..=6 {
        let id = RunId::new(id);
        reads.push(format!("{:?}", store.run(id).unwrap()));
        reads.push(format!("{:?}", store.was_created(id).unwrap()));
        reads.push(format!("{:?}", store.run_log(id).ok()));
    }
    reads
}

#[test]
fn a_store_copied_to_postgres_and_back_reads_the_same_on_all_three() {
    let dir = tempfile::tempdir().unwrap();
    let sled = crate::common::open(dir.path()).unwrap();
    history(&sled);
    let pg = Store::open_postgres(&pg_config()).unwrap();
    let copied = copy(&sled, &pg).unwrap();
    assert_eq!(
        copied.to_string(),
        "runs: 5 (3 unfinished, holding 2 locks); audit entries: 15; run logs: 2 (32 lines); \
         chat deliveries: 2; schedule fires: 2; pauses: 1; standing approvals: 2; maintenance \
         notice: yes; next run: r-6"
    );
    let back = crate::common::open(&dir.path().join("back")).unwrap();
    assert_eq!(copy(&pg, &back).unwrap(), copied);

    let expected = reads(&sled);
    for (name, copy) in [("PostgreSQL", &pg), ("sled again", &back)] {
        for (n, (read, source)) in reads(copy).iter().zip(&expected).enumerate() {
            assert!(
                read == source,
                "read {n} on {name}: {read}\nsource: {source}"
            );
        }
    }
    // Ids go on where the source left off, and the copies are written to as the source is.
    for store in [&sled, &pg, &back] {
        let run = store
            .create_run(crate::common::new_run("ops"), None)
            .unwrap();
        assert_eq!(run.id, RunId::new(6), "{}", store.describe());
        let created = store.create_standing(&speaking(bob()), |id| Ok::<_, ()>(standing(id)));
        assert_eq!(created.unwrap().id, StandingId::new(3));
        let taken = store.create_run(crate::common::new_run("logs"), None);
        assert!(
            matches!(taken, Err(StoreError::Locked { holder, .. }) if holder == RunId::new(2)),
            "{taken:?}"
        );
    }
    // (Audit entries written now are stamped now: compared by number, not content.)
    let after = |store: &Store| {
        let audit = store.audit().unwrap().len();
        (
            format!("{:?}", store.runs().unwrap()),
            store.standing_approvals().unwrap(),
            audit,
        )
    };
    assert!(after(&pg) == after(&sled), "PostgreSQL after writes");
    assert!(after(&back) == after(&sled), "sled after writes");
    // A copy reopened (a restart) is checked and opens.
    drop(back);
    crate::common::open(&dir.path().join("back")).unwrap();
}

#[test]
fn a_destination_that_holds_anything_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let source = crate::common::open(dir.path()).unwrap();
    history(&source);
    let taken = crate::common::open(&dir.path().join("taken")).unwrap();
    taken
        .create_run(crate::common::finished_run("ops"), None)
        .unwrap();
    let before: Vec<Entry> = taken.export().collect::<Result<_, _>>().unwrap();
    let refused = copy(&source, &taken);
    assert!(
        matches!(&refused, Err(StoreError::NotEmpty { found, .. }) if found.contains("counters")),
        "{refused:?}"
    );
    let after: Vec<Entry> = taken.export().collect::<Result<_, _>>().unwrap();
    assert_eq!(after, before);

    // A notice is enough to refuse: nothing is merged.
    let pg = Store::open_postgres(&pg_config()).unwrap();
    let notice = MaintenanceNotice {
        text: Notice::parse("upgrading").unwrap(),
        by: alice(),
        since: T0,
    };
    pg.set_maintenance_notice(Some(&notice)).unwrap();
    let refused = copy(&source, &pg).unwrap_err();
    assert!(
        refused.to_string().contains("holds the maintenance notice"),
        "{refused}"
    );
    assert_eq!(pg.runs().unwrap(), []);
    assert_eq!(pg.maintenance_notice().unwrap(), Some(notice));
}

#[test]
fn a_damaged_sled_record_stops_the_copy_with_the_error_a_read_gives() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::common::open(dir.path()).unwrap();
    history(&store);
    drop(store);
    // A finished run (not checked at opening) damaged by hand.
    let db = crate::common::raw_open(dir.path()).unwrap();
    let runs = db.open_tree("runs").unwrap();
    runs.insert(1_u64.to_be_bytes(), &b"{\"v\":1,\"data\":\"x\"}"[..])
        .unwrap();
    db.flush().unwrap();
    drop((runs, db));
    let store = crate::common::open(dir.path()).unwrap();
    let read = store.run(RunId::new(1)).unwrap_err().to_string();
    let pg = Store::open_postgres(&pg_config()).unwrap();
    let stopped = copy(&store, &pg).unwrap_err();
    assert!(matches!(stopped, StoreError::Corrupt { .. }), "{stopped:?}");
    assert_eq!(stopped.to_string(), read);
    assert_eq!(
        pg.runs().unwrap(),
        [],
        "nothing of the damaged store was copied"
    );
}

#[test]
fn a_damaged_postgres_row_stops_the_copy_with_the_error_a_read_gives() {
    let config = pg_config();
    let store = Store::open_postgres(&config).unwrap();
    history(&store);
    sql(
        &config,
        "UPDATE audit SET event = '{\"v\":1,\"data\":7}' WHERE seq = 3",
    );
    let read = store.audit().unwrap_err().to_string();
    let dir = tempfile::tempdir().unwrap();
    let sled = crate::common::open(dir.path()).unwrap();
    let stopped = copy(&store, &sled).unwrap_err();
    assert!(
        matches!(stopped, StoreError::CorruptRow { .. }),
        "{stopped:?}"
    );
    assert_eq!(stopped.to_string(), read);
}

#[test]
fn a_long_history_is_copied_across_pages_and_batches() {
    let dir = tempfile::tempdir().unwrap();
    let sled = crate::common::open(dir.path()).unwrap();
    // More runs and audit entries than PostgreSQL's export reads per page (500) and than an
    // import writes per transaction (500).
    for n in 0..520 {
        let at = T0 + time::Duration::minutes(n);
        sled.create_run(crate::common::finished_run_at("logs", at), None)
            .unwrap();
    }
    for n in 0..600_u64 {
        let event = AuditEvent {
            at: T0 + time::Duration::seconds(n.cast_signed()),
            run: Some(RunId::new(n % 520 + 1)),
            actor: None,
            event: AuditKind::StepStarted {
                step: 0,
                action: format!("step {n}"),
            },
        };
        sled.append_audit(&event).unwrap();
    }
    let pg = Store::open_postgres(&pg_config()).unwrap();
    let copied = copy(&sled, &pg).unwrap();
    assert_eq!((copied.runs, copied.audit_entries), (520, 1120));
    let back = crate::common::open(&dir.path().join("back")).unwrap();
    assert_eq!(copy(&pg, &back).unwrap(), copied);
    let expected: Vec<Entry> = sled.export().collect::<Result<_, _>>().unwrap();
    let on_pg: Vec<Entry> = pg.export().collect::<Result<_, _>>().unwrap();
    assert!(on_pg == expected, "PostgreSQL's export, read across pages");
    assert_eq!(pg.audit().unwrap(), sled.audit().unwrap());
    assert_eq!(back.runs().unwrap(), sled.runs().unwrap());
}

#[test]
fn a_copy_that_does_not_read_back_as_its_source_is_an_error_naming_the_first_difference() {
    let config = pg_config();
    let store = Store::open_postgres(&config).unwrap();
    history(&store);
    // A finished run filed a day after it finished (a repair by hand gone wrong): its record
    // decodes, but the copy files it where its record says, and so reads back otherwise.
    sql(
        &config,
        "UPDATE runs SET finished_at = finished_at + interval '1 day' WHERE id = 1",
    );
    let dir = tempfile::tempdir().unwrap();
    let sled = crate::common::open(dir.path()).unwrap();
    let differs = copy(&store, &sled).unwrap_err();
    assert!(
        matches!(&differs, StoreError::CopyDiffers { detail, .. } if detail == "run r-1 differs"),
        "{differs:?}"
    );
    assert!(
        differs.to_string().contains("do not use the copy"),
        "{differs}"
    );
}
