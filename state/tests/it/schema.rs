//! The store's layout: a run's plan is written once, apart from its state, and a store written
//! by an opsbot that kept them together is moved to this layout when it opens.

use crate::common::{T0, alice, finished_run, new_run};
use opsbot_commands::name::RunId;
use opsbot_commands::run::{Run, StepState};

fn envelope<T: serde::Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({"v": 1, "data": value})).unwrap()
}

#[test]
fn a_store_that_kept_plans_inside_runs_is_moved_to_the_new_layout_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let running: Run = new_run("logs")(RunId::new(1));
    let finished: Run = finished_run("other")(RunId::new(2));
    {
        // What the previous opsbot wrote: schema 1, each run whole in one record.
        let db = crate::common::raw_open(dir.path()).unwrap();
        let meta = db.open_tree("meta").unwrap();
        meta.insert("schema", envelope(&1_u32)).unwrap();
        meta.insert("next_run_id", envelope(&3_u64)).unwrap();
        let runs = db.open_tree("runs").unwrap();
        for run in [&running, &finished] {
            runs.insert(run.id.get().to_be_bytes(), envelope(run))
                .unwrap();
        }
        db.open_tree("locks")
            .unwrap()
            .insert("logs", envelope(&RunId::new(1)))
            .unwrap();
        db.flush().unwrap();
    }
    let store = crate::common::open(dir.path()).unwrap();
    assert_eq!(store.run(RunId::new(1)).unwrap().as_ref(), Some(&running));
    assert_eq!(store.run(RunId::new(2)).unwrap().as_ref(), Some(&finished));
    assert_eq!(store.unfinished_runs().unwrap(), vec![running.clone()]);
    drop(store);
    let db = crate::common::raw_open(dir.path()).unwrap();
    let record = db
        .open_tree("runs")
        .unwrap()
        .get(1_u64.to_be_bytes())
        .unwrap()
        .unwrap();
    let record: serde_json::Value = serde_json::from_slice(&record).unwrap();
    assert!(record["data"].get("plan").is_none(), "{record}");
    assert!(
        db.open_tree("plans")
            .unwrap()
            .contains_key(2_u64.to_be_bytes())
            .unwrap()
    );
    let schema = db
        .open_tree("meta")
        .unwrap()
        .get("schema")
        .unwrap()
        .unwrap();
    assert_eq!(&schema[..], br#"{"v":1,"data":3}"#);
    drop(db);
    // And it opens again as it is now.
    let store = crate::common::open(dir.path()).unwrap();
    assert_eq!(store.runs().unwrap().len(), 2);
}

#[test]
fn a_transition_rewrites_the_runs_state_never_its_plan() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::common::open(dir.path()).unwrap();
    let big = new_run("logs");
    let run = store
        .create_run(
            |id| {
                let mut run = big(id);
                // A plan as long as a large prune's: thousands of names in its notes.
                let plan = crate::common::plan(
                    run.plan().request().clone(),
                    run.plan().cluster_steps().to_vec(),
                    (0..5000).map(|n| format!("flog-{n:05}")).collect(),
                );
                run.replan(std::sync::Arc::new(plan));
                run
            },
            Some(&crate::common::speaking(alice())),
        )
        .unwrap();
    drop(store);
    let sizes = |dir: &std::path::Path| {
        let db = crate::common::raw_open(dir).unwrap();
        let key = run.id.get().to_be_bytes();
        let plan = db.open_tree("plans").unwrap().get(key).unwrap().unwrap();
        let record = db.open_tree("runs").unwrap().get(key).unwrap().unwrap();
        (plan.to_vec(), record.len())
    };
    let (plan_before, record_before) = sizes(dir.path());
    assert!(plan_before.len() > 50_000, "{}", plan_before.len());
    assert!(record_before < 4_000, "{record_before}");
    let store = crate::common::open(dir.path()).unwrap();
    for step in 0..5 {
        store
            .update_run(run.id, None, |run| {
                run.steps_mut()[step] = StepState::done(T0, "ok");
                Ok::<_, ()>(vec![])
            })
            .unwrap();
    }
    drop(store);
    let (plan_after, record_after) = sizes(dir.path());
    assert_eq!(plan_after, plan_before, "the plan is written once");
    assert!(record_after < 4_000, "{record_after}");
}

/// A move to the new layout cut short (the bot killed half-way) is finished on the next open:
/// a record already moved is left as it is.
#[test]
fn a_move_to_the_new_layout_cut_short_is_finished_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let moved: Run = finished_run("other")(RunId::new(1));
    let running: Run = new_run("logs")(RunId::new(2));
    {
        let db = crate::common::raw_open(dir.path()).unwrap();
        let meta = db.open_tree("meta").unwrap();
        meta.insert("schema", envelope(&1_u32)).unwrap();
        meta.insert("next_run_id", envelope(&3_u64)).unwrap();
        let runs = db.open_tree("runs").unwrap();
        // r-1 was moved before the bot died: its plan apart, its record without it.
        let mut record = serde_json::to_value(&moved).unwrap();
        let plan = record.as_object_mut().unwrap().remove("plan").unwrap();
        db.open_tree("plans")
            .unwrap()
            .insert(1_u64.to_be_bytes(), envelope(&plan))
            .unwrap();
        runs.insert(1_u64.to_be_bytes(), envelope(&record)).unwrap();
        runs.insert(2_u64.to_be_bytes(), envelope(&running))
            .unwrap();
        db.open_tree("locks")
            .unwrap()
            .insert("logs", envelope(&RunId::new(2)))
            .unwrap();
        db.flush().unwrap();
    }
    let store = crate::common::open(dir.path()).unwrap();
    assert_eq!(store.runs().unwrap(), vec![running.clone(), moved]);
    assert_eq!(store.unfinished_runs().unwrap(), vec![running]);
}

/// Schema 2 had no time index: opening files every run and audit entry in it, so that the
/// listings that read only the index show the whole history an operator had.
#[test]
fn a_store_without_the_time_index_is_indexed_on_open() {
    use opsbot_commands::audit::{AuditEvent, AuditKind};
    use opsbot_commands::page::Page;
    use opsbot_state::AuditQuery;

    let dir = tempfile::tempdir().unwrap();
    let finished: Run = finished_run("other")(RunId::new(1));
    let running: Run = new_run("logs")(RunId::new(2));
    let event = AuditEvent {
        at: T0,
        run: Some(RunId::new(1)),
        actor: None,
        event: AuditKind::CancelRequested,
    };
    {
        let db = crate::common::raw_open(dir.path()).unwrap();
        let meta = db.open_tree("meta").unwrap();
        meta.insert("schema", envelope(&2_u32)).unwrap();
        meta.insert("next_run_id", envelope(&3_u64)).unwrap();
        meta.insert("next_audit_seq", envelope(&2_u64)).unwrap();
        for run in [&finished, &running] {
            let mut record = serde_json::to_value(run).unwrap();
            let plan = record.as_object_mut().unwrap().remove("plan").unwrap();
            let key = run.id.get().to_be_bytes();
            db.open_tree("plans")
                .unwrap()
                .insert(key, envelope(&plan))
                .unwrap();
            db.open_tree("runs")
                .unwrap()
                .insert(key, envelope(&record))
                .unwrap();
        }
        db.open_tree("locks")
            .unwrap()
            .insert("logs", envelope(&RunId::new(2)))
            .unwrap();
        db.open_tree("audit")
            .unwrap()
            .insert(1_u64.to_be_bytes(), envelope(&event))
            .unwrap();
        db.flush().unwrap();
    }
    let store = crate::common::open(dir.path()).unwrap();
    assert_eq!(store.unfinished_runs().unwrap(), vec![running.clone()]);
    let listed = store.recent_runs(T0, Page::FIRST, 10).unwrap();
    assert_eq!(listed.items, vec![running, finished]);
    let query = AuditQuery {
        since: Some(T0),
        run: Some(RunId::new(1)),
    };
    let audit = store.audit_page(query, Page::FIRST, 10).unwrap();
    assert_eq!(audit.items, vec![event]);
}
