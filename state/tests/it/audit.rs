//! The audit log only grows, in order; run logs keep node control's output per run.

use crate::common::{Place, T0, alice, bob, new_run};
use opsbot_commands::audit::{AuditEvent, AuditKind};
use opsbot_commands::name::RunId;
use opsbot_commands::run::StepState;
use opsbot_state::{RUN_LOG_CAP, StoreError};

fn refusal(reason: &str) -> AuditEvent {
    AuditEvent {
        at: T0,
        run: None,
        actor: Some(crate::common::speaking(bob())),
        event: AuditKind::Refused {
            request: "/approve id:r-1".into(),
            reason: reason.into(),
        },
    }
}

fn the_audit_log_is_append_only_and_ordered(place: Place) {
    let mut seen: Vec<AuditEvent> = Vec::new();
    for round in 0..3 {
        let store = place.open().unwrap();
        let run = store
            .create_run(
                new_run(&format!("c{round}")),
                Some(&crate::common::speaking(alice())),
            )
            .unwrap();
        store
            .append_audit(&refusal(&format!("round {round}")))
            .unwrap();
        store
            .update_run(run.id, None, |run| {
                run.steps_mut()[0] = StepState::Started { at: T0 };
                Ok::<_, ()>(vec![
                    AuditKind::Resumed { step: Some(0) },
                    AuditKind::StepStarted {
                        step: 0,
                        action: "disable allocation".into(),
                    },
                ])
            })
            .unwrap();
        let audit = store.audit().unwrap();
        assert_eq!(audit.len(), seen.len() + 4);
        assert_eq!(audit[..seen.len()], seen[..], "an earlier entry changed");
        let new: Vec<_> = audit[seen.len()..].iter().map(|e| &e.event).collect();
        assert!(matches!(new[0], AuditKind::RunRequested { .. }));
        assert_eq!(new[1], &refusal(&format!("round {round}")).event);
        assert_eq!(new[2], &AuditKind::Resumed { step: Some(0) });
        assert!(matches!(new[3], AuditKind::StepStarted { step: 0, .. }));
        seen = audit;
    }
    let store = place.open().unwrap();
    assert_eq!(store.audit().unwrap(), seen);
}

fn run_logs_keep_lines_per_run_in_order(place: Place) {
    {
        let store = place.open().unwrap();
        let a = store.create_run(new_run("a"), None).unwrap().id;
        let b = store.create_run(new_run("b"), None).unwrap().id;
        for i in 0..12 {
            store.append_run_log(a, &[format!("a line {i}")]).unwrap();
            if i % 3 == 0 {
                store.append_run_log(b, &[format!("b line {i}")]).unwrap();
            }
        }
        assert_eq!(
            store.run_log(b).unwrap(),
            ["b line 0", "b line 3", "b line 6", "b line 9"]
        );
    }
    let store = place.open().unwrap();
    let a = RunId::new(1);
    store.append_run_log(a, &["after reopen"]).unwrap();
    let mut expected: Vec<String> = (0..12).map(|i| format!("a line {i}")).collect();
    expected.push("after reopen".into());
    assert_eq!(store.run_log(a).unwrap(), expected);
}

fn a_run_log_stops_at_its_cap_with_a_note(place: Place) {
    let megabyte = "x".repeat(1 << 20);
    let cap_lines = usize::try_from(RUN_LOG_CAP >> 20).unwrap();
    {
        let store = place.open().unwrap();
        let run = store.create_run(new_run("a"), None).unwrap().id;
        let other = store.create_run(new_run("b"), None).unwrap().id;
        store
            .append_run_log(run, &vec![megabyte.as_str(); cap_lines - 1])
            .unwrap();
        // One line still fits; the next one passes the cap and becomes the note.
        store
            .append_run_log(run, &[megabyte.as_str(), "just past", "after"])
            .unwrap();
        store.append_run_log(other, &["another run's log"]).unwrap();
    }
    let store = place.open().unwrap();
    let run = RunId::new(1);
    // The size is kept with the log: after a restart, nothing more is appended either.
    store.append_run_log(run, &["after a restart"]).unwrap();
    let log = store.run_log(run).unwrap();
    assert_eq!(log.len(), cap_lines + 1);
    assert!(log[..cap_lines].iter().all(|line| *line == megabyte));
    assert_eq!(
        log[cap_lines],
        "── the run log reached its cap of 16 MiB: later output of r-1 is not kept"
    );
    assert_eq!(store.run_log(RunId::new(2)).unwrap(), ["another run's log"]);
}

fn run_logs_of_unknown_runs_are_not_found(place: Place) {
    let store = place.open().unwrap();
    assert!(matches!(
        store.append_run_log(RunId::new(3), &["x"]),
        Err(StoreError::NotFound { run }) if run == RunId::new(3)
    ));
    assert!(matches!(
        store.run_log(RunId::new(3)),
        Err(StoreError::NotFound { .. })
    ));
}

/// An export reads the log a batch at a time (PostgreSQL: 500 entries); each entry once, in
/// order, however many batches, narrowed by time and run as a page is.
fn an_export_reads_every_entry_once_in_order(place: Place) {
    let store = place.open().unwrap();
    let run = store.create_run(new_run("logs"), None).unwrap();
    let entries = 1_100_u32;
    for n in 0..entries {
        let mut event = refusal(&format!("entry {n}"));
        event.at = T0 + time::Duration::seconds(i64::from(n));
        event.run = (n % 2 == 0).then_some(run.id);
        store.append_audit(&event).unwrap();
    }
    let reasons = |query| -> Vec<String> {
        store
            .audit_events(query)
            .map(|event| match event.unwrap().event {
                AuditKind::Refused { reason, .. } => reason,
                other => format!("{other:?}"),
            })
            .collect()
    };
    let all = reasons(opsbot_state::AuditQuery::ALL);
    // The stamped entries are older than the run's `RunRequested` (stamped now).
    assert_eq!(all.len(), entries as usize + 1);
    assert_eq!(all[0], "entry 0");
    assert_eq!(all[1099], "entry 1099");
    let of_run = reasons(opsbot_state::AuditQuery {
        since: Some(T0 + time::Duration::seconds(1000)),
        run: Some(run.id),
    });
    assert_eq!(of_run.len(), 50 + 1);
    assert_eq!(of_run[0], "entry 1000");
    assert!(store.was_created(run.id).unwrap());
    assert!(!store.was_created(RunId::new(2)).unwrap());
}

crate::backends!(
    an_export_reads_every_entry_once_in_order,
    the_audit_log_is_append_only_and_ordered,
    run_logs_keep_lines_per_run_in_order,
    a_run_log_stops_at_its_cap_with_a_note,
    run_logs_of_unknown_runs_are_not_found,
);
