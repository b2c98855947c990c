//! Listings that race a write: the write that moves or removes a record between a listing's
//! read of its index key and its read of the record, driven here one step at a time.

use opsbot_commands::audit::{AuditEvent, AuditKind};
use opsbot_commands::name::RunId;
use opsbot_commands::page::Page;
use opsbot_commands::run::Outcome;
use time::OffsetDateTime;
use time::macros::datetime;

use crate::AuditQuery;
use crate::error::StoreError;
use crate::sled::Sled;
use crate::sled::compact::tests::run;
use crate::sled::keys::{self, INDEX};

const LONG_AGO: OffsetDateTime = datetime!(2024-01-01 00:00 UTC);

fn store() -> (tempfile::TempDir, Sled) {
    let dir = tempfile::tempdir().unwrap();
    let store = Sled::open(&dir.path().join("store")).unwrap();
    (dir, store)
}

fn is_damaged_index(result: Result<impl std::fmt::Debug, StoreError>) -> bool {
    matches!(result, Err(StoreError::Corrupt { tree: INDEX, .. }))
}

#[test]
fn a_run_that_finishes_after_its_unfinished_key_was_read_is_skipped() {
    let (_dir, store) = store();
    store.create(|id| run(id, "c1", None), None, None).unwrap();
    let [(key, id)] = <[_; 1]>::try_from(store.unfinished_ids().unwrap()).unwrap();
    // The run finishes between the listing's two reads.
    store
        .update_run(id, None, |run| {
            run.finish(Outcome::Succeeded, LONG_AGO);
            Ok::<_, ()>(vec![])
        })
        .unwrap();
    assert!(store.unfinished_run(&key, id).unwrap().is_none());
    assert!(store.unfinished_runs().unwrap().is_empty());
}

#[test]
fn an_unfinished_key_left_on_a_finished_run_is_a_damaged_index_and_listed_once() {
    let (_dir, store) = store();
    let id = store
        .create(|id| run(id, "c1", Some(LONG_AGO)), None, None)
        .unwrap()
        .id;
    // What a listing sees when the run finishes between its read of the unfinished keys and
    // its read of the finished ones: the run under both.
    store.index.insert(keys::unfinished_key(id), &[]).unwrap();
    assert!(is_damaged_index(store.unfinished_runs()));
    let listed = store.recent_runs(LONG_AGO, Page::FIRST, 10).unwrap();
    let ids: Vec<RunId> = listed.items.iter().map(|run| run.id).collect();
    assert_eq!(ids, [id]);
    assert!(!listed.more);
}

#[test]
fn an_audit_entry_compacted_after_its_key_was_read_is_skipped() {
    let (_dir, store) = store();
    let event = |at| AuditEvent {
        at,
        run: None,
        actor: None,
        event: AuditKind::CancelRequested,
    };
    store.append_audit(&event(LONG_AGO)).unwrap();
    store.append_audit(&event(LONG_AGO)).unwrap();
    let keys: Vec<_> = store
        .audit_keys(AuditQuery::ALL)
        .collect::<Result<_, _>>()
        .unwrap();
    let cutoff = datetime!(2025-01-01 00:00 UTC);
    assert_eq!(store.compact(cutoff, 10).unwrap().audit, 2);
    assert!(store.indexed_audit(&keys[0]).unwrap().is_none());
    // A key still there whose entry is not: the index is damaged, and says so.
    store.index.insert(&keys[1], &[]).unwrap();
    assert!(is_damaged_index(store.indexed_audit(&keys[1])));
    assert!(is_damaged_index(store.audit_page(
        AuditQuery::ALL,
        Page::FIRST,
        10
    )));
}

#[test]
fn a_run_compacted_after_its_key_was_read_is_skipped_and_a_dangling_key_is_damage() {
    let (_dir, store) = store();
    let id = store
        .create(|id| run(id, "c1", Some(LONG_AGO)), None, None)
        .unwrap()
        .id;
    let finished = keys::finished_key(LONG_AGO, id);
    assert_eq!(
        store
            .compact(datetime!(2025-01-01 00:00 UTC), 10)
            .unwrap()
            .runs,
        1
    );
    assert!(store.indexed_run(&finished, id).unwrap().is_none());
    store.index.insert(&finished, &[]).unwrap();
    assert!(is_damaged_index(store.indexed_run(&finished, id)));
}
