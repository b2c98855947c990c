//! Runs: persistence across reopen, dense ids, cluster locks, atomic transitions.

use std::sync::Arc;
use std::thread;

use crate::common::{Place, T0, alice, bob, cluster, finished_run, new_run};
use opsbot_commands::approval::ApprovalGrant;
use opsbot_commands::audit::AuditKind;
use opsbot_commands::name::RunId;
use opsbot_commands::run::{CancelRequest, MessageId, Outcome, RunState, StepState};
use opsbot_commands::target::Target;
use opsbot_state::{StoreError, UpdateError};
use time::macros::datetime;

fn every_step_state() -> Vec<StepState> {
    let at = datetime!(2025-03-04 03:05:06.000000007 +02:00);
    vec![
        StepState::Pending,
        StepState::Started { at },
        StepState::AwaitingOperator {
            since: at,
            prompt: "replace the disk of 10.0.0.3, then /run done".into(),
        },
        StepState::Done {
            at,
            note: "node left — \"quoted\" ünicode".into(),
            deleted: Some(3),
        },
        StepState::Failed {
            at,
            error: "HTTP 503 from 10.0.0.2".into(),
            unchanged: false,
        },
    ]
}

fn every_run_state() -> Vec<RunState> {
    vec![
        RunState::AwaitingApproval {
            expires_at: datetime!(2025-03-04 03:30:00 UTC),
        },
        RunState::Running,
    ]
    .into_iter()
    .chain(
        [
            Outcome::Succeeded,
            Outcome::Failed {
                error: "step 4 failed".into(),
            },
            Outcome::Cancelled {
                by: bob(),
                note: "allocation left disabled".into(),
            },
            Outcome::Rejected {
                by: bob(),
                reason: "not tonight".into(),
            },
            Outcome::Withdrawn {
                by: alice(),
                reason: Some("wrong cluster".into()),
            },
            Outcome::Expired,
        ]
        .map(|outcome| RunState::Finished { at: T0, outcome }),
    )
    .collect()
}

fn a_run_survives_close_and_reopen_exactly(place: Place) {
    let mut created = Vec::new();
    {
        let store = place.open().unwrap();
        for (i, state) in every_run_state().into_iter().enumerate() {
            let awaiting = matches!(state, RunState::AwaitingApproval { .. });
            // A plan waits for approval only when it deletes something, and only until it has it.
            let build: Box<dyn FnOnce(RunId) -> opsbot_commands::run::Run> = if awaiting {
                Box::new(crate::common::new_deletion_run(&format!("c{i}")))
            } else {
                Box::new(new_run(&format!("c{i}")))
            };
            let run = store
                .create_run(
                    |id| {
                        let mut run = build(id);
                        for (slot, step) in run.steps_mut().iter_mut().zip(every_step_state()) {
                            *slot = step;
                        }
                        run.approval = (!awaiting).then(|| ApprovalGrant {
                            by: bob(),
                            at: T0,
                            digest: run.digest.clone(),
                        });
                        run.cancel = Some(CancelRequest { by: bob(), at: T0 });
                        run.progress_message = Some(MessageId("998877".into()));
                        run.state = state;
                        run
                    },
                    Some(&crate::common::speaking(alice())),
                )
                .unwrap();
            created.push(run);
        }
    }
    let store = place.open().unwrap();
    for run in &created {
        assert_eq!(store.run(run.id).unwrap().as_ref(), Some(run));
    }
    let mut newest_first = created.clone();
    newest_first.reverse();
    assert_eq!(store.runs().unwrap(), newest_first);
    let unfinished: Vec<_> = created
        .iter()
        .filter(|r| !r.state.is_finished())
        .cloned()
        .collect();
    assert_eq!(unfinished.len(), 2);
    assert_eq!(store.unfinished_runs().unwrap(), unfinished);
    assert_eq!(store.run(RunId::new(99)).unwrap(), None);
}

fn ids_are_dense_and_increase_across_reopen(place: Place) {
    let mut ids = Vec::new();
    for _ in 0..3 {
        let store = place.open().unwrap();
        for _ in 0..4 {
            ids.push(
                store
                    .create_run(finished_run("logs"), None)
                    .unwrap()
                    .id
                    .get(),
            );
        }
        // A refused creation must not use up an id.
        store.create_run(new_run("busy"), None).unwrap();
        ids.push(ids.len() as u64 + 1);
        assert!(matches!(
            store.create_run(new_run("busy"), None),
            Err(StoreError::Locked { .. })
        ));
        store
            .update_run(RunId::new(ids.len() as u64), None, |run| {
                run.finish(Outcome::Succeeded, T0);
                Ok::<_, ()>(vec![])
            })
            .unwrap();
    }
    assert_eq!(ids, (1..=15).collect::<Vec<_>>());
}

fn a_second_unfinished_run_on_a_cluster_is_refused_naming_the_holder(place: Place) {
    let store = place.open().unwrap();
    let first = store
        .create_run(new_run("logs"), Some(&crate::common::speaking(alice())))
        .unwrap();
    let audit_before = store.audit().unwrap();

    let refused = store
        .create_run(new_run("logs"), Some(&crate::common::speaking(bob())))
        .unwrap_err();
    match &refused {
        StoreError::Locked { target, holder } => {
            assert_eq!(target, &Target::Cluster(cluster("logs")));
            assert_eq!(*holder, first.id);
        }
        other => panic!("expected Locked, got {other:?}"),
    }
    assert_eq!(
        refused.to_string(),
        "cluster `logs` is busy with run r-1; wait for it or /run cancel id:r-1"
    );
    assert_eq!(store.runs().unwrap(), vec![first.clone()]);
    assert_eq!(store.audit().unwrap(), audit_before);
    assert_eq!(
        store
            .lock_holder(&Target::Cluster(cluster("logs")))
            .unwrap(),
        Some(first.id)
    );
}

fn a_finished_run_releases_its_cluster(place: Place) {
    let store = place.open().unwrap();
    let first = store.create_run(new_run("logs"), None).unwrap();
    store
        .update_run(first.id, Some(&crate::common::speaking(bob())), |run| {
            run.finish(
                Outcome::Cancelled {
                    by: bob(),
                    note: "nothing started".into(),
                },
                T0,
            );
            Ok::<_, ()>(vec![AuditKind::RunFinished {
                state: "cancelled".into(),
            }])
        })
        .unwrap();
    assert_eq!(
        store
            .lock_holder(&Target::Cluster(cluster("logs")))
            .unwrap(),
        None
    );
    let second = store.create_run(new_run("logs"), None).unwrap();
    assert_eq!(
        store
            .lock_holder(&Target::Cluster(cluster("logs")))
            .unwrap(),
        Some(second.id)
    );
    // A finished run cannot come back to life while another run holds its cluster.
    let revived = store.update_run(first.id, None, |run| {
        run.state = RunState::Running;
        Ok::<_, ()>(vec![])
    });
    assert!(matches!(
        revived,
        Err(UpdateError::Store(StoreError::Locked { holder, .. })) if holder == second.id
    ));
}

fn runs_on_different_clusters_do_not_block_each_other(place: Place) {
    let store = place.open().unwrap();
    let logs = store.create_run(new_run("logs"), None).unwrap();
    let metrics = store.create_run(new_run("metrics"), None).unwrap();
    assert_eq!(
        store
            .lock_holder(&Target::Cluster(cluster("logs")))
            .unwrap(),
        Some(logs.id)
    );
    assert_eq!(
        store
            .lock_holder(&Target::Cluster(cluster("metrics")))
            .unwrap(),
        Some(metrics.id)
    );
    assert_eq!(
        store
            .lock_holder(&Target::Cluster(cluster("other")))
            .unwrap(),
        None
    );
    assert_eq!(store.unfinished_runs().unwrap(), vec![logs, metrics]);
}

fn update_run_writes_its_audit_events_with_the_transition(place: Place) {
    let store = place.open().unwrap();
    let run = store
        .create_run(new_run("logs"), Some(&crate::common::speaking(alice())))
        .unwrap();
    let updated = store
        .update_run(run.id, Some(&crate::common::speaking(bob())), |run| {
            run.steps_mut()[0] = StepState::Started { at: T0 };
            Ok::<_, ()>(vec![AuditKind::StepStarted {
                step: 0,
                action: "disable allocation".into(),
            }])
        })
        .unwrap();
    assert_eq!(updated.steps()[0], StepState::Started { at: T0 });
    assert_eq!(store.run(run.id).unwrap(), Some(updated));

    let audit = store.audit().unwrap();
    assert_eq!(audit.len(), 2);
    assert_eq!(
        audit[0].event,
        AuditKind::RunRequested {
            command: "/cluster restart cluster:logs".into(),
            digest: serde_json::to_value(&run.digest)
                .unwrap()
                .as_str()
                .unwrap()
                .into(),
        }
    );
    assert_eq!(audit[0].actor, Some(crate::common::speaking(alice())));
    assert_eq!(audit[1].run, Some(run.id));
    assert_eq!(audit[1].actor, Some(crate::common::speaking(bob())));
    assert!(matches!(
        audit[1].event,
        AuditKind::StepStarted { step: 0, .. }
    ));
}

fn a_refused_change_writes_nothing(place: Place) {
    let store = place.open().unwrap();
    let run = store.create_run(new_run("logs"), None).unwrap();
    let audit = store.audit().unwrap();
    let refused = store.update_run(run.id, None, |run| {
        run.finish(Outcome::Succeeded, T0);
        run.steps_mut().fill(StepState::Pending);
        Err("the approver is the requester")
    });
    assert!(matches!(
        refused,
        Err(UpdateError::Refused("the approver is the requester"))
    ));
    assert_eq!(store.run(run.id).unwrap(), Some(run.clone()));
    assert_eq!(store.audit().unwrap(), audit);
    assert_eq!(
        store
            .lock_holder(&Target::Cluster(cluster("logs")))
            .unwrap(),
        Some(run.id)
    );
}

fn updating_a_missing_run_says_not_found(place: Place) {
    let store = place.open().unwrap();
    let missing = store.update_run(RunId::new(7), None, |_| Ok::<_, ()>(vec![]));
    match missing {
        Err(UpdateError::Store(error @ StoreError::NotFound { .. })) => {
            assert_eq!(
                error.to_string(),
                "there is no run r-7; /run list shows the runs there are"
            );
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
}

fn concurrent_updates_of_one_run_lose_no_change(place: Place) {
    const THREADS: usize = 8;
    const EACH: usize = 12;
    let store = Arc::new(place.open().unwrap());
    let id = store.create_run(new_run("logs"), None).unwrap().id;
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let store = Arc::clone(&store);
            thread::spawn(move || {
                for i in 0..EACH {
                    store
                        .update_run(id, None, |run| {
                            run.captured.insert(format!("t{t}-{i}"), String::new());
                            Ok::<_, ()>(vec![AuditKind::OperatorConfirmed { step: t * 100 + i }])
                        })
                        .unwrap();
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let run = store.run(id).unwrap().unwrap();
    let notes: Vec<String> = run.captured.keys().cloned().collect();
    let mut expected: Vec<_> = (0..THREADS)
        .flat_map(|t| (0..EACH).map(move |i| format!("t{t}-{i}")))
        .collect();
    expected.sort();
    assert_eq!(notes, expected);
    // One audit event per applied change, none duplicated by a retry.
    let audit = store.audit().unwrap();
    assert_eq!(audit.len(), 1 + THREADS * EACH);
    let mut confirmed: Vec<_> = audit
        .iter()
        .filter_map(|e| match e.event {
            AuditKind::OperatorConfirmed { step } => Some(step),
            _ => None,
        })
        .collect();
    confirmed.sort_unstable();
    confirmed.dedup();
    assert_eq!(confirmed.len(), THREADS * EACH);
}

/// Closing waits for a write under way (its change was visible, its flush not done) and then
/// refuses every write: a bot that stops keeps what a reader may have been shown.
#[test]
fn closing_a_sled_store_waits_for_the_write_under_way_and_refuses_later_ones() {
    let store = Arc::new(Place::sled().open().unwrap());
    let id = store.create_run(new_run("logs"), None).unwrap().id;
    let (inside, entered) = std::sync::mpsc::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let writer = {
        let store = Arc::clone(&store);
        thread::spawn(move || {
            store.update_run(id, None, |run| {
                let _ = inside.send(());
                let _ = released.recv();
                run.captured.insert("written".into(), String::new());
                Ok::<_, ()>(vec![])
            })
        })
    };
    entered.recv().unwrap();
    let (closing, about_to_close) = std::sync::mpsc::channel();
    let closer = {
        let store = Arc::clone(&store);
        // Once closed, the write that was under way is there.
        thread::spawn(move || {
            let _ = closing.send(());
            store.close();
            store
                .run(id)
                .unwrap()
                .unwrap()
                .captured
                .contains_key("written")
        })
    };
    about_to_close.recv().unwrap();
    release.send(()).unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        closer.join().unwrap(),
        "closed before the write under way ended"
    );
    let refused = store.update_run(id, None, |run| {
        run.captured.insert("after".into(), String::new());
        Ok::<_, ()>(vec![])
    });
    assert!(
        matches!(refused, Err(UpdateError::Store(StoreError::ShuttingDown))),
        "{refused:?}"
    );
    assert!(store.create_run(new_run("other"), None).is_err());
}

#[test]
fn a_store_in_use_is_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = crate::common::store_in(dir.path());
    let _first = opsbot_state::Store::open(&path).unwrap();
    let second = opsbot_state::Store::open(&path).unwrap_err();
    assert!(
        second.to_string().starts_with(&format!(
            "the store at {} is in use by another opsbot process",
            path.display()
        )),
        "{second}"
    );
}

/// A listing reads every run; the live runs' plans, read at every step of their run, stay
/// shared however long the history is (finished runs' plans are not kept).
fn listing_a_long_history_keeps_the_live_runs_plans_shared(place: Place) {
    let store = place.open().unwrap();
    let live = store.create_run(new_run("live"), None).unwrap();
    for _ in 0..300 {
        store.create_run(finished_run("old"), None).unwrap();
    }
    assert_eq!(store.runs().unwrap().len(), 301);
    let read = store.run(live.id).unwrap().unwrap();
    assert!(
        Arc::ptr_eq(read.shared_plan(), live.shared_plan()),
        "the live plan was decoded again"
    );
    let resumed = store.unfinished_runs().unwrap();
    assert_eq!(resumed.len(), 1);
    assert!(Arc::ptr_eq(resumed[0].shared_plan(), live.shared_plan()));
    // A finished run's plan is decoded when read, not kept.
    let old = RunId::new(2);
    let first = store.run(old).unwrap().unwrap();
    let second = store.run(old).unwrap().unwrap();
    assert_eq!(first, second);
    assert!(!Arc::ptr_eq(first.shared_plan(), second.shared_plan()));
    drop(store);

    // Opening reads every run once, and keeps only the live runs' plans.
    let store = place.open().unwrap();
    let first = store.run(live.id).unwrap().unwrap();
    assert_eq!(first, live);
    assert!(Arc::ptr_eq(
        first.shared_plan(),
        store.run(live.id).unwrap().unwrap().shared_plan()
    ));
    let old_one = store.run(old).unwrap().unwrap();
    assert!(!Arc::ptr_eq(
        old_one.shared_plan(),
        store.run(old).unwrap().unwrap().shared_plan()
    ));

    // Once it finishes, its plan is not kept either.
    let finished = store
        .update_run(live.id, None, |run| {
            run.finish(Outcome::Succeeded, T0);
            Ok::<_, ()>(vec![])
        })
        .unwrap();
    let read = store.run(live.id).unwrap().unwrap();
    assert_eq!(read, finished);
    assert!(!Arc::ptr_eq(
        read.shared_plan(),
        store.run(live.id).unwrap().unwrap().shared_plan()
    ));
}

/// Whether a lock's holder still holds it depends on the holder's plan (its target). That plan
/// is read inside the transaction that takes the lock when it is not cached (more live runs
/// than the cache keeps), and must be read through the transaction: sled blocks every other
/// read until a transaction ends, so a plain read there would hang the bot for good.
#[test]
fn a_busy_cluster_is_refused_when_its_holders_plan_is_not_cached() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::common::open(dir.path()).unwrap();
    let first = store.create_run(new_run("c0"), None).unwrap();
    // More live runs than plans are cached: r-1's plan is pushed out.
    for n in 1..300 {
        store.create_run(new_run(&format!("c{n}")), None).unwrap();
    }
    let refused = store.create_run(new_run("c0"), None).unwrap_err();
    assert!(
        matches!(&refused, StoreError::Locked { holder, .. } if *holder == first.id),
        "{refused:?}"
    );
    // A transition of a run whose lock a repair by hand gave to another live run reads the
    // holder's plan in its transaction too.
    drop(store);
    let db = crate::common::raw_open(dir.path()).unwrap();
    let locks = db.open_tree("locks").unwrap();
    let r1 = locks.get("c0").unwrap().unwrap();
    locks.insert("c1", r1).unwrap();
    db.flush().unwrap();
    drop((locks, db));
    // Opening caches the live runs' plans, as many as are kept: not r-1's, the oldest.
    let store = crate::common::open(dir.path()).unwrap();
    // r-1 holds `c0` only: its lock on `c1` counts as free, and r-2 takes it back.
    let second = RunId::new(2);
    store
        .update_run(second, None, |run| {
            run.steps_mut()[0] = StepState::Started { at: T0 };
            Ok::<_, ()>(vec![])
        })
        .unwrap();
    assert_eq!(
        store.lock_holder(&Target::Cluster(cluster("c1"))).unwrap(),
        Some(second)
    );
}

crate::backends!(
    a_run_survives_close_and_reopen_exactly,
    ids_are_dense_and_increase_across_reopen,
    a_second_unfinished_run_on_a_cluster_is_refused_naming_the_holder,
    a_finished_run_releases_its_cluster,
    runs_on_different_clusters_do_not_block_each_other,
    update_run_writes_its_audit_events_with_the_transition,
    a_refused_change_writes_nothing,
    updating_a_missing_run_says_not_found,
    concurrent_updates_of_one_run_lose_no_change,
    listing_a_long_history_keeps_the_live_runs_plans_shared,
);
