//! A store the bot cannot resume from stops it at start-up with a clear error, never a panic;
//! a damaged finished run (history, not read at start-up) is a clear error when it is read.

use std::path::Path;

use crate::common::{T0, cluster, finished_run, new_run};
use opsbot_commands::name::RunId;
use opsbot_commands::run::{Outcome, RunState};
use opsbot_commands::target::Target;
use opsbot_state::StoreError;

/// A store with three runs (r-2 finished), closed again.
fn store_with_three_runs(dir: &Path) -> Result<(), StoreError> {
    let store = crate::common::open(dir)?;
    store.create_run(new_run("a"), None)?;
    store.create_run(finished_run("b"), None)?;
    store.create_run(new_run("c"), None)?;
    Ok(())
}

/// Writes `value` under `key` of `tree` with raw sled, as a disk fault or a bad repair would.
fn poke(dir: &Path, tree: &str, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
    let db = crate::common::raw_open(dir)?;
    db.open_tree(tree)?.insert(key, value)?;
    db.flush()?;
    Ok(())
}

fn r(n: u64) -> [u8; 8] {
    n.to_be_bytes()
}

#[test]
fn garbage_in_a_run_record_makes_open_fail_naming_the_run() {
    let dir = tempfile::tempdir().unwrap();
    store_with_three_runs(dir.path()).unwrap();
    poke(dir.path(), "runs", &r(3), b"\x00\xffnot json at all").unwrap();

    let error = crate::common::open(dir.path()).unwrap_err();
    match &error {
        StoreError::Corrupt { tree, key, .. } => assert_eq!((*tree, key.as_str()), ("runs", "r-3")),
        other => panic!("expected Corrupt, got {other:?}"),
    }
    let text = error.to_string();
    let expected = format!(
        "the store at {} is damaged: its run record r-3 is corrupt (",
        crate::common::store_in(dir.path()).display()
    );
    assert!(text.starts_with(&expected), "{text}");
    assert!(
        text.ends_with(
            "; restore the last backup with `opsbot store restore --config FILE BACKUP` (the \
             damaged store is kept aside)"
        ),
        "{text}"
    );
    assert!(!text.contains("check the disk"), "{text}");
}

#[test]
fn a_run_record_of_the_wrong_shape_is_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    store_with_three_runs(dir.path()).unwrap();
    poke(
        dir.path(),
        "runs",
        &r(3),
        br#"{"v":1,"data":{"id":3,"state":"running"}}"#,
    )
    .unwrap();
    assert!(matches!(
        crate::common::open(dir.path()),
        Err(StoreError::Corrupt { tree: "runs", key, .. }) if key == "r-3"
    ));
}

#[test]
fn a_run_filed_under_another_id_is_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    store_with_three_runs(dir.path()).unwrap();
    let db = crate::common::raw_open(dir.path()).unwrap();
    let runs = db.open_tree("runs").unwrap();
    let r1 = runs.get(r(1)).unwrap().unwrap();
    runs.insert(r(3), r1).unwrap();
    db.flush().unwrap();
    drop((runs, db));
    match crate::common::open(dir.path()) {
        Err(StoreError::Corrupt { key, detail, .. }) => {
            assert_eq!(key, "r-3");
            assert_eq!(detail, "it holds run r-1");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn a_record_from_a_newer_opsbot_gives_newer_version() {
    let dir = tempfile::tempdir().unwrap();
    store_with_three_runs(dir.path()).unwrap();
    poke(
        dir.path(),
        "runs",
        &r(1),
        br#"{"v":99,"data":{"whatever":"shape"}}"#,
    )
    .unwrap();

    let error = crate::common::open(dir.path()).unwrap_err();
    assert!(
        matches!(
            &error,
            StoreError::NewerVersion { tree: "runs", key, found: 99, supported: 1, .. } if key == "r-1"
        ),
        "{error:?}"
    );
    assert!(
        error.to_string().contains(
            "run record r-1 written by a newer opsbot (format 99, this one reads up to 1)"
        ),
        "{error}"
    );
}

#[test]
fn a_newer_schema_gives_newer_version() {
    let dir = tempfile::tempdir().unwrap();
    store_with_three_runs(dir.path()).unwrap();
    poke(dir.path(), "meta", b"schema", br#"{"v":1,"data":4}"#).unwrap();
    assert!(matches!(
        crate::common::open(dir.path()),
        Err(StoreError::NewerVersion {
            tree: "meta",
            found: 4,
            ..
        })
    ));
}

#[test]
fn garbage_in_a_finished_runs_plan_is_an_error_when_read_naming_the_run() {
    let dir = tempfile::tempdir().unwrap();
    store_with_three_runs(dir.path()).unwrap();
    // r-2 is finished: nothing reads its plan until someone lists or shows it.
    poke(dir.path(), "plans", &r(2), b"\x00\xffnot json at all").unwrap();

    let error = refused_when_read(dir.path());
    assert!(
        matches!(&error, StoreError::Corrupt { tree: "plans", key, .. } if key == "r-2"),
        "{error:?}"
    );
    let text = error.to_string();
    let expected = format!(
        "the store at {} is damaged: its run plan r-2 is corrupt (",
        crate::common::store_in(dir.path()).display()
    );
    assert!(text.starts_with(&expected), "{text}");
}

#[test]
fn a_finished_runs_plan_of_the_wrong_shape_is_an_error_when_read() {
    let dir = tempfile::tempdir().unwrap();
    store_with_three_runs(dir.path()).unwrap();
    poke(
        dir.path(),
        "plans",
        &r(2),
        br#"{"v":1,"data":{"steps":"none"}}"#,
    )
    .unwrap();
    assert!(matches!(
        refused_when_read(dir.path()),
        StoreError::Corrupt { tree: "plans", key, .. } if key == "r-2"
    ));
}

#[test]
fn a_finished_run_without_its_plan_is_an_error_when_read() {
    let dir = tempfile::tempdir().unwrap();
    store_with_three_runs(dir.path()).unwrap();
    let db = crate::common::raw_open(dir.path()).unwrap();
    db.open_tree("plans").unwrap().remove(r(2)).unwrap();
    db.flush().unwrap();
    drop(db);
    assert_eq!(
        corrupt(refused_when_read(dir.path())),
        ("runs", "r-2".to_owned(), "its plan is missing".to_owned())
    );
}

/// A finished run is checked whole when it is read, as an unfinished one is at open.
#[test]
fn a_finished_run_that_contradicts_its_plan_is_an_error_when_read() {
    let dir = tempfile::tempdir().unwrap();
    store_with_three_runs(dir.path()).unwrap();
    let db = crate::common::raw_open(dir.path()).unwrap();
    let runs = db.open_tree("runs").unwrap();
    let bytes = runs.get(r(2)).unwrap().unwrap();
    let mut envelope: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    envelope["data"]["steps"].as_array_mut().unwrap().pop();
    runs.insert(r(2), serde_json::to_vec(&envelope).unwrap())
        .unwrap();
    db.flush().unwrap();
    drop((runs, db));
    assert_eq!(
        corrupt(refused_when_read(dir.path())),
        (
            "runs",
            "r-2".to_owned(),
            "it has 24 step states for 25 planned steps".to_owned()
        )
    );
}

/// A plan left without a run at or past the run counter (only a repair by hand can do that)
/// would make the next `create_run` refuse the id it takes: refuse the store at open instead.
#[test]
fn a_plan_numbered_past_the_run_counter_makes_open_fail() {
    let dir = tempfile::tempdir().unwrap();
    store_with_three_runs(dir.path()).unwrap();
    let db = crate::common::raw_open(dir.path()).unwrap();
    let plans = db.open_tree("plans").unwrap();
    let plan = plans.get(r(1)).unwrap().unwrap();
    plans.insert(r(4), plan).unwrap();
    db.flush().unwrap();
    drop((plans, db));
    assert_eq!(
        refused_at_open(dir.path()),
        (
            "meta",
            "next_run_id".to_owned(),
            "it is 4, not past the last run plan r-4".to_owned()
        )
    );
}

/// The tree, key and detail of the `Corrupt` error opening the store at `dir` gives.
fn refused_at_open(dir: &std::path::Path) -> (&'static str, String, String) {
    match crate::common::open(dir) {
        Err(error) => corrupt(error),
        Ok(store) => panic!("expected Corrupt, opened {store:?}"),
    }
}

/// The store at `dir` opens (its finished runs are not read at open), and reading r-2, the
/// finished run, fails; `opsbot store check` fails the same way.
fn refused_when_read(dir: &std::path::Path) -> StoreError {
    let store = match crate::common::open(dir) {
        Ok(store) => store,
        Err(error) => panic!("a damaged finished run must not stop open: {error}"),
    };
    let error = match store.run(RunId::new(2)) {
        Err(error) => error,
        Ok(run) => panic!("r-2 is damaged, yet read: {run:?}"),
    };
    drop(store);
    match crate::common::check(dir) {
        Err(checked) => assert_eq!(checked.to_string(), error.to_string()),
        Ok(summary) => panic!("r-2 is damaged, yet the check passed: {summary}"),
    }
    error
}

/// An index key left pointing at nothing, and a run missing from the index: opening reads
/// neither, a check finds both.
#[test]
fn check_finds_an_index_that_disagrees_with_the_records() {
    let dir = tempfile::tempdir().unwrap();
    store_with_three_runs(dir.path()).unwrap();
    let db = crate::common::raw_open(dir.path()).unwrap();
    let audit = db.open_tree("audit").unwrap();
    let first = audit.remove(r(1)).unwrap().unwrap();
    db.flush().unwrap();
    drop(audit);
    drop(db);
    let error = crate::common::check(dir.path()).unwrap_err();
    assert!(
        matches!(
            &error,
            StoreError::Corrupt { tree: "index", key, detail, .. }
                if key == "audit #1" && detail == "there is no audit entry #1"
        ),
        "{error:?}"
    );
    let db = crate::common::raw_open(dir.path()).unwrap();
    db.open_tree("audit").unwrap().insert(r(1), first).unwrap();
    let index = db.open_tree("index").unwrap();
    let unfinished = [&b"u"[..], &r(3)].concat();
    assert!(index.remove(unfinished).unwrap().is_some());
    db.flush().unwrap();
    drop(index);
    drop(db);
    assert_eq!(
        corrupt(crate::common::check(dir.path()).unwrap_err()),
        (
            "runs",
            "r-3".to_owned(),
            "the index lacks its unfinished r-3".to_owned()
        )
    );
}

fn corrupt(error: StoreError) -> (&'static str, String, String) {
    match error {
        StoreError::Corrupt {
            tree, key, detail, ..
        } => (tree, key, detail),
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn a_corrupt_lock_makes_open_fail() {
    let dir = tempfile::tempdir().unwrap();
    store_with_three_runs(dir.path()).unwrap();
    poke(dir.path(), "locks", b"a", b"r-1").unwrap();
    assert!(matches!(
        crate::common::open(dir.path()),
        Err(StoreError::Corrupt { tree: "locks", key, .. }) if key == "`a`"
    ));
}

#[test]
fn a_run_counter_set_back_by_hand_makes_open_fail() {
    let dir = tempfile::tempdir().unwrap();
    store_with_three_runs(dir.path()).unwrap();
    poke(dir.path(), "meta", b"next_run_id", br#"{"v":1,"data":2}"#).unwrap();
    assert_eq!(
        refused_at_open(dir.path()),
        (
            "meta",
            "next_run_id".to_owned(),
            "it is 2, not past the last run record r-3".to_owned()
        )
    );
}

#[test]
fn an_audit_counter_set_back_by_hand_makes_open_fail() {
    let dir = tempfile::tempdir().unwrap();
    store_with_three_runs(dir.path()).unwrap();
    poke(
        dir.path(),
        "meta",
        b"next_audit_seq",
        br#"{"v":1,"data":1}"#,
    )
    .unwrap();
    assert!(matches!(
        crate::common::open(dir.path()),
        Err(StoreError::Corrupt { tree: "meta", key, .. }) if key == "next_audit_seq"
    ));
}

#[test]
fn a_corrupt_audit_entry_is_an_error_when_read() {
    let dir = tempfile::tempdir().unwrap();
    store_with_three_runs(dir.path()).unwrap();
    poke(dir.path(), "audit", &r(2), b"{").unwrap();
    let store = crate::common::open(dir.path()).unwrap();
    assert!(matches!(
        store.audit(),
        Err(StoreError::Corrupt { tree: "audit", key, .. }) if key == "#2"
    ));
}

#[test]
fn records_without_a_schema_version_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    poke(dir.path(), "runs", &r(1), b"{}").unwrap();
    assert!(matches!(
        crate::common::open(dir.path()),
        Err(StoreError::Corrupt { tree: "meta", key, .. }) if key == "schema"
    ));
}

#[test]
fn a_lock_left_on_a_finished_run_counts_as_free() {
    let dir = tempfile::tempdir().unwrap();
    store_with_three_runs(dir.path()).unwrap();
    // A repair by hand pointed `b`'s lock at r-2, which is finished.
    poke(dir.path(), "locks", b"b", br#"{"v":1,"data":2}"#).unwrap();
    let store = crate::common::open(dir.path()).unwrap();
    assert_eq!(
        store.lock_holder(&Target::Cluster(cluster("b"))).unwrap(),
        None
    );
    let run = store.create_run(new_run("b"), None).unwrap();
    assert_eq!(
        store.lock_holder(&Target::Cluster(cluster("b"))).unwrap(),
        Some(run.id)
    );
}

#[test]
fn a_lock_left_on_a_missing_run_counts_as_free() {
    let dir = tempfile::tempdir().unwrap();
    store_with_three_runs(dir.path()).unwrap();
    poke(dir.path(), "locks", b"d", br#"{"v":1,"data":42}"#).unwrap();
    let store = crate::common::open(dir.path()).unwrap();
    assert_eq!(
        store.lock_holder(&Target::Cluster(cluster("d"))).unwrap(),
        None
    );
    let run = store.create_run(new_run("d"), None).unwrap();
    store
        .update_run(run.id, None, |run| {
            run.finish(Outcome::Succeeded, T0);
            Ok::<_, ()>(vec![])
        })
        .unwrap();
    assert_eq!(
        store.lock_holder(&Target::Cluster(cluster("d"))).unwrap(),
        None
    );
    assert_eq!(store.run(RunId::new(42)).unwrap(), None);
}

/// A stored run that decodes but contradicts itself: a run task would index its steps by its
/// plan's, act on a step of another target, or on an approval it does not have.
#[test]
fn a_run_record_that_contradicts_itself_is_refused_naming_the_run_and_why() {
    type Breaks = fn(&mut serde_json::Value);
    // Each: the refusal, the tree of the broken record (a run's state, or its plan), the break.
    let cases: [(&str, &str, Breaks); 4] = [
        (
            "it has 24 step states for 25 planned steps",
            "runs",
            |run| {
                run["steps"].as_array_mut().unwrap().pop();
            },
        ),
        (
            "its steps are not all a search cluster's steps: unknown variant `verify_released`",
            "plans",
            |plan| {
                plan["steps"][0] = serde_json::json!({"safe": {
                    "kind": "verify_released",
                    "provider": "8f0d2f4e-3b7a-4c1e-9a55-2a1f0c6b7d10",
                }});
            },
        ),
        ("it is succeeded but has no finish time", "runs", |run| {
            run["state"] = serde_json::json!({"state": "succeeded"});
        }),
        (
            "it awaits approval of a plan that needs none",
            "runs",
            |run| {
                run["state"] = serde_json::json!({"state": "awaiting_approval", "expires_at": "2025-03-04T03:30:00Z"});
            },
        ),
    ];
    for (why, tree, break_it) in cases {
        let dir = tempfile::tempdir().unwrap();
        store_with_three_runs(dir.path()).unwrap();
        let db = crate::common::raw_open(dir.path()).unwrap();
        let records = db.open_tree(tree).unwrap();
        let bytes = records.get(r(3)).unwrap().unwrap();
        let mut envelope: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        break_it(&mut envelope["data"]);
        records
            .insert(r(3), serde_json::to_vec(&envelope).unwrap())
            .unwrap();
        db.flush().unwrap();
        drop(records);
        drop(db);
        // Every run is checked whole when the store opens (r-3 is unfinished); were one let
        // through, reading it must still refuse it.
        let error = match crate::common::open(dir.path()) {
            Err(error) => error,
            Ok(store) => store.run(RunId::new(3)).unwrap_err(),
        };
        assert!(
            matches!(&error, StoreError::Corrupt { key, detail, .. } if key == "r-3" && detail.starts_with(why)),
            "{why}: {error:?}"
        );
    }
}

/// A destructive step that has begun needs an approval by someone else on record; a record
/// claiming otherwise is refused rather than resumed.
#[test]
fn a_begun_deletion_without_an_approval_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = crate::common::open(dir.path()).unwrap();
        store
            .create_run(crate::common::new_deletion_run("d"), None)
            .unwrap();
        // The store itself never writes such a record.
        let refused = store.update_run(RunId::new(1), None, |run| {
            run.state = RunState::Running;
            run.steps_mut()[0] = opsbot_commands::run::StepState::Started { at: T0 };
            Ok::<_, ()>(vec![])
        });
        assert!(
            matches!(
                refused,
                Err(opsbot_state::UpdateError::Store(
                    StoreError::Unencodable { .. }
                ))
            ),
            "{refused:?}"
        );
    }
    let db = crate::common::raw_open(dir.path()).unwrap();
    let runs = db.open_tree("runs").unwrap();
    let bytes = runs.get(r(1)).unwrap().unwrap();
    let mut envelope: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    envelope["data"]["state"] = serde_json::json!({"state": "running"});
    envelope["data"]["steps"][0] =
        serde_json::json!({"state": "started", "at": "2025-03-04T03:00:00Z"});
    runs.insert(r(1), serde_json::to_vec(&envelope).unwrap())
        .unwrap();
    db.flush().unwrap();
    drop(runs);
    drop(db);
    let error = crate::common::open(dir.path()).unwrap_err().to_string();
    assert!(
        error.contains(
            "run record r-1 is corrupt (destructive step 1 has begun without an approval of this plan by a second person)"
        ),
        "{error}"
    );
}

/// sled's own failures (a damaged log or snapshot) point at the backup, not at the disk alone.
#[test]
fn a_failure_inside_sled_says_the_store_is_damaged_and_how_to_restore() {
    let error = StoreError::Sled(sled::Error::ReportableBug("a torn log".to_owned())).to_string();
    assert!(
        error.starts_with("the store is damaged or its disk refused it ("),
        "{error}"
    );
    assert!(
        error.ends_with(
            "restore the last backup with `opsbot store restore --config FILE BACKUP` (the \
             damaged store is kept aside)"
        ),
        "{error}"
    );
}
